// Image ops beyond the bilinear/nearest resizes (image_resize_ops.cc):
// colour adjustments and colour spaces, crop-and-resize with its
// gradients, the non-max suppressions, area/bicubic resizes, scale and
// translate, image patches and box drawing. OpDefs match TensorFlow 2.21's
// exactly (tests/ops/op_def_compat_test). Shape functions give what the
// inputs fix: the colour ops keep the images' shape, crops are [boxes,
// crop_size[0], crop_size[1], depth] when crop_size is constant, the
// suppressions give vectors of unknown length (or max_output_size with
// padding), and the patches' spatial dims follow the VALID/SAME rules.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

int64_t DimOr(const PartialShape& s, int i) {
  return s.known_rank() && i < s.rank() ? s.dim(i) : -1;
}

absl::Status SameAsInput0(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

// Images of rank >= 3 whose last dim, when known, is 3.
// The images unchanged, of rank `min_rank` or more and 3 channels.
absl::Status ThreeChannels(InferenceContext* c, int min_rank) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, min_rank));
  const PartialShape& in = c->input(0);
  if (in.known_rank() && in.dim(in.rank() - 1) >= 0 &&
      in.dim(in.rank() - 1) != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Dimension must be 3 but is ", in.dim(in.rank() - 1), " (channels of ",
        c->node().op(), "'s images)"));
  }
  c->set_output(0, in);
  return absl::OkStatus();
}

// AdjustHue, AdjustSaturation: images of rank 3 or more.
absl::Status ColorShape(InferenceContext* c) { return ThreeChannels(c, 3); }

// RGBToHSV, HSVToRGB: any rank from 1 (a single pixel is [3]).
absl::Status ColorspaceShape(InferenceContext* c) { return ThreeChannels(c, 1); }

// Two int32 values of input i when constant, else -1s.
void ConstPair(InferenceContext* c, int i, int64_t* a, int64_t* b) {
  *a = *b = -1;
  if (const Tensor* t = c->input_tensor(i);
      t != nullptr && t->dtype() == DT_INT32 && t->NumElements() == 2) {
    *a = t->data<int32_t>()[0];
    *b = t->data<int32_t>()[1];
  }
}

// [batch, size[0], size[1], channels] for the resizes (input 1 = size).
absl::Status SizedShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 4));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  int64_t h, w;
  ConstPair(c, 1, &h, &w);
  const PartialShape& in = c->input(0);
  c->set_output(0, PartialShape({DimOr(in, 0), h, w, DimOr(in, 3)}));
  return absl::OkStatus();
}

// The gradient of a resize has original_image's (input 1's) shape.
absl::Status OriginalShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 4));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 4));
  c->set_output(0, c->input(1));
  return absl::OkStatus();
}

absl::Status CropAndResizeShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 4));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 2));
  WEFT_RETURN_IF_ERROR(c->WithRank(2, 1));
  WEFT_RETURN_IF_ERROR(c->WithRank(3, 1));
  int64_t h, w;
  ConstPair(c, 3, &h, &w);
  int64_t n = DimOr(c->input(1), 0);
  if (n < 0) n = DimOr(c->input(2), 0);
  c->set_output(0, PartialShape({n, h, w, DimOr(c->input(0), 3)}));
  return absl::OkStatus();
}

absl::Status CropGradImageShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 4));
  WEFT_RETURN_IF_ERROR(c->WithRank(3, 1));
  c->set_output(0, c->InputAsShape(3).known_rank() ? c->InputAsShape(3)
                                                   : PartialShape({-1, -1, -1, -1}));
  return absl::OkStatus();
}

absl::Status CropGradBoxesShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 4));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 4));
  WEFT_RETURN_IF_ERROR(c->WithRank(2, 2));
  WEFT_RETURN_IF_ERROR(c->WithRank(3, 1));
  c->set_output(0, PartialShape({DimOr(c->input(2), 0), 4}));
  return absl::OkStatus();
}

