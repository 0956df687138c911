// Gradients of the image ops (ops/image_ops.cc), as TensorFlow's Python
// builds them:
//   CropAndResize -> CropAndResizeGradImage(dy, boxes, box_ind,
//     Shape(image)) for half/float/double images (none for integer ones)
//     and CropAndResizeGradBoxes(dy, image, boxes, box_ind) for the boxes;
//   ResizeBicubic -> ResizeBicubicGrad(dy, images) for float and double
//     images; ScaleAndTranslate -> ScaleAndTranslateGrad(dy, images,
//     scale, translation) with the node's kernel_type and antialias;
//   ExtractImagePatches -> each patch element's gradient summed back into
//     the pixel it was copied from: the op applied to an image of pixel
//     numbers (1-based; 0 marks padding) says where, and an
//     UnsortedSegmentSum over those numbers adds (TensorFlow does the same
//     sum as a sparse matmul).
// HSVToRGB, DrawBoundingBoxes and the older suppressions (NonMaxSuppression,
// V2, WithOverlaps) are marked not differentiable. The ops TensorFlow
// leaves without any entry are listed in tests/builder/gradients_test.cc.
#include <string>
#include <vector>

#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using grad_internal::CopyAttrs;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

bool IsFloating(DataType t) { return t == DT_HALF || t == DT_FLOAT || t == DT_DOUBLE; }

absl::Status CropAndResizeGradFn(const Scope& s, In in, Dx dx) {
  const Output& image = in.x[0];
  if (IsFloating(image.dtype)) {
    AttrList attrs = CopyAttrs(*in.node, {"method"});
    attrs.push_back({"T", Attr(image.dtype)});
    (*dx)[0] = AddNode1(s, "CropAndResizeGradImage",
                        {in.dy[0], in.x[1], in.x[2], Shape(s, image)}, attrs);
  }
  (*dx)[1] = AddNode1(s, "CropAndResizeGradBoxes", {in.dy[0], image, in.x[1], in.x[2]},
                      {{"method", Attr("bilinear")}});
  return absl::OkStatus();
}

absl::Status ResizeBicubicGradFn(const Scope& s, In in, Dx dx) {
  if (in.x[0].dtype == DT_FLOAT || in.x[0].dtype == DT_DOUBLE) {
    (*dx)[0] = AddNode1(s, "ResizeBicubicGrad", {in.dy[0], in.x[0]},
                        CopyAttrs(*in.node, {"align_corners", "half_pixel_centers"}));
  }
  return absl::OkStatus();
}

absl::Status ScaleAndTranslateGradFn(const Scope& s, In in, Dx dx) {
  (*dx)[0] = AddNode1(s, "ScaleAndTranslateGrad", {in.dy[0], in.x[0], in.x[2], in.x[3]},
                      CopyAttrs(*in.node, {"kernel_type", "antialias"}));
  return absl::OkStatus();
}

absl::Status ExtractImagePatchesGradFn(const Scope& s, In in, Dx dx) {
  const Output& x = in.x[0];
  Output shape = Shape(s, x, DT_INT64);
  auto dim = [&](int i) {
    return Reshape(s, Slice(s, shape, Const(s, {int64_t{i}}), Const(s, {int64_t{1}})),
                   Const(s, std::vector<int64_t>{}, TensorShape({0})));
  };
  Output batch = dim(0), rows = dim(1), cols = dim(2), channels = dim(3);
  Output pixels = Mul(s, rows, cols);
  Output one = Const(s, int64_t{1});
  // Pixel numbers 1..rows*cols as a [1, rows, cols, 1] image.
  Output numbers = Reshape(
      s, AddNode1(s, "Range", {one, AddV2(s, pixels, one), one}, {}),
      Pack(s, {one, rows, cols, one}));
  Output where = AddNode1(s, "ExtractImagePatches", {numbers}, CopyAttrs(*in.node, {"ksizes", "strides", "rates", "padding"}));
  // dy as [patch elements, batch, channels], matching `where` flattened.
  Output dy = Reshape(s, in.dy[0], Pack(s, {batch, Const(s, int64_t{-1}), channels}));
  dy = Transpose(s, dy, Const(s, {1, 0, 2}));
  Output sums = AddNode1(s, "UnsortedSegmentSum",
                         {dy, Reshape(s, where, Const(s, {int64_t{-1}})), AddV2(s, pixels, one)},
                         {});
  // Drop the padding's row 0; [rows, cols, batch, channels] -> NHWC.
  sums = Slice(s, sums, Const(s, {int64_t{1}, int64_t{0}, int64_t{0}}),
               Const(s, {int64_t{-1}, int64_t{-1}, int64_t{-1}}));
  sums = Reshape(s, sums, Pack(s, {rows, cols, batch, channels}));
  (*dx)[0] = Transpose(s, sums, Const(s, {2, 0, 1, 3}));
  return absl::OkStatus();
}

}  // namespace

void RegisterImageGrads(GradRegistry* r) {
  r->Register("CropAndResize", CropAndResizeGradFn);
  r->Register("ResizeBicubic", ResizeBicubicGradFn);
  r->Register("ScaleAndTranslate", ScaleAndTranslateGradFn);
  r->Register("ExtractImagePatches", ExtractImagePatchesGradFn);
  for (const char* op : {"HSVToRGB", "DrawBoundingBoxes", "NonMaxSuppression",
                         "NonMaxSuppressionV2", "NonMaxSuppressionWithOverlaps"}) {
    r->RegisterNoGradient(op);
  }
}

}  // namespace weft
