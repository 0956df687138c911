// Convolution and pooling ops (NHWC and NCHW OpDefs; the CPU kernels run
// NHWC only). OpDefs match TensorFlow 2.21's exactly; shape functions follow
// TensorFlow's SAME / VALID / EXPLICIT output-size rules:
//   VALID:    out = ceil((in - (k - 1) * d) / s)
//   SAME:     out = ceil(in / s)
//   EXPLICIT: out = (in + pad_before + pad_after - (k - 1) * d - 1) / s + 1
// The CPU kernels (ops/cpu/conv_*.cc, pool_*.cc) use the same rules, in
// ops/cpu/conv_geometry.h.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/array_shape_fns.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// Positions of N, H, W, C for a data_format.
struct Layout {
  int n, h, w, c;
};
Layout LayoutFor(const std::string& format) {
  return format == "NHWC" ? Layout{0, 1, 2, 3} : Layout{0, 2, 3, 1};
}

// A 4-element list attr whose batch and channel entries must be 1.
absl::Status GetWindowAttr(InferenceContext* c, const char* name,
                           const Layout& l, std::vector<int64_t>* v) {
  WEFT_RETURN_IF_ERROR(c->GetAttr(name, v));
  if (v->size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must have 4 entries (one per dimension), got ", v->size()));
  }
  for (int64_t x : *v) {
    if (x < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " must be >= 1, got ", x));
    }
  }
  if ((*v)[l.n] != 1 || (*v)[l.c] != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " in the batch and depth dimensions must be 1; got [",
        absl::StrJoin(*v, ","), "]"));
  }
  return absl::OkStatus();
}

// Output size of one spatial dim (-1 if `in` is unknown).
absl::StatusOr<int64_t> OutSize(int64_t in, int64_t k, int64_t d, int64_t s,
                                const std::string& padding, int64_t pad_before,
                                int64_t pad_after) {
  if (in < 0 || k < 0) return -1;
  const int64_t k_eff = (k - 1) * d + 1;
  int64_t out;
  if (padding == "VALID") {
    out = in >= k_eff ? (in - k_eff + s) / s : 0;
  } else if (padding == "SAME") {
    out = (in + s - 1) / s;
  } else {
    const int64_t padded = in + pad_before + pad_after;
    out = padded >= k_eff ? (padded - k_eff) / s + 1 : 0;
  }
  if (out <= 0 && padding != "SAME") {
    return absl::InvalidArgumentError(absl::StrCat(
        "window of size ", k_eff, " (dilated) does not fit an input of size ",
        in, " with ", padding, " padding"));
  }
  return out;
}

// Reads padding and explicit_paddings (when the op has that attr).
absl::Status GetPadding(InferenceContext* c, const Layout& l,
                        std::string* padding, std::vector<int64_t>* pads) {
  WEFT_RETURN_IF_ERROR(c->GetAttr("padding", padding));
  pads->assign(8, 0);
  if (*padding != "EXPLICIT") return absl::OkStatus();
  std::vector<int64_t> ep;
  WEFT_RETURN_IF_ERROR(c->GetAttr("explicit_paddings", &ep));
  if (ep.size() != 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        "explicit_paddings must have 8 entries for padding=EXPLICIT, got ",
        ep.size()));
  }
  for (int64_t p : ep) {
    if (p < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("explicit_paddings must be >= 0, got ", p));
    }
  }
  if (ep[2 * l.n] != 0 || ep[2 * l.n + 1] != 0 || ep[2 * l.c] != 0 ||
      ep[2 * l.c + 1] != 0) {
    return absl::InvalidArgumentError(
        "explicit_paddings in the batch and depth dimensions must be 0");
  }
  *pads = ep;
  return absl::OkStatus();
}

absl::Status Rank4(InferenceContext* c, int i, const char* what) {
  if (c->input(i).known_rank() && c->input(i).rank() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be 4-dimensional, got shape ", c->input(i).DebugString()));
  }
  return absl::OkStatus();
}

int64_t DimOf(const PartialShape& s, int i) {
  return s.known_rank() ? s.dim(i) : -1;
}

