// The activations and losses that training graphs use beyond Relu and the
// sparse softmax loss: Relu6, LeakyRelu, Elu, Selu, Softplus, Softsign and
// their gradients, L2Loss and the dense SoftmaxCrossEntropyWithLogits.
// OpDefs match TensorFlow 2.21's (tests/ops/op_def_compat_test checks).
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// Gradients of activations: output = input 0's shape; the inputs must agree
// where both are known.
absl::Status ActivationGradShape(InferenceContext* c) {
  const PartialShape& g = c->input(0);
  const PartialShape& f = c->input(1);
  if (g.known_rank() && f.known_rank()) {
    bool ok = g.rank() == f.rank();
    for (int i = 0; ok && i < g.rank(); ++i) {
      ok = g.dim(i) < 0 || f.dim(i) < 0 || g.dim(i) == f.dim(i);
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("gradients ", g.DebugString(), " and ", f.DebugString(),
                       " must have the same shape"));
    }
  }
  c->set_output(0, g.known_rank() ? g : f);
  return absl::OkStatus();
}

absl::Status L2LossShape(InferenceContext* c) {
  c->set_output(0, PartialShape({}));
  return absl::OkStatus();
}

// features and labels: [batch, classes] each (labels may broadcast along
// either dim); loss [batch], backprop [batch, classes].
absl::Status SoftmaxXentShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 2));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 2));
  absl::StatusOr<PartialShape> both =
      BroadcastShapes(c->input(0), c->input(1));
  if (!both.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "logits and labels must be broadcastable: logits ",
        c->input(0).DebugString(), ", labels ", c->input(1).DebugString()));
  }
  const int64_t batch = both->known_rank() ? both->dim(0) : -1;
  const int64_t classes = both->known_rank() ? both->dim(1) : -1;
  c->set_output(0, PartialShape({batch}));
  c->set_output(1, PartialShape({batch, classes}));
  return absl::OkStatus();
}

const char kFloatTypes[] = "{half, bfloat16, float, double}";
const char kRelu6Types[] =
    "{float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, "
    "half, uint32, uint64}";

void Activation(OpRegistry* r, const char* name, const char* types) {
  r->Register(OpDefBuilder(name)
                  .Input("features: T")
                  .Output("activations: T")
                  .Attr(absl::StrCat("T: ", types)),
              UnchangedShape);
}

// `second` is "features" or "outputs": what the gradient is computed from.
void ActivationGrad(OpRegistry* r, const char* name, const char* second,
                    const char* types) {
  r->Register(OpDefBuilder(name)
                  .Input("gradients: T")
                  .Input(absl::StrCat(second, ": T"))
                  .Output("backprops: T")
                  .Attr(absl::StrCat("T: ", types)),
              ActivationGradShape);
}

}  // namespace

void RegisterNnActivationOps(OpRegistry* r) {
  Activation(r, "Relu6", kRelu6Types);
  ActivationGrad(r, "Relu6Grad", "features", kRelu6Types);
  for (const char* name : {"Elu", "Selu", "Softplus", "Softsign"}) {
    Activation(r, name, kFloatTypes);
  }
  ActivationGrad(r, "EluGrad", "outputs", kFloatTypes);
  ActivationGrad(r, "SeluGrad", "outputs", kFloatTypes);
  ActivationGrad(r, "SoftplusGrad", "features", kFloatTypes);
  ActivationGrad(r, "SoftsignGrad", "features", kFloatTypes);
  r->Register(OpDefBuilder("LeakyRelu")
                  .Input("features: T")
                  .Output("activations: T")
                  .Attr("alpha: float = 0.2")
                  .Attr(absl::StrCat("T: ", kFloatTypes, " = float")),
              UnchangedShape);
  r->Register(OpDefBuilder("LeakyReluGrad")
                  .Input("gradients: T")
                  .Input("features: T")
                  .Output("backprops: T")
                  .Attr("alpha: float = 0.2")
                  .Attr(absl::StrCat("T: ", kFloatTypes, " = float")),
              ActivationGradShape);
  r->Register(OpDefBuilder("L2Loss")
                  .Input("t: T")
                  .Output("output: T")
                  .Attr(absl::StrCat("T: ", kFloatTypes)),
              L2LossShape);
  r->Register(OpDefBuilder("SoftmaxCrossEntropyWithLogits")
                  .Input("features: T")
                  .Input("labels: T")
                  .Output("loss: T")
                  .Output("backprop: T")
                  .Attr(absl::StrCat("T: ", kFloatTypes)),
              SoftmaxXentShape);
}

}  // namespace weft
