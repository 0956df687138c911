// The volumetric (3-D) convolution and pooling ops, local response
// normalisation and max pooling with arg max: OpDefs identical to
// TensorFlow 2.21's, and shape functions with TensorFlow's output-size rules
// per spatial dim (k_eff = (k - 1) * dilation + 1):
//   VALID: out = ceil((in - k_eff + 1) / s)      SAME: out = ceil(in / s)
// The CPU kernels are in ops/cpu/conv3d_*.cc, pool3d_kernels.cc,
// lrn_kernels.cc and pool_argmax_kernels.cc.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// Positions of the batch, the spatial dims and the channels of a layout.
struct Layout3 {
  int n, spatial[3], c;
};
Layout3 LayoutOf(const std::string& format) {
  return format == "NCDHW" ? Layout3{0, {2, 3, 4}, 1} : Layout3{0, {1, 2, 3}, 4};
}

// A list attr of `rank` entries >= 1 whose batch and channel entries are 1.
absl::Status GetListAttr(InferenceContext* c, const char* name, int rank,
                         int n, int ch, std::vector<int64_t>* v) {
  WEFT_RETURN_IF_ERROR(c->GetAttr(name, v));
  if (static_cast<int>(v->size()) != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must have ", rank, " entries (one per dimension), got ",
        v->size()));
  }
  for (int64_t x : *v) {
    if (x < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, " must be >= 1, got [", absl::StrJoin(*v, ","), "]"));
    }
  }
  if ((*v)[n] != 1 || (*v)[ch] != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " in the batch and depth dimensions must be 1; got [",
        absl::StrJoin(*v, ","), "]"));
  }
  return absl::OkStatus();
}

absl::Status RankIs(InferenceContext* c, int i, int rank, const char* what) {
  if (c->input(i).known_rank() && c->input(i).rank() != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be ", rank, "-dimensional, got shape ",
        c->input(i).DebugString()));
  }
  return absl::OkStatus();
}

int64_t Dim(const PartialShape& s, int i) { return s.known_rank() ? s.dim(i) : -1; }

// One spatial output size (-1 when `in` or `k` is unknown).
absl::StatusOr<int64_t> WindowOut(int64_t in, int64_t k, int64_t dilation,
                                  int64_t stride, const std::string& padding) {
  if (in < 0 || k < 0) return -1;
  const int64_t k_eff = (k - 1) * dilation + 1;
  if (padding == "SAME") return (in + stride - 1) / stride;
  if (in < k_eff) {
    return absl::InvalidArgumentError(absl::StrCat(
        "window of size ", k_eff, " (dilated) does not fit an input of size ",
        in, " with VALID padding"));
  }
  return (in - k_eff + stride) / stride;
}

// Output 0 = `in` with spatial dims windowed by `win` (the window sizes of
// the three spatial dims, -1 unknown) and `depth` channels.
absl::Status SetWindowedOutput(InferenceContext* c, const Layout3& l, int rank,
                               const PartialShape& in, const int64_t win[3],
                               const std::vector<int64_t>& strides,
                               const std::vector<int64_t>& dilations,
                               int64_t depth) {
  std::string padding;
  WEFT_RETURN_IF_ERROR(c->GetAttr("padding", &padding));
  std::vector<int64_t> dims(rank, -1);
  dims[l.n] = Dim(in, l.n);
  dims[l.c] = depth;
  for (int k = 0; k < rank - 2; ++k) {
    const int d = l.spatial[k];
    WEFT_ASSIGN_OR_RETURN(dims[d], WindowOut(Dim(in, d), win[k], dilations[d],
                                             strides[d], padding));
  }
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

absl::StatusOr<Layout3> ConvAttrs3(InferenceContext* c, std::vector<int64_t>* strides,
                                   std::vector<int64_t>* dilations) {
  std::string format;
  WEFT_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  const Layout3 l = LayoutOf(format);
  WEFT_RETURN_IF_ERROR(GetListAttr(c, "strides", 5, l.n, l.c, strides));
  WEFT_RETURN_IF_ERROR(GetListAttr(c, "dilations", 5, l.n, l.c, dilations));
  return l;
}

absl::Status Conv3DShape(InferenceContext* c) {
  std::vector<int64_t> strides, dilations;
  WEFT_ASSIGN_OR_RETURN(const Layout3 l, ConvAttrs3(c, &strides, &dilations));
  WEFT_RETURN_IF_ERROR(RankIs(c, 0, 5, "input"));
  WEFT_RETURN_IF_ERROR(RankIs(c, 1, 5, "filter"));
  const PartialShape& in = c->input(0);
  const PartialShape& f = c->input(1);
  const int64_t depth = Dim(in, l.c), f_in = Dim(f, 3);
  if (f_in == 0) return absl::InvalidArgumentError("filter's in_depth must be > 0");
  if (depth >= 0 && f_in > 0 && depth % f_in != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input depth ", depth, " must be a multiple of the filter's in_depth ",
        f_in, " (input ", in.DebugString(), ", filter ", f.DebugString(), ")"));
  }
  const int64_t win[3] = {Dim(f, 0), Dim(f, 1), Dim(f, 2)};
  return SetWindowedOutput(c, l, 5, in, win, strides, dilations, Dim(f, 4));
}