// The window attrs Conv2D and its backprops share, checked.
struct ConvAttrs {
  Layout layout;
  std::vector<int64_t> strides, dilations, pads;
  std::string padding;
};

absl::StatusOr<ConvAttrs> GetConvAttrs(InferenceContext* c) {
  std::string format;
  WEFT_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  ConvAttrs a{LayoutFor(format), {}, {}, {}, {}};
  WEFT_RETURN_IF_ERROR(GetWindowAttr(c, "strides", a.layout, &a.strides));
  WEFT_RETURN_IF_ERROR(GetWindowAttr(c, "dilations", a.layout, &a.dilations));
  WEFT_RETURN_IF_ERROR(GetPadding(c, a.layout, &a.padding, &a.pads));
  return a;
}

// Sets output 0 to a convolution's NHWC/NCHW output: the input's batch,
// `depth` channels, and the spatial sizes of `filter` [rows, cols, ...]
// applied with the attrs.
absl::Status SetConvOutput(InferenceContext* c, const ConvAttrs& attrs,
                           const PartialShape& in, const PartialShape& f,
                           int64_t depth) {
  const Layout& l = attrs.layout;
  int64_t dims[4];
  dims[l.n] = DimOf(in, l.n);
  dims[l.c] = depth;
  const int spatial[2] = {l.h, l.w};
  for (int k = 0; k < 2; ++k) {
    const int d = spatial[k];
    WEFT_ASSIGN_OR_RETURN(
        dims[d], OutSize(DimOf(in, d), DimOf(f, k), attrs.dilations[d],
                         attrs.strides[d], attrs.padding, attrs.pads[2 * d],
                         attrs.pads[2 * d + 1]));
  }
  c->set_output(0, PartialShape({dims[0], dims[1], dims[2], dims[3]}));
  return absl::OkStatus();
}

absl::Status Conv2DShape(InferenceContext* c) {
  WEFT_ASSIGN_OR_RETURN(const ConvAttrs attrs, GetConvAttrs(c));
  WEFT_RETURN_IF_ERROR(Rank4(c, 0, "input"));
  WEFT_RETURN_IF_ERROR(Rank4(c, 1, "filter"));
  const PartialShape& in = c->input(0);
  const PartialShape& f = c->input(1);
  const int64_t depth = DimOf(in, attrs.layout.c), f_in = DimOf(f, 2);
  if (depth >= 0 && f_in > 0 && depth % f_in != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input depth ", depth, " must be a multiple of the filter's input "
        "depth ", f_in, " (input ", in.DebugString(), ", filter ",
        f.DebugString(), ")"));
  }
  if (f_in == 0) {
    return absl::InvalidArgumentError("filter's input depth must be > 0");
  }
  return SetConvOutput(c, attrs, in, f, DimOf(f, 3));
}

// FusedPadConv2D / FusedResizeAndPadConv2D (`resize`): the input resized
// to `size`, mirror padded by `paddings` and convolved; spatial sizes are
// known where size and paddings are constants.
absl::Status FusedPadConvShape(InferenceContext* c, bool resize) {
  const int paddings = resize ? 2 : 1, filter = paddings + 1;
  WEFT_RETURN_IF_ERROR(Rank4(c, 0, "input"));
  WEFT_RETURN_IF_ERROR(Rank4(c, filter, "filter"));
  const Layout l = LayoutFor("NHWC");
  std::vector<int64_t> strides;
  WEFT_RETURN_IF_ERROR(GetWindowAttr(c, "strides", l, &strides));
  std::string padding;
  WEFT_RETURN_IF_ERROR(c->GetAttr("padding", &padding));
  const PartialShape& in = c->input(0);
  const PartialShape& f = c->input(filter);
  int64_t spatial[2] = {DimOf(in, 1), DimOf(in, 2)};
  array_shapes::Dims size, pads;
  if (resize) {
    const bool known = array_shapes::ConstInts(c, 1, &size) && size.size() == 2;
    spatial[0] = known ? size[0] : -1;
    spatial[1] = known ? size[1] : -1;
  }
  const bool pads_known =
      array_shapes::ConstInts(c, paddings, &pads) && pads.size() == 8;
  int64_t out[2];
  for (int k = 0; k < 2; ++k) {
    const int64_t padded =
        pads_known && spatial[k] >= 0
            ? spatial[k] + pads[2 * k + 2] + pads[2 * k + 3]
            : -1;
    WEFT_ASSIGN_OR_RETURN(out[k], OutSize(padded, DimOf(f, k), 1,
                                          strides[k + 1], padding, 0, 0));
  }
  c->set_output(0, PartialShape({DimOf(in, 0), out[0], out[1], DimOf(f, 3)}));
  return absl::OkStatus();
}

