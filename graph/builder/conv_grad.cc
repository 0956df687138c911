// Gradients of Conv2D, MaxPool and AvgPool through their backprop kernels
// (Conv2DBackpropInput/Filter, MaxPoolGrad, AvgPoolGrad), with the forward
// node's window attrs passed on unchanged.
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"

namespace weft {
namespace {

using grad_internal::CopyAttrs;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

absl::Status Conv2DGrad(const Scope& s, In in, Dx dx) {
  AttrList attrs = CopyAttrs(*in.node, {"strides", "padding", "dilations",
                                        "explicit_paddings", "data_format",
                                        "use_cudnn_on_gpu"});
  const Output &input = in.x[0], &filter = in.x[1], &g = in.dy[0];
  (*dx)[0] = AddNode1(s, "Conv2DBackpropInput", {Shape(s, input), filter, g},
                      attrs);
  (*dx)[1] = AddNode1(s, "Conv2DBackpropFilter", {input, Shape(s, filter), g},
                      attrs);
  return absl::OkStatus();
}

absl::Status MaxPoolGradFn(const Scope& s, In in, Dx dx) {
  AttrList attrs = CopyAttrs(*in.node, {"ksize", "strides", "padding",
                                        "explicit_paddings", "data_format"});
  (*dx)[0] = AddNode1(s, "MaxPoolGrad", {in.x[0], in.y[0], in.dy[0]}, attrs);
  return absl::OkStatus();
}

absl::Status AvgPoolGradFn(const Scope& s, In in, Dx dx) {
  AttrList attrs =
      CopyAttrs(*in.node, {"ksize", "strides", "padding", "data_format"});
  (*dx)[0] = AddNode1(s, "AvgPoolGrad", {Shape(s, in.x[0]), in.dy[0]}, attrs);
  return absl::OkStatus();
}

}  // namespace

void RegisterConvGrads(GradRegistry* r) {
  r->Register("Conv2D", Conv2DGrad);
  r->Register("MaxPool", MaxPoolGradFn);
  r->Register("AvgPool", AvgPoolGradFn);
}

}  // namespace weft
