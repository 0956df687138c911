// Gradients of Conv2D, Conv3D, DepthwiseConv2dNative, MaxPool and AvgPool through their backprop kernels
// (the convolutions' BackpropInput/Filter, MaxPoolGrad, AvgPoolGrad), with the forward
// node's window attrs passed on unchanged; and of those backprops (second
// derivatives), which are linear in their tensor inputs (MaxPoolGrad and
// MaxPoolGradGrad are linear in `grad` for a fixed arg max, and each is the
// other's transpose).
#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"

namespace weft {
namespace {

using grad_internal::CopyAttrs;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

AttrList ConvAttrs(In in) {
  return CopyAttrs(*in.node, {"strides", "padding", "dilations",
                              "explicit_paddings", "data_format",
                              "use_cudnn_on_gpu"});
}

// A convolution family's three ops: Conv2D's or DepthwiseConv2dNative's.
struct ConvFamily {
  const char* forward;
  const char* backprop_input;
  const char* backprop_filter;
};
constexpr ConvFamily kConv2D = {"Conv2D", "Conv2DBackpropInput",
                                "Conv2DBackpropFilter"};
constexpr ConvFamily kConv3D = {"Conv3D", "Conv3DBackpropInputV2",
                                "Conv3DBackpropFilterV2"};
constexpr ConvFamily kDepthwise = {"DepthwiseConv2dNative",
                                   "DepthwiseConv2dNativeBackpropInput",
                                   "DepthwiseConv2dNativeBackpropFilter"};

template <const ConvFamily& F>
absl::Status ConvGrad(const Scope& s, In in, Dx dx) {
  const Output &input = in.x[0], &filter = in.x[1], &g = in.dy[0];
  (*dx)[0] = AddNode1(s, F.backprop_input, {Shape(s, input), filter, g},
                      ConvAttrs(in));
  (*dx)[1] = AddNode1(s, F.backprop_filter, {input, Shape(s, filter), g},
                      ConvAttrs(in));
  return absl::OkStatus();
}

// BackpropInput(input_sizes, filter, dy) is linear in filter and dy.
template <const ConvFamily& F>
absl::Status ConvBackpropInputGrad(const Scope& s, In in, Dx dx) {
  const Output &filter = in.x[1], &dy = in.x[2], &g = in.dy[0];
  (*dx)[1] = AddNode1(s, F.backprop_filter, {g, Shape(s, filter), dy},
                      ConvAttrs(in));
  (*dx)[2] = AddNode1(s, F.forward, {g, filter}, ConvAttrs(in));
  return absl::OkStatus();
}

// BackpropFilter(input, filter_sizes, dy) is linear in input and dy.
template <const ConvFamily& F>
absl::Status ConvBackpropFilterGrad(const Scope& s, In in, Dx dx) {
  const Output &input = in.x[0], &dy = in.x[2], &g = in.dy[0];
  (*dx)[0] = AddNode1(s, F.backprop_input, {Shape(s, input), g, dy},
                      ConvAttrs(in));
  (*dx)[2] = AddNode1(s, F.forward, {input, g}, ConvAttrs(in));
  return absl::OkStatus();
}

AttrList AvgPoolAttrs(In in) {
  return CopyAttrs(*in.node, {"ksize", "strides", "padding", "data_format"});
}

// AvgPoolGrad(orig_input_shape, dy) is linear in dy.
absl::Status AvgPoolGradGrad(const Scope& s, In in, Dx dx) {
  (*dx)[1] = AddNode1(s, "AvgPool", {in.dy[0]}, AvgPoolAttrs(in));
  return absl::OkStatus();
}

absl::Status MaxPoolGradFn(const Scope& s, In in, Dx dx) {
  AttrList attrs = CopyAttrs(*in.node, {"ksize", "strides", "padding",
                                        "explicit_paddings", "data_format"});
  (*dx)[0] = AddNode1(s, "MaxPoolGrad", {in.x[0], in.y[0], in.dy[0]}, attrs);
  return absl::OkStatus();
}

// MaxPoolGrad(orig_input, orig_output, grad) and MaxPoolGradGrad(same): the
// arg max depends on orig_input only through comparisons, so, as in
// TensorFlow, nothing flows to orig_input or orig_output (left unset, which
// AddGradients treats as zeros) and `grad` gets the other op applied to dy.
// TensorFlow's MaxPoolGradGrad has no EXPLICIT padding.
absl::Status MaxPoolGradTranspose(const Scope& s, In in, const char* op,
                                  Dx dx) {
  AttrList attrs = CopyAttrs(*in.node, {"ksize", "strides", "padding",
                                        "data_format"});
  for (const auto& [name, value] : attrs) {
    if (name == "padding" && value.s() == "EXPLICIT") {
      return absl::UnimplementedError(absl::StrCat(
          "gradient of ", in.node->op(), " node '", in.node->name(),
          "': ", op, " has no EXPLICIT padding"));
    }
  }
  (*dx)[2] = AddNode1(s, op, {in.x[0], in.x[1], in.dy[0]}, attrs);
  return absl::OkStatus();
}

absl::Status AvgPoolGradFn(const Scope& s, In in, Dx dx) {
  (*dx)[0] = AddNode1(s, "AvgPoolGrad", {Shape(s, in.x[0]), in.dy[0]},
                      AvgPoolAttrs(in));
  return absl::OkStatus();
}

}  // namespace

void RegisterConvGrads(GradRegistry* r) {
  r->Register(kConv2D.forward, ConvGrad<kConv2D>);
  r->Register(kConv2D.backprop_input, ConvBackpropInputGrad<kConv2D>);
  r->Register(kConv2D.backprop_filter, ConvBackpropFilterGrad<kConv2D>);
  r->Register(kConv3D.forward, ConvGrad<kConv3D>);
  r->Register(kConv3D.backprop_input, ConvBackpropInputGrad<kConv3D>);
  r->Register(kConv3D.backprop_filter, ConvBackpropFilterGrad<kConv3D>);
  r->Register(kDepthwise.forward, ConvGrad<kDepthwise>);
  r->Register(kDepthwise.backprop_input, ConvBackpropInputGrad<kDepthwise>);
  r->Register(kDepthwise.backprop_filter, ConvBackpropFilterGrad<kDepthwise>);
  r->Register("MaxPool", MaxPoolGradFn);
  r->Register("AvgPool", AvgPoolGradFn);
  r->Register("AvgPoolGrad", AvgPoolGradGrad);
  r->Register("MaxPoolGrad", [](const Scope& s, In in, Dx dx) {
    return MaxPoolGradTranspose(s, in, "MaxPoolGradGrad", dx);
  });
  r->Register("MaxPoolGradGrad", [](const Scope& s, In in, Dx dx) {
    return MaxPoolGradTranspose(s, in, "MaxPoolGrad", dx);
  });
}

}  // namespace weft