// DepthwiseConv2dNative: filter [rows, cols, in_depth, multiplier]; the
// output has in_depth * multiplier channels.
absl::Status DepthwiseConv2DShape(InferenceContext* c) {
  WEFT_ASSIGN_OR_RETURN(const ConvAttrs attrs, GetConvAttrs(c));
  WEFT_RETURN_IF_ERROR(Rank4(c, 0, "input"));
  WEFT_RETURN_IF_ERROR(Rank4(c, 1, "filter"));
  const PartialShape& in = c->input(0);
  const PartialShape& f = c->input(1);
  const int64_t depth = DimOf(in, attrs.layout.c), f_in = DimOf(f, 2),
                mult = DimOf(f, 3);
  if (depth >= 0 && f_in >= 0 && depth != f_in) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input depth ", depth, " must equal the filter's in_depth ", f_in,
        " (input ", in.DebugString(), ", filter ", f.DebugString(), ")"));
  }
  const int64_t d = depth >= 0 ? depth : f_in;
  return SetConvOutput(c, attrs, in, f, d >= 0 && mult >= 0 ? d * mult : -1);
}

// Output = the shape given by input `i` (a 1-D int32 tensor).
absl::Status ShapeFromInput(InferenceContext* c, int i) {
  PartialShape s = c->InputAsShape(i);
  if (s.known_rank() && s.rank() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        c->node().op(), ": input ", i, " must hold 4 sizes, got ",
        s.DebugString()));
  }
  c->set_output(0, s.known_rank() ? s : PartialShape({-1, -1, -1, -1}));
  return absl::OkStatus();
}

absl::Status ConvBackpropShape(InferenceContext* c, int sizes_input) {
  WEFT_RETURN_IF_ERROR(GetConvAttrs(c).status());  // attrs are checked here too
  WEFT_RETURN_IF_ERROR(Rank4(c, 2, "out_backprop"));
  return ShapeFromInput(c, sizes_input);
}

absl::Status PoolShape(InferenceContext* c) {
  std::string format;
  WEFT_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  if (format == "NCHW_VECT_C") {
    return absl::UnimplementedError("data_format NCHW_VECT_C is not supported");
  }
  const Layout l = LayoutFor(format);
  std::vector<int64_t> ksize, strides, pads;
  std::string padding;
  WEFT_RETURN_IF_ERROR(GetWindowAttr(c, "ksize", l, &ksize));
  WEFT_RETURN_IF_ERROR(GetWindowAttr(c, "strides", l, &strides));
  // AvgPool has no explicit_paddings attr; its padding is never EXPLICIT.
  WEFT_RETURN_IF_ERROR(GetPadding(c, l, &padding, &pads));
  WEFT_RETURN_IF_ERROR(Rank4(c, 0, "input"));
  const PartialShape& in = c->input(0);
  int64_t dims[4];
  dims[l.n] = DimOf(in, l.n);
  dims[l.c] = DimOf(in, l.c);
  for (int d : {l.h, l.w}) {
    WEFT_ASSIGN_OR_RETURN(dims[d], OutSize(DimOf(in, d), ksize[d], 1, strides[d],
                                           padding, pads[2 * d], pads[2 * d + 1]));
  }
  c->set_output(0, PartialShape({dims[0], dims[1], dims[2], dims[3]}));
  return absl::OkStatus();
}

// Output: the pooled shape of orig_input; grad must match orig_input and
// orig_output the output, where known.
absl::Status MaxPoolGradGradShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(PoolShape(c));
  WEFT_RETURN_IF_ERROR(Rank4(c, 2, "grad"));
  if (!c->input(0).IsCompatibleWith(c->input(2))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "grad ", c->input(2).DebugString(), " must have orig_input's shape ",
        c->input(0).DebugString()));
  }
  if (!c->input(1).IsCompatibleWith(c->output(0))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "orig_output ", c->input(1).DebugString(),
        " must have the pooled shape ", c->output(0).DebugString()));
  }
  return absl::OkStatus();
}

