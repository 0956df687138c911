// Gradients of nn ops: activations (through their *Grad kernels), BiasAdd,
// Softmax, LogSoftmax, L2Loss and the softmax cross-entropies.
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using In = const GradInputs&;
using Dx = std::vector<Output>*;

// An activation whose gradient kernel takes (dy, the forward input x) or
// (dy, the forward output y), with the forward node's attrs (alpha).
template <bool kFromOutput>
GradFn ActivationGrad(const char* grad_op) {
  return [grad_op](const Scope& s, In in, Dx dx) {
    const Output& arg = kFromOutput ? in.y[0] : in.x[0];
    (*dx)[0] = AddNode1(s, grad_op, {in.dy[0], arg},
                        grad_internal::CopyAttrs(*in.node, {"alpha"}));
    return absl::OkStatus();
  };
}

absl::Status BiasAddGradFn(const Scope& s, In in, Dx dx) {
  std::string format = "NHWC";
  if (HasNodeAttr(*in.node, "data_format")) {
    WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "data_format", &format));
  }
  (*dx)[0] = in.dy[0];
  (*dx)[1] = AddNode1(s, "BiasAddGrad", {in.dy[0]},
                      {{"data_format", Attr(format)}});
  return absl::OkStatus();
}

absl::Status SoftmaxGrad(const Scope& s, In in, Dx dx) {
  // dx = (g - sum(g * y, -1, keep_dims)) * y
  const Output &y = in.y[0], &g = in.dy[0];
  Output dot = Sum(s, Mul(s, g, y), Const(s, -1), /*keep_dims=*/true);
  (*dx)[0] = Mul(s, Sub(s, g, dot), y);
  return absl::OkStatus();
}

absl::Status LogSoftmaxGrad(const Scope& s, In in, Dx dx) {
  // dx = g - exp(y) * sum(g, -1, keep_dims)
  const Output &y = in.y[0], &g = in.dy[0];
  Output total = Sum(s, g, Const(s, -1), /*keep_dims=*/true);
  (*dx)[0] = Sub(s, g, Mul(s, Exp(s, y), total));
  return absl::OkStatus();
}

absl::Status L2LossGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = Mul(s, in.x[0], in.dy[0]);  // d (sum x^2 / 2) / dx = x
  return absl::OkStatus();
}

// The logits' gradient of a softmax cross-entropy (sparse or dense) with
// outputs loss [batch] and backprop = softmax(logits) - labels: the loss
// gradient scales backprop per row; a gradient `gb` flowing into backprop
// itself goes through softmax's Jacobian.
Output XentLogitsGrad(const Scope& s, In in) {
  Output grad;
  if (in.dy[0].valid()) {
    grad = Mul(s, ExpandDims(s, in.dy[0], Const(s, -1)), in.y[1]);
  }
  if (in.dy[1].valid()) {
    const Output& gb = in.dy[1];
    Output p = Softmax(s, in.x[0]);
    Output dot = Sum(s, Mul(s, gb, p), Const(s, -1), /*keep_dims=*/true);
    Output through = Mul(s, Sub(s, gb, dot), p);
    grad = grad.valid() ? AddV2(s, grad, through) : through;
  }
  return grad;
}

absl::Status SparseXentGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = XentLogitsGrad(s, in);  // integer labels get none
  return absl::OkStatus();
}

// Dense labels: d loss_i / d labels_ij = -log_softmax(logits)_ij, and
// d backprop / d labels = -1.
absl::Status XentGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = XentLogitsGrad(s, in);
  Output grad;
  if (in.dy[0].valid()) {
    grad = Mul(s, ExpandDims(s, in.dy[0], Const(s, -1)),
               Neg(s, LogSoftmax(s, in.x[0])));
  }
  if (in.dy[1].valid()) {
    grad = grad.valid() ? Sub(s, grad, in.dy[1]) : Neg(s, in.dy[1]);
  }
  (*dx)[1] = grad;
  return absl::OkStatus();
}

}  // namespace

void RegisterNnGrads(GradRegistry* r) {
  r->Register("Relu", ActivationGrad<false>("ReluGrad"));
  r->Register("Relu6", ActivationGrad<false>("Relu6Grad"));
  r->Register("LeakyRelu", ActivationGrad<false>("LeakyReluGrad"));
  r->Register("Softplus", ActivationGrad<false>("SoftplusGrad"));
  r->Register("Softsign", ActivationGrad<false>("SoftsignGrad"));
  r->Register("Elu", ActivationGrad<true>("EluGrad"));
  r->Register("Selu", ActivationGrad<true>("SeluGrad"));
  r->Register("BiasAdd", BiasAddGradFn);
  r->Register("Softmax", SoftmaxGrad);
  r->Register("LogSoftmax", LogSoftmaxGrad);
  r->Register("L2Loss", L2LossGrad);
  r->Register("SparseSoftmaxCrossEntropyWithLogits", SparseXentGrad);
  r->Register("SoftmaxCrossEntropyWithLogits", XentGrad);
}

}  // namespace weft