// Output = the `rank` sizes held by input `i`.
absl::Status ShapeFromSizes(InferenceContext* c, int i, int rank) {
  PartialShape s = c->InputAsShape(i);
  if (s.known_rank() && s.rank() != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        c->node().op(), ": input ", i, " must hold ", rank, " sizes, got ",
        s.DebugString()));
  }
  c->set_output(0, s.known_rank() ? s : PartialShape(std::vector<int64_t>(rank, -1)));
  return absl::OkStatus();
}

absl::Status Conv3DBackpropShape(InferenceContext* c, int sizes_input) {
  std::vector<int64_t> strides, dilations;
  WEFT_RETURN_IF_ERROR(ConvAttrs3(c, &strides, &dilations).status());
  WEFT_RETURN_IF_ERROR(RankIs(c, 2, 5, "out_backprop"));
  return ShapeFromSizes(c, sizes_input, 5);
}

// MaxPool3D / AvgPool3D (rank 5) and MaxPoolWithArgmax (rank 4, NHWC).
absl::Status PoolShapeOfRank(InferenceContext* c, int rank) {
  Layout3 l{0, {1, 2, 3}, rank - 1};
  if (rank == 5) {
    std::string format;
    WEFT_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
    l = LayoutOf(format);
  }
  std::vector<int64_t> ksize, strides;
  WEFT_RETURN_IF_ERROR(GetListAttr(c, "ksize", rank, l.n, l.c, &ksize));
  WEFT_RETURN_IF_ERROR(GetListAttr(c, "strides", rank, l.n, l.c, &strides));
  WEFT_RETURN_IF_ERROR(RankIs(c, 0, rank, "input"));
  const PartialShape& in = c->input(0);
  int64_t win[3];
  for (int k = 0; k < rank - 2; ++k) win[k] = ksize[l.spatial[k]];
  return SetWindowedOutput(c, l, rank, in, win, strides,
                           std::vector<int64_t>(rank, 1), Dim(in, l.c));
}

absl::Status Pool3DShape(InferenceContext* c) { return PoolShapeOfRank(c, 5); }

// Output: orig_input's shape (rank 5).
absl::Status MaxPool3DGradShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(RankIs(c, 0, 5, "orig_input"));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status MaxPool3DGradGradShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(Pool3DShape(c));
  WEFT_RETURN_IF_ERROR(RankIs(c, 2, 5, "grad"));
  if (!c->input(0).IsCompatibleWith(c->input(2))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "grad ", c->input(2).DebugString(), " must have orig_input's shape ",
        c->input(0).DebugString()));
  }
  return absl::OkStatus();
}

absl::Status MaxPoolWithArgmaxShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(PoolShapeOfRank(c, 4));
  c->set_output(1, c->output(0));
  return absl::OkStatus();
}

// MaxPoolGradWithArgmax: the output has input's shape.
absl::Status WithArgmaxGradShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(RankIs(c, 0, 4, "input"));
  WEFT_RETURN_IF_ERROR(RankIs(c, 1, 4, "grad"));
  WEFT_RETURN_IF_ERROR(RankIs(c, 2, 4, "argmax"));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status LrnShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(RankIs(c, 0, 4, "input"));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status LrnGradShape(InferenceContext* c) {
  for (int i = 0; i < 3; ++i) {
    WEFT_RETURN_IF_ERROR(RankIs(c, i, 4, i == 0 ? "input_grads"
                                         : i == 1 ? "input_image"
                                                  : "output_image"));
    if (!c->input(0).IsCompatibleWith(c->input(i))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input_grads, input_image and output_image must have one shape, got ",
          c->input(0).DebugString(), " and ", c->input(i).DebugString()));
    }
  }
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

constexpr char kFloatTypes[] = "T: {half, bfloat16, float, double}";
constexpr char kPoolFloatTypes[] = "T: {half, bfloat16, float}";
constexpr char kRealTypes[] =
    "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, "
    "half, uint32, uint64}";