// A convolution and its two backprops, whose attrs are the same:
// `ops` names them in that order; `types` are their T lists.
struct ConvFamilyDef {
  const char* ops[3];
  const char* types[3];
  bool use_cudnn_attr;  // Conv2D's ops have use_cudnn_on_gpu
  ShapeFn forward_shape;
};

void RegisterConvFamily(OpRegistry* r, const ConvFamilyDef& def) {
  auto with_attrs = [&](OpDefBuilder b, int i) {
    b.Attr(absl::StrCat("T: ", def.types[i]))
        .Attr("strides: list(int)")
        .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
        .Attr("explicit_paddings: list(int) = []")
        .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
        .Attr("dilations: list(int) = [1, 1, 1, 1]");
    if (def.use_cudnn_attr) b.Attr("use_cudnn_on_gpu: bool = true");
    return b;
  };
  r->Register(with_attrs(OpDefBuilder(def.ops[0])
                             .Input("input: T")
                             .Input("filter: T")
                             .Output("output: T"),
                         0),
              def.forward_shape);
  r->Register(with_attrs(OpDefBuilder(def.ops[1])
                             .Input("input_sizes: int32")
                             .Input("filter: T")
                             .Input("out_backprop: T")
                             .Output("output: T"),
                         1),
              [](InferenceContext* c) { return ConvBackpropShape(c, 0); });
  r->Register(with_attrs(OpDefBuilder(def.ops[2])
                             .Input("input: T")
                             .Input("filter_sizes: int32")
                             .Input("out_backprop: T")
                             .Output("output: T"),
                         2),
              [](InferenceContext* c) { return ConvBackpropShape(c, 1); });
}

}  // namespace

