#include "graph/builder/allreduce.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/builder/scope.h"
#include "runtime/core/status.h"

namespace weft {

AllReduceOptimizer::AllReduceOptimizer(std::unique_ptr<Optimizer> wrapped,
                                       AllReduceOptions options)
    : WrappedOptimizer("AllReduce", std::move(wrapped)),
      options_(std::move(options)) {}

absl::StatusOr<Operation> AllReduceOptimizer::ApplyGradients(
    const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
    const TrainableVariable* global_step) {
  WEFT_RETURN_IF_ERROR(scope.status());
  const AllReduceOptions& o = options_;
  if (global_step == nullptr || !global_step->valid()) {
    return absl::InvalidArgumentError(
        "AllReduceOptimizer needs a global step (its value numbers the "
        "all-reduce of each step)");
  }
  const int g = static_cast<int>(o.group_tasks.size());
  if (g < 1 || o.rank < 0 || o.rank >= g) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AllReduceOptimizer: rank ", o.rank, " is not one of the ", g,
        " tasks of the group"));
  }
  if (grads_and_vars.empty()) {
    return absl::InvalidArgumentError("AllReduceOptimizer: no gradients");
  }
  std::vector<Output> grads;
  const DataType dtype = grads_and_vars[0].var.dtype;
  for (const GradAndVar& gv : grads_and_vars) {
    if (!gv.var.valid() || !gv.grad.valid()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AllReduceOptimizer: variable '", gv.var.name, "' has no gradient"));
    }
    if (gv.var.dtype != dtype || (dtype != DT_FLOAT && dtype != DT_DOUBLE)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AllReduceOptimizer: variable '", gv.var.name, "' is ",
          DataTypeString(gv.var.dtype), "; all-reduce takes float or double "
          "variables of one dtype (the first is ", DataTypeString(dtype), ")"));
    }
    grads.push_back(gv.grad);
  }
  tensorflow::AttrValue tasks;
  for (const std::string& t : o.group_tasks) tasks.mutable_list()->add_s(t);
  const Scope root = scope.WithAbsoluteNameScope("");
  std::vector<Output> means =
      AddNode(root.WithOpName(kAllReduceNode), "_RingAllReduce",
              {global_step->value, Input(grads)},
              {{"group_tasks", tasks},
               {"rank", Attr(int64_t{o.rank})},
               {"chunk_bytes", Attr(o.chunk_bytes)},
               {"final_op", Attr("Mean")}});
  WEFT_RETURN_IF_ERROR(root.status());
  std::vector<GradAndVar> averaged = grads_and_vars;
  for (size_t i = 0; i < averaged.size(); ++i) averaged[i].grad = means[i];
  return wrapped()->ApplyGradients(scope, averaged, global_step);
}

}  // namespace weft
