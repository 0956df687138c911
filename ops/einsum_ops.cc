// Einsum's OpDef (TensorFlow 2.21's) and shape function: the output's
// dimensions are its labels' sizes (equation parsing: einsum_equation.h).
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/einsum_equation.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

absl::Status EinsumShape(InferenceContext* c) {
  std::string equation;
  WEFT_RETURN_IF_ERROR(c->GetAttr("equation", &equation));
  std::vector<int> ranks;
  for (int i = 0; i < c->num_inputs(); ++i) {
    const PartialShape& s = c->input(i);
    if (!s.known_rank() && equation.find("...") != std::string::npos) {
      c->set_output(0, PartialShape::UnknownRank());
      return absl::OkStatus();
    }
    ranks.push_back(s.known_rank() ? s.rank() : -1);
  }
  WEFT_ASSIGN_OR_RETURN(const EinsumEquation eq, ParseEinsumEquation(equation, ranks));
  std::map<int, int64_t> sizes;  // label -> size; -1 unknown
  for (int i = 0; i < c->num_inputs(); ++i) {
    const PartialShape& s = c->input(i);
    for (size_t d = 0; d < eq.inputs[i].size(); ++d) {
      const int label = eq.inputs[i][d];
      const int64_t n = s.known_rank() ? s.dim(static_cast<int>(d)) : -1;
      auto [it, fresh] = sizes.emplace(label, n);
      if (fresh || n < 0 || it->second == n) continue;
      if (it->second < 0) {
        if (label < kEllipsisLabel || n != 1) it->second = n;
      } else if (label >= kEllipsisLabel && (n == 1 || it->second == 1)) {
        it->second = std::max(n, it->second);  // broadcast
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "Einsum equation '", equation, "': dimension ", d, " of input ", i,
            " has size ", n, " but its label's size is ", it->second,
            " elsewhere"));
      }
    }
  }
  std::vector<int64_t> out;
  for (int label : eq.output) out.push_back(sizes.count(label) ? sizes[label] : 1);
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterEinsumOps(OpRegistry* r) {
  r->Register(OpDefBuilder("Einsum")
                  .Input("inputs: N * T")
                  .Output("output: T")
                  .Attr("equation: string")
                  .Attr("N: int >= 1")
                  .Attr("T: type"),
              EinsumShape);
}

}  // namespace weft