void RegisterConvOps(OpRegistry* r) {
  const char kConvTypes[] = "{half, bfloat16, float, double, int32}";
  const char kFloatTypes[] = "{half, bfloat16, float, double}";
  RegisterConvFamily(
      r, {{"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"},
          {kConvTypes, kConvTypes, kFloatTypes},
          /*use_cudnn_attr=*/true,
          Conv2DShape});
  RegisterConvFamily(
      r, {{"DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
           "DepthwiseConv2dNativeBackpropFilter"},
          {kFloatTypes, kFloatTypes, kFloatTypes},
          /*use_cudnn_attr=*/false,
          DepthwiseConv2DShape});

  // TensorFlow's grappler writes it into optimized graphs (Conv2D and the
  // BiasAdd / FusedBatchNorm and activation after it, fused).
  r->Register(OpDefBuilder("_FusedConv2D")
                  .Input("input: T")
                  .Input("filter: T")
                  .Input("args: TArgs")
                  .Input("host_args: num_host_args * float")
                  .Output("output: T")
                  .Attr("T: {half, float, double, int8, qint8}")
                  .Attr("TArgs: list(type) >= 1")
                  .Attr("num_args: int >= 0")
                  .Attr("num_host_args: int >= 0 = 0")
                  .Attr("strides: list(int)")
                  .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
                  .Attr("explicit_paddings: list(int) = []")
                  .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
                  .Attr("filter_format: {'HWIO', 'OIHW', 'OIHW_VECT_I'} = 'HWIO'")
                  .Attr("dilations: list(int) = [1, 1, 1, 1]")
                  .Attr("use_cudnn_on_gpu: bool = true")
                  .Attr("fused_ops: list(string) = []")
                  .Attr("epsilon: float = 0.0001")
                  .Attr("leakyrelu_alpha: float = 0.2"),
              Conv2DShape);
  // The same for a depthwise convolution (its BiasAdd and activation).
  r->Register(OpDefBuilder("_FusedDepthwiseConv2dNative")
                  .Input("input: T")
                  .Input("filter: T")
                  .Input("args: num_args * T")
                  .Output("output: T")
                  .Attr("T: {half, bfloat16, float, double}")
                  .Attr("num_args: int >= 0")
                  .Attr("strides: list(int)")
                  .Attr("padding: {'SAME', 'VALID'}")
                  .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
                  .Attr("dilations: list(int) = [1, 1, 1, 1]")
                  .Attr("fused_ops: list(string) = []")
                  .Attr("epsilon: float = 0.0001")
                  .Attr("leakyrelu_alpha: float = 0.2"),
              DepthwiseConv2DShape);
  for (const bool resize : {false, true}) {
    OpDefBuilder b(resize ? "FusedResizeAndPadConv2D" : "FusedPadConv2D");
    b.Input("input: T");
    if (resize) b.Input("size: int32");
    b.Input("paddings: int32")
        .Input("filter: T")
        .Output("output: T")
        .Attr(resize ? "T: {half, float, double}"
                     : "T: {half, bfloat16, float, double}");
    if (resize) b.Attr("resize_align_corners: bool = false");
    b.Attr("mode: {'REFLECT', 'SYMMETRIC'}")
        .Attr("strides: list(int)")
        .Attr("padding: {'SAME', 'VALID'}");
    r->Register(b, [resize](InferenceContext* c) {
      return FusedPadConvShape(c, resize);
    });
  }
  r->Register(OpDefBuilder("MaxPool")
                  .Input("input: T")
                  .Output("output: T")
                  .Attr("T: {half, bfloat16, float, double, int32, int64, "
                        "uint8, int16, int8, uint16, qint8} = DT_FLOAT")
                  .Attr("ksize: list(int) >= 4")
                  .Attr("strides: list(int) >= 4")
                  .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
                  .Attr("explicit_paddings: list(int) = []")
                  .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"),
              PoolShape);
  r->Register(OpDefBuilder("MaxPoolGrad")
                  .Input("orig_input: T")
                  .Input("orig_output: T")
                  .Input("grad: T")
                  .Output("output: T")
                  .Attr("ksize: list(int) >= 4")
                  .Attr("strides: list(int) >= 4")
                  .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
                  .Attr("explicit_paddings: list(int) = []")
                  .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
                  .Attr("T: {float, double, int32, uint8, int16, int8, int64, "
                        "bfloat16, uint16, half, uint32, uint64} = DT_FLOAT"),
              [](InferenceContext* c) {
                WEFT_RETURN_IF_ERROR(Rank4(c, 0, "orig_input"));
                c->set_output(0, c->input(0));
                return absl::OkStatus();
              });
  // The gradient of MaxPoolGrad with respect to its `grad` input: output
  // (pooled shape) takes, for each window, the entry of `grad` (input shape)
  // at that window's arg max. TensorFlow's has no EXPLICIT padding.
  r->Register(OpDefBuilder("MaxPoolGradGrad")
                  .Input("orig_input: T")
                  .Input("orig_output: T")
                  .Input("grad: T")
                  .Output("output: T")
                  .Attr("ksize: list(int) >= 4")
                  .Attr("strides: list(int) >= 4")
                  .Attr("padding: {'SAME', 'VALID'}")
                  .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
                  .Attr("T: {float, double, int32, uint8, int16, int8, int64, "
                        "bfloat16, uint16, half, uint32, uint64}"),
              MaxPoolGradGradShape);
  r->Register(OpDefBuilder("AvgPool")
                  .Input("value: T")
                  .Output("output: T")
                  .Attr("ksize: list(int) >= 4")
                  .Attr("strides: list(int) >= 4")
                  .Attr("padding: {'SAME', 'VALID'}")
                  .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
                  .Attr("T: {half, bfloat16, float, double}"),
              PoolShape);
  r->Register(OpDefBuilder("AvgPoolGrad")
                  .Input("orig_input_shape: int32")
                  .Input("grad: T")
                  .Output("output: T")
                  .Attr("ksize: list(int) >= 4")
                  .Attr("strides: list(int) >= 4")
                  .Attr("padding: {'SAME', 'VALID'}")
                  .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
                  .Attr("T: {half, bfloat16, float, double}"),
              [](InferenceContext* c) { return ShapeFromInput(c, 0); });
}

}  // namespace weft
