// Gradients of the 3-D pools, LRN and MaxPoolWithArgmax through their
// gradient kernels, the forward node's attrs passed on (Conv3D's family is
// in conv_grad.cc with Conv2D's):
//   MaxPool3D:         MaxPool3DGrad(x, y, dy)
//   AvgPool3D:         AvgPool3DGrad(shape(x), dy); AvgPool3DGrad, linear
//                      in its grad input, gets AvgPool3D(dy) there
//   LRN:               LRNGrad(dy, x, y)
//   MaxPoolWithArgmax: MaxPoolGradWithArgmax(x, dy, argmax); nothing flows
//                      through argmax (integers).
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"

namespace weft {
namespace {

using grad_internal::CopyAttrs;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

AttrList Pool3DAttrs(In in) {
  return CopyAttrs(*in.node, {"ksize", "strides", "padding", "data_format"});
}

absl::Status MaxPool3DGradFn(const Scope& s, In in, Dx dx) {
  (*dx)[0] = AddNode1(s, "MaxPool3DGrad", {in.x[0], in.y[0], in.dy[0]},
                      Pool3DAttrs(in));
  return absl::OkStatus();
}

absl::Status AvgPool3DGradFn(const Scope& s, In in, Dx dx) {
  (*dx)[0] = AddNode1(s, "AvgPool3DGrad", {Shape(s, in.x[0]), in.dy[0]},
                      Pool3DAttrs(in));
  return absl::OkStatus();
}

absl::Status AvgPool3DGradGradFn(const Scope& s, In in, Dx dx) {
  (*dx)[1] = AddNode1(s, "AvgPool3D", {in.dy[0]}, Pool3DAttrs(in));
  return absl::OkStatus();
}

absl::Status LrnGradFn(const Scope& s, In in, Dx dx) {
  (*dx)[0] = AddNode1(s, "LRNGrad", {in.dy[0], in.x[0], in.y[0]},
                      CopyAttrs(*in.node, {"depth_radius", "bias", "alpha", "beta"}));
  return absl::OkStatus();
}

absl::Status MaxPoolWithArgmaxGradFn(const Scope& s, In in, Dx dx) {
  (*dx)[0] = AddNode1(s, "MaxPoolGradWithArgmax", {in.x[0], in.dy[0], in.y[1]},
                      CopyAttrs(*in.node, {"ksize", "strides", "padding",
                                           "include_batch_in_index"}));
  return absl::OkStatus();
}

}  // namespace

void RegisterNn3dGrads(GradRegistry* r) {
  r->Register("MaxPool3D", MaxPool3DGradFn);
  r->Register("AvgPool3D", AvgPool3DGradFn);
  r->Register("AvgPool3DGrad", AvgPool3DGradGradFn);
  r->Register("LRN", LrnGradFn);
  r->Register("MaxPoolWithArgmax", MaxPoolWithArgmaxGradFn);
}

}  // namespace weft
