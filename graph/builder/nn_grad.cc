// Gradients of nn ops: Relu, BiasAdd, Softmax, LogSoftmax, sparse softmax
// cross-entropy.
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/status.h"

namespace weft {
namespace {

using In = const GradInputs&;
using Dx = std::vector<Output>*;

absl::Status ReluGradFn(const Scope& s, In in, Dx dx) {
  (*dx)[0] = ReluGrad(s, in.dy[0], in.x[0]);
  return absl::OkStatus();
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

absl::Status SparseXentGrad(const Scope& s, In in, Dx dx) {
  if (in.dy[1].valid()) {
    return absl::UnimplementedError(
        "a gradient flowing into the backprop output of "
        "SparseSoftmaxCrossEntropyWithLogits is not supported");
  }
  // d loss_i / d logits_ij = backprop_ij; labels get none.
  (*dx)[0] = Mul(s, ExpandDims(s, in.dy[0], Const(s, -1)), in.y[1]);
  return absl::OkStatus();
}

}  // namespace

void RegisterNnGrads(GradRegistry* r) {
  r->Register("Relu", ReluGradFn);
  r->Register("BiasAdd", BiasAddGradFn);
  r->Register("Softmax", SoftmaxGrad);
  r->Register("LogSoftmax", LogSoftmaxGrad);
  r->Register("SparseSoftmaxCrossEntropyWithLogits", SparseXentGrad);
}

}  // namespace weft
