// Image codecs: DecodePng/EncodePng, DecodeJpeg/EncodeJpeg and friends,
// DecodeBmp, DecodeGif and DecodeImage (tf.io.decode_*/encode_*). OpDefs
// match TensorFlow 2.21's exactly (tests/ops/op_def_compat_test). Shape
// functions as TensorFlow's: encoded images are scalar strings; a decoded
// image is [height, width, channels] with channels known when the attr
// fixes it (DecodeGif is [frames, height, width, 3]; DecodeImage's rank is
// unknown while expand_animations may give a GIF a frame dimension).
#include <cstdint>
#include <vector>

#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// [?, ?, channels] (channels unknown when the attr is 0) from a scalar.
absl::Status DecodedImageShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 0));
  int64_t channels = 0;
  WEFT_RETURN_IF_ERROR(c->GetAttr("channels", &channels));
  c->set_output(0, PartialShape({-1, -1, channels == 0 ? -1 : channels}));
  return absl::OkStatus();
}

absl::Status DecodeImageShape(InferenceContext* c) {
  bool expand = true;
  WEFT_RETURN_IF_ERROR(c->GetAttr("expand_animations", &expand));
  if (!expand) return DecodedImageShape(c);
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 0));
  c->set_output(0, PartialShape::UnknownRank());
  return absl::OkStatus();
}

absl::Status DecodeAndCropShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  return DecodedImageShape(c);
}

absl::Status DecodeGifShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 0));
  c->set_output(0, PartialShape({-1, -1, -1, 3}));
  return absl::OkStatus();
}

// EncodePng takes [..., height, width, channels]: one string per image.
absl::Status EncodePngShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, 3));
  const PartialShape& image = c->input(0);
  if (!image.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  std::vector<int64_t> batch(image.dims().begin(), image.dims().end() - 3);
  c->set_output(0, PartialShape(batch));
  return absl::OkStatus();
}

absl::Status EncodeJpegShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 3));
  if (c->num_inputs() > 1) WEFT_RETURN_IF_ERROR(c->WithRank(1, 0));
  c->set_output(0, PartialShape({}));
  return absl::OkStatus();
}

absl::Status ExtractJpegShapeShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 0));
  c->set_output(0, PartialShape({3}));
  return absl::OkStatus();
}

// The attrs DecodeJpeg and DecodeAndCropJpeg share, in TensorFlow's order.
OpDefBuilder& JpegDecodeAttrs(OpDefBuilder& b) {
  return b.Attr("channels: int = 0")
      .Attr("ratio: int = 1")
      .Attr("fancy_upscaling: bool = true")
      .Attr("try_recover_truncated: bool = false")
      .Attr("acceptable_fraction: float = 1.0")
      .Attr("dct_method: string = ''");
}

}  // namespace

void RegisterImageCodecOps(OpRegistry* r) {
  r->Register(OpDefBuilder("DecodePng")
                  .Input("contents: string")
                  .Output("image: dtype")
                  .Attr("channels: int = 0")
                  .Attr("dtype: {uint8, uint16} = DT_UINT8"),
              DecodedImageShape);
  r->Register(OpDefBuilder("EncodePng")
                  .Input("image: T")
                  .Output("contents: string")
                  .Attr("compression: int = -1")
                  .Attr("T: {uint8, uint16} = DT_UINT8"),
              EncodePngShape);
  OpDefBuilder decode_jpeg("DecodeJpeg");
  decode_jpeg.Input("contents: string").Output("image: uint8");
  r->Register(JpegDecodeAttrs(decode_jpeg), DecodedImageShape);
  OpDefBuilder crop_jpeg("DecodeAndCropJpeg");
  crop_jpeg.Input("contents: string")
      .Input("crop_window: int32")
      .Output("image: uint8");
  r->Register(JpegDecodeAttrs(crop_jpeg), DecodeAndCropShape);
  r->Register(OpDefBuilder("EncodeJpeg")
                  .Input("image: uint8")
                  .Output("contents: string")
                  .Attr("format: {'', 'grayscale', 'rgb'} = ''")
                  .Attr("quality: int = 95")
                  .Attr("progressive: bool = false")
                  .Attr("optimize_size: bool = false")
                  .Attr("chroma_downsampling: bool = true")
                  .Attr("density_unit: {'in', 'cm'} = 'in'")
                  .Attr("x_density: int = 300")
                  .Attr("y_density: int = 300")
                  .Attr("xmp_metadata: string = ''"),
              EncodeJpegShape);
  r->Register(OpDefBuilder("EncodeJpegVariableQuality")
                  .Input("images: uint8")
                  .Input("quality: int32")
                  .Output("contents: string"),
              EncodeJpegShape);
  r->Register(OpDefBuilder("ExtractJpegShape")
                  .Input("contents: string")
                  .Output("image_shape: output_type")
                  .Attr("output_type: {int32, int64} = DT_INT32"),
              ExtractJpegShapeShape);
  r->Register(OpDefBuilder("DecodeBmp")
                  .Input("contents: string")
                  .Output("image: uint8")
                  .Attr("channels: int = 0"),
              DecodedImageShape);
  r->Register(OpDefBuilder("DecodeGif")
                  .Input("contents: string")
                  .Output("image: uint8"),
              DecodeGifShape);
  r->Register(OpDefBuilder("DecodeImage")
                  .Input("contents: string")
                  .Output("image: dtype")
                  .Attr("channels: int = 0")
                  .Attr("dtype: {uint8, uint16, float} = DT_UINT8")
                  .Attr("expand_animations: bool = true"),
              DecodeImageShape);
}

}  // namespace weft