void RegisterConv3DOps(OpRegistry* r) {
  auto conv_attrs = [](OpDefBuilder b) {
    return b.Attr(kFloatTypes)
        .Attr("strides: list(int) >= 5")
        .Attr("padding: {'SAME', 'VALID'}")
        .Attr("data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'")
        .Attr("dilations: list(int) = [1, 1, 1, 1, 1]");
  };
  r->Register(conv_attrs(OpDefBuilder("Conv3D")
                             .Input("input: T")
                             .Input("filter: T")
                             .Output("output: T")),
              Conv3DShape);
  r->Register(conv_attrs(OpDefBuilder("Conv3DBackpropInputV2")
                             .Input("input_sizes: Tshape")
                             .Input("filter: T")
                             .Input("out_backprop: T")
                             .Output("output: T"))
                  .Attr("Tshape: {int32, int64} = DT_INT32"),
              [](InferenceContext* c) { return Conv3DBackpropShape(c, 0); });
  r->Register(conv_attrs(OpDefBuilder("Conv3DBackpropFilterV2")
                             .Input("input: T")
                             .Input("filter_sizes: int32")
                             .Input("out_backprop: T")
                             .Output("output: T")),
              [](InferenceContext* c) { return Conv3DBackpropShape(c, 1); });
}

void RegisterPool3DOps(OpRegistry* r) {
  auto window = [](OpDefBuilder b) {
    return b.Attr("ksize: list(int) >= 5")
        .Attr("strides: list(int) >= 5")
        .Attr("padding: {'SAME', 'VALID'}")
        .Attr("data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'");
  };
  r->Register(window(OpDefBuilder("MaxPool3D").Input("input: T").Output("output: T"))
                  .Attr(kPoolFloatTypes),
              Pool3DShape);
  r->Register(window(OpDefBuilder("AvgPool3D").Input("input: T").Output("output: T"))
                  .Attr(kFloatTypes),
              Pool3DShape);
  r->Register(window(OpDefBuilder("MaxPool3DGrad")
                         .Input("orig_input: TInput")
                         .Input("orig_output: TInput")
                         .Input("grad: T")
                         .Output("output: T"))
                  .Attr("T: {half, bfloat16, float} = DT_FLOAT")
                  .Attr("TInput: {half, bfloat16, float} = DT_FLOAT"),
              MaxPool3DGradShape);
  r->Register(window(OpDefBuilder("AvgPool3DGrad")
                         .Input("orig_input_shape: int32")
                         .Input("grad: T")
                         .Output("output: T"))
                  .Attr(kFloatTypes),
              [](InferenceContext* c) { return ShapeFromSizes(c, 0, 5); });
  r->Register(window(OpDefBuilder("MaxPool3DGradGrad")
                         .Input("orig_input: T")
                         .Input("orig_output: T")
                         .Input("grad: T")
                         .Output("output: T"))
                  .Attr(kRealTypes),
              MaxPool3DGradGradShape);
}

void RegisterArgmaxPoolOps(OpRegistry* r) {
  r->Register(OpDefBuilder("MaxPoolWithArgmax")
                  .Input("input: T")
                  .Output("output: T")
                  .Output("argmax: Targmax")
                  .Attr("ksize: list(int) >= 4")
                  .Attr("strides: list(int) >= 4")
                  .Attr("Targmax: {int32, int64} = DT_INT64")
                  .Attr("padding: {'SAME', 'VALID'}")
                  .Attr("include_batch_in_index: bool = false")
                  .Attr(kRealTypes),
              MaxPoolWithArgmaxShape);
  // (Not MaxPoolGradGradWithArgmax: TensorFlow has no CPU kernel for it,
  // and Weft registers no op it cannot run.)
  r->Register(OpDefBuilder("MaxPoolGradWithArgmax")
                  .Input("input: T")
                  .Input("grad: T")
                  .Input("argmax: Targmax")
                  .Output("output: T")
                  .Attr("ksize: list(int) >= 4")
                  .Attr("strides: list(int) >= 4")
                  .Attr("padding: {'SAME', 'VALID'}")
                  .Attr("include_batch_in_index: bool = false")
                  .Attr("Targmax: {int32, int64}")
                  .Attr(kRealTypes),
              WithArgmaxGradShape);
}

void RegisterLrnOps(OpRegistry* r) {
  auto lrn_attrs = [](OpDefBuilder b) {
    return b.Attr("depth_radius: int = 5")
        .Attr("bias: float = 1")
        .Attr("alpha: float = 1")
        .Attr("beta: float = 0.5")
        .Attr("T: {half, bfloat16, float} = DT_FLOAT");
  };
  r->Register(lrn_attrs(OpDefBuilder("LRN").Input("input: T").Output("output: T")),
              LrnShape);
  r->Register(lrn_attrs(OpDefBuilder("LRNGrad")
                            .Input("input_grads: T")
                            .Input("input_image: T")
                            .Input("output_image: T")
                            .Output("output: T")),
              LrnGradShape);
}

}  // namespace

void RegisterNn3dOps(OpRegistry* r) {
  RegisterConv3DOps(r);
  RegisterPool3DOps(r);
  RegisterArgmaxPoolOps(r);
  RegisterLrnOps(r);
}

}  // namespace weft
