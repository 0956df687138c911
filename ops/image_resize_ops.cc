// Image resizing: ResizeBilinear, ResizeNearestNeighbor and their gradients
// (tf.image.resize, Keras Resizing and UpSampling2D). OpDefs match
// TensorFlow 2.21's exactly (tests/ops/op_def_compat_test). Shape
// functions as TensorFlow's: images are NHWC of rank 4, `size` a vector of
// two int32 (height, width) whose values, when constant, give the output's
// spatial dims; ResizeBilinearGrad's output has original_image's shape.
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
  return s.known_rank() ? s.dim(i) : -1;
}

// [batch, size[0], size[1], channels] from images (input 0) and size
// (input 1).
absl::Status SizedImageShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 4));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  const PartialShape& size = c->input(1);
  if (size.known_rank() && size.dim(0) >= 0 && size.dim(0) != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Dimension must be 2 but is ", size.dim(0),
        " (size of ", c->node().op(), " must hold a height and a width)"));
  }
  int64_t h = -1, w = -1;
  if (const Tensor* t = c->input_tensor(1);
      t != nullptr && t->dtype() == DT_INT32 && t->NumElements() == 2) {
    h = t->data<int32_t>()[0];
    w = t->data<int32_t>()[1];
    if (h < 0 || w < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "size of ", c->node().op(), " must be non-negative, got [", h, ",",
          w, "]"));
    }
  }
  const PartialShape& images = c->input(0);
  c->set_output(0, PartialShape({DimOr(images, 0), h, w, DimOr(images, 3)}));
  return absl::OkStatus();
}

absl::Status BilinearGradShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 4));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 4));
  const PartialShape& original = c->input(1);
  c->set_output(0, original.known_rank() ? original
                                         : PartialShape({-1, -1, -1, -1}));
  return absl::OkStatus();
}

constexpr char kAlign[] = "align_corners: bool = false";
constexpr char kHalfPixel[] = "half_pixel_centers: bool = false";

}  // namespace

void RegisterImageResizeOps(OpRegistry* r) {
  r->Register(OpDefBuilder("ResizeBilinear")
                  .Input("images: T")
                  .Input("size: int32")
                  .Output("resized_images: float")
                  .Attr("T: {int8, uint8, int16, uint16, int32, int64, "
                        "bfloat16, half, float, double}")
                  .Attr(kAlign)
                  .Attr(kHalfPixel),
              SizedImageShape);
  r->Register(OpDefBuilder("ResizeBilinearGrad")
                  .Input("grads: float")
                  .Input("original_image: T")
                  .Output("output: T")
                  .Attr("T: {float, bfloat16, half, double}")
                  .Attr(kAlign)
                  .Attr(kHalfPixel),
              BilinearGradShape);
  r->Register(OpDefBuilder("ResizeNearestNeighbor")
                  .Input("images: T")
                  .Input("size: int32")
                  .Output("resized_images: T")
                  .Attr("T: {int8, uint8, int16, uint16, int32, int64, half, "
                        "float, double, bfloat16}")
                  .Attr(kAlign)
                  .Attr(kHalfPixel),
              SizedImageShape);
  r->Register(OpDefBuilder("ResizeNearestNeighborGrad")
                  .Input("grads: T")
                  .Input("size: int32")
                  .Output("output: T")
                  .Attr("T: {uint8, int8, int32, half, float, double, "
                        "bfloat16}")
                  .Attr(kAlign)
                  .Attr(kHalfPixel),
              SizedImageShape);
}

}  // namespace weft