// boxes [n, 4] (or overlaps [n, n]), scores [n], scalar thresholds; the
// selections are vectors of unknown length, or max_output_size long when
// padded; valid_outputs is a scalar.
absl::Status NmsShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 2));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  for (int i = 2; i < c->num_inputs(); ++i) {
    WEFT_RETURN_IF_ERROR(c->WithRank(i, 0));
  }
  bool pad = false;
  if (c->num_outputs() > 1) {
    WEFT_RETURN_IF_ERROR(c->GetAttr("pad_to_max_output_size", &pad));
  }
  int64_t n = -1;
  if (const Tensor* t = c->input_tensor(2);
      pad && t != nullptr && t->dtype() == DT_INT32 && t->NumElements() == 1) {
    n = t->data<int32_t>()[0];
  }
  for (int i = 0; i < c->num_outputs(); ++i) {
    c->set_output(i, i == c->num_outputs() - 1 && c->num_outputs() > 1
                         ? PartialShape(std::vector<int64_t>{})
                         : PartialShape({n}));
  }
  return absl::OkStatus();
}

absl::Status CombinedNmsShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 4));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 3));
  for (int i = 2; i < 6; ++i) WEFT_RETURN_IF_ERROR(c->WithRank(i, 0));
  const int64_t batch = DimOr(c->input(0), 0);
  int64_t total = -1;
  bool pad_per_class = false;
  WEFT_RETURN_IF_ERROR(c->GetAttr("pad_per_class", &pad_per_class));
  if (const Tensor* t = c->input_tensor(3);
      !pad_per_class && t != nullptr && t->NumElements() == 1) {
    total = t->data<int32_t>()[0];
  }
  c->set_output(0, PartialShape({batch, total, 4}));
  c->set_output(1, PartialShape({batch, total}));
  c->set_output(2, PartialShape({batch, total}));
  c->set_output(3, PartialShape({batch}));
  return absl::OkStatus();
}

absl::Status PatchesShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 4));
  std::vector<int64_t> k, s, r;
  std::string padding;
  WEFT_RETURN_IF_ERROR(c->GetAttr("ksizes", &k));
  WEFT_RETURN_IF_ERROR(c->GetAttr("strides", &s));
  WEFT_RETURN_IF_ERROR(c->GetAttr("rates", &r));
  WEFT_RETURN_IF_ERROR(c->GetAttr("padding", &padding));
  if (k.size() != 4 || s.size() != 4 || r.size() != 4) {
    return absl::InvalidArgumentError(
        "ExtractImagePatches requires the ksizes, strides and rates "
        "attributes to have 4 elements");
  }
  if (k[0] != 1 || k[3] != 1 || s[0] != 1 || s[3] != 1 || r[0] != 1 ||
      r[3] != 1) {
    return absl::UnimplementedError(
        "Only support ksizes, strides and rates across rows and cols");
  }
  const PartialShape& in = c->input(0);
  std::vector<int64_t> out = {DimOr(in, 0), -1, -1, -1};
  for (int d = 1; d <= 2; ++d) {
    const int64_t n = DimOr(in, d);
    if (n < 0 || k[d] <= 0 || s[d] <= 0 || r[d] <= 0) continue;
    const int64_t eff = k[d] + (k[d] - 1) * (r[d] - 1);
    out[d] = padding == "VALID" ? (n - eff + s[d]) / s[d] : (n + s[d] - 1) / s[d];
    if (out[d] < 0) out[d] = 0;
  }
  if (DimOr(in, 3) >= 0) out[3] = k[1] * k[2] * DimOr(in, 3);
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

constexpr char kReal[] =
    "{uint8, uint16, int8, int16, int32, int64, half, float, double}";

