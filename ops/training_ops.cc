// Training ops: optimizer updates of variables, in a ref form (Apply*, the
// variables arrive as refs and `var` is forwarded) and a resource form
// (ResourceApply*, the variables arrive as DT_RESOURCE handles).
//
// Momentum (also its sparse forms, SparseApplyMomentum and
// ResourceSparseApplyMomentum) and Adam are defined here; the other
// optimizers (Adagrad, RMSProp, Ftrl, ...) in optimizer_ops.cc, which
// RegisterTrainingOps calls. OpDefs match TensorFlow 2.21's exactly.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "ops/type_lists.h"
#include "runtime/core/status.h"

namespace weft {
// Checks the inputs named in `same` (by index) have compatible shapes and the
// ones in `scalars` are scalars; for ref ops, output 0 gets var's shape.
// Also the shape function of optimizer_ops.cc's ops.
absl::Status OptimizerApplyShape(InferenceContext* c, const std::vector<int>& same,
                                 const std::vector<int>& scalars, bool resource) {
  for (int i : scalars) {
    if (c->input(i).known_rank() && c->input(i).rank() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", c->node().op(), ":", i, " must be a scalar, got shape ",
          c->input(i).DebugString()));
    }
  }
  if (resource) return absl::OkStatus();
  PartialShape merged = PartialShape::UnknownRank();
  for (int i : same) {
    if (!merged.IsCompatibleWith(c->input(i))) {
      return absl::InvalidArgumentError(absl::StrCat(
          c->node().op(), ": the variable, its slots and the gradient must "
          "have the same shape; got ", merged.DebugString(), " and ",
          c->input(i).DebugString(), " (input ", i, ")"));
    }
    if (!merged.known_rank()) merged = c->input(i);
  }
  if (c->num_outputs() > 0) c->set_output(0, merged);
  return absl::OkStatus();
}

namespace {

absl::Status ApplyShape(InferenceContext* c, std::initializer_list<int> same,
                        std::initializer_list<int> scalars, bool resource) {
  return OptimizerApplyShape(c, same, scalars, resource);
}

}  // namespace

// optimizer_ops.cc: Adagrad, RMSProp, Ftrl, ... (declared here, not in
// registration.h, as a part of this family).
void RegisterOptimizerOps(OpRegistry* r);

void RegisterTrainingOps(OpRegistry* r) {
  const std::string t_attr = absl::StrCat("T: ", kNumberTypes);

  // Momentum: inputs var, accum, lr, grad, momentum.
  r->Register(OpDefBuilder("ApplyMomentum")
                  .Input("var: Ref(T)")
                  .Input("accum: Ref(T)")
                  .Input("lr: T")
                  .Input("grad: T")
                  .Input("momentum: T")
                  .Output("out: Ref(T)")
                  .Attr(t_attr)
                  .Attr("use_locking: bool = false")
                  .Attr("use_nesterov: bool = false"),
              [](InferenceContext* c) {
                return ApplyShape(c, {0, 1, 3}, {2, 4}, false);
              });
  r->Register(OpDefBuilder("ResourceApplyMomentum")
                  .Input("var: resource")
                  .Input("accum: resource")
                  .Input("lr: T")
                  .Input("grad: T")
                  .Input("momentum: T")
                  .Attr(t_attr)
                  .Attr("use_locking: bool = false")
                  .Attr("use_nesterov: bool = false")
                  .SetIsStateful(),
              [](InferenceContext* c) {
                return ApplyShape(c, {}, {2, 4}, true);
              });

  // Sparse momentum: inputs var, accum, lr, grad (rows), indices, momentum.
  r->Register(OpDefBuilder("SparseApplyMomentum")
                  .Input("var: Ref(T)")
                  .Input("accum: Ref(T)")
                  .Input("lr: T")
                  .Input("grad: T")
                  .Input("indices: Tindices")
                  .Input("momentum: T")
                  .Output("out: Ref(T)")
                  .Attr(t_attr)
                  .Attr("Tindices: {int32, int64}")
                  .Attr("use_locking: bool = false")
                  .Attr("use_nesterov: bool = false"),
              [](InferenceContext* c) {
                WEFT_RETURN_IF_ERROR(c->WithRank(4, 1));
                return ApplyShape(c, {0, 1}, {2, 5}, false);
              });
  r->Register(OpDefBuilder("ResourceSparseApplyMomentum")
                  .Input("var: resource")
                  .Input("accum: resource")
                  .Input("lr: T")
                  .Input("grad: T")
                  .Input("indices: Tindices")
                  .Input("momentum: T")
                  .Attr(t_attr)
                  .Attr("Tindices: {int32, int64}")
                  .Attr("use_locking: bool = false")
                  .Attr("use_nesterov: bool = false")
                  .SetIsStateful(),
              [](InferenceContext* c) {
                WEFT_RETURN_IF_ERROR(c->WithRank(4, 1));
                return ApplyShape(c, {}, {2, 5}, true);
              });

  // Adam: inputs var, m, v, beta1_power, beta2_power, lr, beta1, beta2,
  // epsilon, grad.
  r->Register(OpDefBuilder("ApplyAdam")
                  .Input("var: Ref(T)")
                  .Input("m: Ref(T)")
                  .Input("v: Ref(T)")
                  .Input("beta1_power: T")
                  .Input("beta2_power: T")
                  .Input("lr: T")
                  .Input("beta1: T")
                  .Input("beta2: T")
                  .Input("epsilon: T")
                  .Input("grad: T")
                  .Output("out: Ref(T)")
                  .Attr(t_attr)
                  .Attr("use_locking: bool = false")
                  .Attr("use_nesterov: bool = false"),
              [](InferenceContext* c) {
                return ApplyShape(c, {0, 1, 2, 9}, {3, 4, 5, 6, 7, 8}, false);
              });
  r->Register(OpDefBuilder("ResourceApplyAdam")
                  .Input("var: resource")
                  .Input("m: resource")
                  .Input("v: resource")
                  .Input("beta1_power: T")
                  .Input("beta2_power: T")
                  .Input("lr: T")
                  .Input("beta1: T")
                  .Input("beta2: T")
                  .Input("epsilon: T")
                  .Input("grad: T")
                  .Attr(t_attr)
                  .Attr("use_locking: bool = false")
                  .Attr("use_nesterov: bool = false")
                  .SetIsStateful(),
              [](InferenceContext* c) {
                return ApplyShape(c, {}, {3, 4, 5, 6, 7, 8}, true);
              });
  RegisterOptimizerOps(r);
}

}  // namespace weft
