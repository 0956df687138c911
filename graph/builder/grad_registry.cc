// The gradient registry (grad_registry.h).
#include "graph/builder/grad_registry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace weft {

void GradRegistry::Register(const std::string& op, GradFn fn) {
  fns_[op] = std::move(fn);
}

void GradRegistry::RegisterNoGradient(const std::string& op) {
  fns_[op] = nullptr;
}

absl::Status GradRegistry::LookUp(const std::string& op,
                                  const GradFn** fn) const {
  auto it = fns_.find(op);
  if (it == fns_.end()) {
    return absl::NotFoundError(absl::StrCat("no gradient registered for op '",
                                            op, "'"));
  }
  *fn = it->second ? &it->second : nullptr;
  return absl::OkStatus();
}

std::vector<std::string> GradRegistry::OpNames() const {
  std::vector<std::string> names;
  for (const auto& [name, fn] : fns_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

// segment_grad.cc: Segment{Sum,Mean,Min,Max}, UnsortedSegment{Min,Max},
// SparseSegment*.
void RegisterSegmentGrads(GradRegistry* r);
// Reverse, EnsureShape, DynamicPartition, ... (array_misc_grad.cc).
void RegisterArrayMiscGrads(GradRegistry* r);
// Complex, Real, Imag, Conj, Angle, ComplexAbs, ConjugateTranspose and the
// complex FFTs (complex_grad.cc).
void RegisterComplexGrads(GradRegistry* r);

const GradRegistry& GlobalGradRegistry() {
  static const GradRegistry* registry = [] {
    auto* r = new GradRegistry;
    RegisterArrayGrads(r);
    RegisterIndexGrads(r);
    RegisterSegmentGrads(r);
    RegisterMathGrads(r);
    RegisterMathFuncGrads(r);
    RegisterMatMulGrads(r);
    RegisterReductionGrads(r);
    RegisterNnGrads(r);
    RegisterConvGrads(r);
    RegisterNn3dGrads(r);
    RegisterArrayIndexGrads(r);
    RegisterNormResizeGrads(r);
    RegisterImageGrads(r);
    RegisterLinalgGrads(r);
    RegisterGradGrads(r);
    RegisterControlFlowGrads(r);
    RegisterArrayMiscGrads(r);
    RegisterComplexGrads(r);
    return r;
  }();
  return *registry;
}

}  // namespace weft
