// CheckNumerics and CheckNumericsV2: pass the tensor through, or fail the
// step with INVALID_ARGUMENT "<message> : Tensor had NaN values" (or "Inf",
// "Inf and NaN"; V2 tells -Inf from +Inf), TensorFlow's wording; the
// executor adds the node's name. One pass over the elements, shared out
// over the intra-op pool, each shard OR-ing what it saw into one set of
// flags.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/cpu/array_index_kernels.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

enum : int { kNaN = 1, kPosInf = 2, kNegInf = 4 };

inline float AsFloat(Half h) { return HalfToFloat(h); }
inline float AsFloat(BFloat16 b) { return BFloat16ToFloat(b); }
inline float AsFloat(float f) { return f; }
inline double AsFloat(double d) { return d; }

template <typename T>
int Anomalies(OpKernelContext* c, const T* p, int64_t n) {
  std::atomic<int> seen{0};
  ParallelRange(c, n, 2, [&](int64_t begin, int64_t end) {
    int found = 0;
    for (int64_t i = begin; i < end; ++i) {
      const auto v = AsFloat(p[i]);
      if (!std::isfinite(v)) {
        found |= std::isnan(v) ? kNaN : v > 0 ? kPosInf : kNegInf;
      }
    }
    if (found != 0) seen.fetch_or(found, std::memory_order_relaxed);
  });
  return seen.load();
}

class CheckNumericsOp : public OpKernel {
 public:
  explicit CheckNumericsOp(OpKernelConstruction* c)
      : OpKernel(c), v2_(c->def().op() == "CheckNumericsV2") {
    c->SetStatus(c->GetAttr("message", &message_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    int found = 0;
    switch (x.dtype()) {
      case DT_HALF: found = Anomalies(c, x.data<Half>(), x.NumElements()); break;
      case DT_BFLOAT16: found = Anomalies(c, x.data<BFloat16>(), x.NumElements()); break;
      case DT_FLOAT: found = Anomalies(c, x.data<float>(), x.NumElements()); break;
      case DT_DOUBLE: found = Anomalies(c, x.data<double>(), x.NumElements()); break;
      default:
        c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
            "CheckNumerics: unsupported dtype ", DataTypeString(x.dtype()))));
        return;
    }
    OP_REQUIRES(c, found == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    message_, " : Tensor had ", Describe(found), " values")));
    c->set_output(0, x);
  }

 private:
  std::string Describe(int found) const {
    if (!v2_) {
      const bool inf = found & (kPosInf | kNegInf), nan = found & kNaN;
      return inf && nan ? "Inf and NaN" : inf ? "Inf" : "NaN";
    }
    std::vector<std::string> kinds;
    if (found & kNegInf) kinds.push_back("-Inf");
    if (found & kPosInf) kinds.push_back("+Inf");
    if (found & kNaN) kinds.push_back("NaN");
    if (kinds.size() == 3) return absl::StrCat(kinds[0], ", ", kinds[1], ", and ", kinds[2]);
    return absl::StrJoin(kinds, " and ");
  }

  const bool v2_;
  std::string message_;
};

}  // namespace

void RegisterCheckNumericsKernels(KernelRegistry* r) {
  for (const char* op : {"CheckNumerics", "CheckNumericsV2"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu)
                    .TypeConstraint("T", {DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE}),
                MakeKernel<CheckNumericsOp>);
  }
}

}  // namespace weft
