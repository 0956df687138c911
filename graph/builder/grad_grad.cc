// Gradients of the gradient ops themselves (for second derivatives, e.g.
// a gradient penalty): the activation and unary-math *Grad ops and
// BiasAddGrad. (Those of the Conv2D backprops and AvgPoolGrad are in
// conv_grad.cc, StridedSliceGrad's in index_grad.cc.) Each *Grad op is
// linear in its incoming gradient, so that input's gradient is the same op
// applied to the new gradient; the other input's follows from the op's
// formula (written beside each).
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using grad_internal::CopyAttrs;
using grad_internal::ScalarLike;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

// op(dy, arg) with the forward node's attrs: the same *Grad op on g.
Output SameOp(const Scope& s, In in, const Output& dy, const Output& arg) {
  return AddNode1(s, in.node->op(), {dy, arg}, CopyAttrs(*in.node, {"alpha"}));
}

// ReluGrad, Relu6Grad, LeakyReluGrad (gradients, features): piecewise
// constant in the features, which get none.
absl::Status PiecewiseLinearGradGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = SameOp(s, in, in.dy[0], in.x[1]);
  return absl::OkStatus();
}

// EluGrad, SeluGrad (gradients, outputs): where outputs < 0 the result is
// gradients * (outputs + c), so d/d outputs = gradients there, else 0.
absl::Status ExpLinearGradGrad(const Scope& s, In in, Dx dx) {
  const Output &dy = in.x[0], &out = in.x[1], &g = in.dy[0];
  (*dx)[0] = SameOp(s, in, g, out);
  Output negative = Less(s, out, ZerosLike(s, out));
  (*dx)[1] = SelectV2(s, negative, Mul(s, g, dy), ZerosLike(s, g));
  return absl::OkStatus();
}

// SoftplusGrad: dy * sigmoid(f); d/df = dy * s * (1 - s).
absl::Status SoftplusGradGrad(const Scope& s, In in, Dx dx) {
  const Output &dy = in.x[0], &f = in.x[1], &g = in.dy[0];
  (*dx)[0] = SameOp(s, in, g, f);
  Output sig = Sigmoid(s, f);
  Output one = ScalarLike(s, 1.f, g.dtype);
  (*dx)[1] = Mul(s, Mul(s, g, dy), Mul(s, sig, Sub(s, one, sig)));
  return absl::OkStatus();
}

// SoftsignGrad: dy / (1 + |f|)^2; d/df = -2 dy sign(f) / (1 + |f|)^3.
absl::Status SoftsignGradGrad(const Scope& s, In in, Dx dx) {
  const Output &dy = in.x[0], &f = in.x[1], &g = in.dy[0];
  (*dx)[0] = SameOp(s, in, g, f);
  Output denom = AddV2(s, ScalarLike(s, 1.f, g.dtype), Abs(s, f));
  Output cube = Mul(s, Square(s, denom), denom);
  Output num = Mul(s, Mul(s, g, dy), Mul(s, Sign(s, f),
                                           ScalarLike(s, -2.f, g.dtype)));
  (*dx)[1] = RealDiv(s, num, cube);
  return absl::OkStatus();
}

// The unary-math *Grad ops (y, dy), with `dfdy(s, y, dy)` the derivative of
// their result in y.
template <typename F>
GradFn UnaryGradGrad(F dfdy) {
  return [dfdy](const Scope& s, In in, Dx dx) {
    const Output &y = in.x[0], &dy = in.x[1], &g = in.dy[0];
    (*dx)[0] = Mul(s, g, dfdy(s, y, dy));
    (*dx)[1] = AddNode1(s, in.node->op(), {y, g});
    return absl::OkStatus();
  };
}

void RegisterUnaryGradGrads(GradRegistry* r) {
  // TanhGrad: dy (1 - y^2).
  r->Register("TanhGrad", UnaryGradGrad([](const Scope& s, const Output& y,
                                           const Output& dy) {
    return Mul(s, Mul(s, dy, y), ScalarLike(s, -2.f, y.dtype));
  }));
  // SigmoidGrad: dy y (1 - y).
  r->Register("SigmoidGrad", UnaryGradGrad([](const Scope& s, const Output& y,
                                              const Output& dy) {
    Output one = ScalarLike(s, 1.f, y.dtype), two = ScalarLike(s, 2.f, y.dtype);
    return Mul(s, dy, Sub(s, one, Mul(s, two, y)));
  }));
  // SqrtGrad: dy / (2 y).
  r->Register("SqrtGrad", UnaryGradGrad([](const Scope& s, const Output& y,
                                           const Output& dy) {
    return RealDiv(s, Mul(s, dy, ScalarLike(s, -0.5f, y.dtype)), Square(s, y));
  }));
  // RsqrtGrad: -dy y^3 / 2.
  r->Register("RsqrtGrad", UnaryGradGrad([](const Scope& s, const Output& y,
                                            const Output& dy) {
    return Mul(s, Mul(s, dy, Square(s, y)), ScalarLike(s, -1.5f, y.dtype));
  }));
  // ReciprocalGrad: -dy y^2.
  r->Register("ReciprocalGrad", UnaryGradGrad([](const Scope& s,
                                                 const Output& y,
                                                 const Output& dy) {
    return Mul(s, Mul(s, dy, y), ScalarLike(s, -2.f, y.dtype));
  }));
}

// BiasAddGrad sums over all but the channel dim: g broadcast back.
absl::Status BiasAddGradGrad(const Scope& s, In in, Dx dx) {
  std::string format = "NHWC";
  if (HasNodeAttr(*in.node, "data_format")) {
    WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "data_format", &format));
  }
  const Output &x = in.x[0], &g = in.dy[0];
  Output channels = g;
  if (format == "NCHW") {  // [C] -> [1, C, 1, ..., 1]
    Output rest = Fill(s, ExpandDims(s, Sub(s, grad_internal::RankOf(s, x),
                                            Const(s, 2)),
                                     Const(s, 0)),
                       Const(s, 1));
    channels = Reshape(s, g, ConcatV2(s, {Const(s, {1, -1}), rest},
                                      Const(s, 0)));
  }
  (*dx)[0] = AddNode1(s, "BroadcastTo", {channels, Shape(s, x)});
  return absl::OkStatus();
}

}  // namespace

void RegisterGradGrads(GradRegistry* r) {
  for (const char* op : {"ReluGrad", "Relu6Grad", "LeakyReluGrad"}) {
    r->Register(op, PiecewiseLinearGradGrad);
  }
  r->Register("EluGrad", ExpLinearGradGrad);
  r->Register("SeluGrad", ExpLinearGradGrad);
  r->Register("SoftplusGrad", SoftplusGradGrad);
  r->Register("SoftsignGrad", SoftsignGradGrad);
  RegisterUnaryGradGrads(r);
  r->Register("BiasAddGrad", BiasAddGradGrad);
}

}  // namespace weft