void RegisterColorOps(OpRegistry* r) {
  r->Register(OpDefBuilder("AdjustContrastv2")
                  .Input("images: T")
                  .Input("contrast_factor: float")
                  .Output("output: T")
                  .Attr("T: {half, float} = DT_FLOAT"),
              SameAsInput0);
  r->Register(OpDefBuilder("AdjustContrast")
                  .Input("images: T")
                  .Input("contrast_factor: float")
                  .Input("min_value: float")
                  .Input("max_value: float")
                  .Output("output: float")
                  .Attr("T: {uint8, int8, int16, int32, int64, float, double}"),
              SameAsInput0);
  r->Register(OpDefBuilder("AdjustHue")
                  .Input("images: T")
                  .Input("delta: float")
                  .Output("output: T")
                  .Attr("T: {half, float} = DT_FLOAT"),
              ColorShape);
  r->Register(OpDefBuilder("AdjustSaturation")
                  .Input("images: T")
                  .Input("scale: float")
                  .Output("output: T")
                  .Attr("T: {half, float} = DT_FLOAT"),
              ColorShape);
  for (const char* op : {"RGBToHSV", "HSVToRGB"}) {
    r->Register(OpDefBuilder(op)
                    .Input("images: T")
                    .Output("output: T")
                    .Attr("T: {half, bfloat16, float, double} = DT_FLOAT"),
                ColorspaceShape);
  }
  for (const char* op : {"DrawBoundingBoxes", "DrawBoundingBoxesV2"}) {
    OpDefBuilder b(op);
    b.Input("images: T").Input("boxes: float");
    if (std::string(op) == "DrawBoundingBoxesV2") b.Input("colors: float");
    b.Output("output: T").Attr("T: {float, half} = DT_FLOAT");
    r->Register(b, SameAsInput0);
  }
}

void RegisterCropOps(OpRegistry* r) {
  r->Register(OpDefBuilder("CropAndResize")
                  .Input("image: T")
                  .Input("boxes: float")
                  .Input("box_ind: int32")
                  .Input("crop_size: int32")
                  .Output("crops: float")
                  .Attr(absl::StrCat("T: ", kReal))
                  .Attr("method: {'bilinear', 'nearest'} = 'bilinear'")
                  .Attr("extrapolation_value: float = 0"),
              CropAndResizeShape);
  r->Register(OpDefBuilder("CropAndResizeGradImage")
                  .Input("grads: float")
                  .Input("boxes: float")
                  .Input("box_ind: int32")
                  .Input("image_size: int32")
                  .Output("output: T")
                  .Attr("T: {float, half, double}")
                  .Attr("method: {'bilinear', 'nearest'} = 'bilinear'"),
              CropGradImageShape);
  r->Register(OpDefBuilder("CropAndResizeGradBoxes")
                  .Input("grads: float")
                  .Input("image: T")
                  .Input("boxes: float")
                  .Input("box_ind: int32")
                  .Output("output: float")
                  .Attr(absl::StrCat("T: ", kReal))
                  .Attr("method: {'bilinear'} = 'bilinear'"),
              CropGradBoxesShape);
}

void RegisterNmsOps(OpRegistry* r) {
  r->Register(OpDefBuilder("NonMaxSuppression")
                  .Input("boxes: float")
                  .Input("scores: float")
                  .Input("max_output_size: int32")
                  .Output("selected_indices: int32")
                  .Attr("iou_threshold: float = 0.5"),
              NmsShape);
  for (int v = 2; v <= 4; ++v) {
    OpDefBuilder b(absl::StrCat("NonMaxSuppressionV", v));
    b.Input("boxes: T")
        .Input("scores: T")
        .Input("max_output_size: int32")
        .Input("iou_threshold: T_threshold");
    if (v >= 3) b.Input("score_threshold: T_threshold");
    b.Output("selected_indices: int32");
    if (v == 4) b.Output("valid_outputs: int32");
    b.Attr("T: {half, float} = DT_FLOAT")
        .Attr("T_threshold: {half, float} = DT_FLOAT");
    if (v == 4) b.Attr("pad_to_max_output_size: bool = false");
    r->Register(b, NmsShape);
  }
  r->Register(OpDefBuilder("NonMaxSuppressionV5")
                  .Input("boxes: T")
                  .Input("scores: T")
                  .Input("max_output_size: int32")
                  .Input("iou_threshold: T")
                  .Input("score_threshold: T")
                  .Input("soft_nms_sigma: T")
                  .Output("selected_indices: int32")
                  .Output("selected_scores: T")
                  .Output("valid_outputs: int32")
                  .Attr("T: {half, float} = DT_FLOAT")
                  .Attr("pad_to_max_output_size: bool = false"),
              NmsShape);
  r->Register(OpDefBuilder("NonMaxSuppressionWithOverlaps")
                  .Input("overlaps: float")
                  .Input("scores: float")
                  .Input("max_output_size: int32")
                  .Input("overlap_threshold: float")
                  .Input("score_threshold: float")
                  .Output("selected_indices: int32"),
              NmsShape);
  r->Register(OpDefBuilder("CombinedNonMaxSuppression")
                  .Input("boxes: float")
                  .Input("scores: float")
                  .Input("max_output_size_per_class: int32")
                  .Input("max_total_size: int32")
                  .Input("iou_threshold: float")
                  .Input("score_threshold: float")
                  .Output("nmsed_boxes: float")
                  .Output("nmsed_scores: float")
                  .Output("nmsed_classes: float")
                  .Output("valid_detections: int32")
                  .Attr("pad_per_class: bool = false")
                  .Attr("clip_boxes: bool = true"),
              CombinedNmsShape);
}

void RegisterResampleOps(OpRegistry* r) {
  constexpr char kResizeT[] =
      "T: {int8, uint8, int16, uint16, int32, int64, half, float, double, "
      "bfloat16}";
  r->Register(OpDefBuilder("ResizeArea")
                  .Input("images: T")
                  .Input("size: int32")
                  .Output("resized_images: float")
                  .Attr(kResizeT)
                  .Attr("align_corners: bool = false"),
              SizedShape);
  r->Register(OpDefBuilder("ResizeBicubic")
                  .Input("images: T")
                  .Input("size: int32")
                  .Output("resized_images: float")
                  .Attr(kResizeT)
                  .Attr("align_corners: bool = false")
                  .Attr("half_pixel_centers: bool = false"),
              SizedShape);
  r->Register(OpDefBuilder("ResizeBicubicGrad")
                  .Input("grads: float")
                  .Input("original_image: T")
                  .Output("output: T")
                  .Attr("T: {float, double}")
                  .Attr("align_corners: bool = false")
                  .Attr("half_pixel_centers: bool = false"),
              OriginalShape);
  r->Register(OpDefBuilder("ScaleAndTranslate")
                  .Input("images: T")
                  .Input("size: int32")
                  .Input("scale: float")
                  .Input("translation: float")
                  .Output("resized_images: float")
                  .Attr("T: {int8, uint8, int16, uint16, int32, int64, "
                        "bfloat16, half, float, double}")
                  .Attr("kernel_type: string = 'lanczos3'")
                  .Attr("antialias: bool = true"),
              SizedShape);
  r->Register(OpDefBuilder("ScaleAndTranslateGrad")
                  .Input("grads: T")
                  .Input("original_image: T")
                  .Input("scale: float")
                  .Input("translation: float")
                  .Output("output: T")
                  .Attr("T: {float}")
                  .Attr("kernel_type: string = 'lanczos3'")
                  .Attr("antialias: bool = true"),
              OriginalShape);
  r->Register(OpDefBuilder("ExtractImagePatches")
                  .Input("images: T")
                  .Output("patches: T")
                  .Attr("ksizes: list(int) >= 4")
                  .Attr("strides: list(int) >= 4")
                  .Attr("rates: list(int) >= 4")
                  .Attr("T: {bfloat16, half, float, double, int8, int16, "
                        "int32, int64, uint8, uint16, uint32, uint64, "
                        "complex64, complex128, bool}")
                  .Attr("padding: {'SAME', 'VALID'}"),
              PatchesShape);
}

}  // namespace

void RegisterImageOps(OpRegistry* r) {
  RegisterColorOps(r);
  RegisterCropOps(r);
  RegisterNmsOps(r);
  RegisterResampleOps(r);
}

}  // namespace weft
