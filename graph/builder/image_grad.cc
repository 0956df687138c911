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
//     sum as a sparse matmul);
//   RGBToHSV -> TensorFlow's piecewise derivative (image_grad.py), term
//     for term and in its order of operations: which channel is the
//     largest and the smallest (ties broken R, G, B) selects the terms of
//     dV, dS and dH per channel, every reciprocal a DivNoNan(1, x) so
//     that ties and zeros give 0, not inf.
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

// RGBToHSV's gradient, built as TensorFlow's _RGBToHSVGrad builds it.
class RgbToHsvGrad {
 public:
  RgbToHsvGrad(const Scope& s, In in)
      : s_(s), t_(in.x[0].dtype) {
    r_ = Channel(in.x[0], 0);
    g_ = Channel(in.x[0], 1);
    b_ = Channel(in.x[0], 2);
    sat_ = Channel(in.y[0], 1);
    val_ = Channel(in.y[0], 2);
    r_big_ = Mask(GreaterEqual(s, r_, b_), GreaterEqual(s, r_, g_));
    g_big_ = Mask(Greater(s, g_, r_), GreaterEqual(s, g_, b_));
    b_big_ = Mask(Greater(s, b_, r_), Greater(s, b_, g_));
    r_small_ = Mask(Less(s, r_, b_), Less(s, r_, g_));
    g_small_ = Mask(LessEqual(s, g_, r_), Less(s, g_, b_));
    b_small_ = Mask(LessEqual(s, b_, r_), LessEqual(s, b_, g_));
  }

  Output Build(const Output& dy) {
    // dS/dc: c largest, (its share of the smallest) / c^2; c smallest,
    // -1 / the largest; 0 where c <= 0.
    auto ds = [&](const Output& c, const Output& big, const Output& small,
                  const Output& o1, const Output& o1_big, const Output& o1_small,
                  const Output& o2, const Output& o2_big,
                  const Output& o2_small) {
      Output share = AddV2(s_, Mul(s_, o1_small, o1), Mul(s_, o2_small, o2));
      Output largest = AddV2(s_, Mul(s_, o1_big, o1), Mul(s_, o2_big, o2));
      return Mul(s_, Positive(c),
                 AddV2(s_, Prod({big, share, Rcp(Square(s_, c))}),
                       Prod({small, K(-1), Rcp(largest)})));
    };
    Output ds_dr = ds(r_, r_big_, r_small_, g_, g_big_, g_small_, b_, b_big_, b_small_);
    Output ds_dg = ds(g_, g_big_, g_small_, r_, r_big_, r_small_, b_, b_big_, b_small_);
    Output ds_db = ds(b_, b_big_, b_small_, g_, g_big_, g_small_, r_, r_big_, r_small_);
    // dH/dc, five terms each (TensorFlow's dh_dX_1..5), over 360.
    auto first = [&](const Output& c, const Output& big, const Output& diff) {
      return Prod({Positive(c), big, K(-1), diff, Rcp(Square(s_, sat_)),
                   Rcp(Square(s_, val_))});
    };
    Output dh_dr = Hue({first(r_, r_big_, Sub(s_, g_, b_)),
                        Prod({Positive(g_), g_big_, r_small_, Sub(s_, b_, g_),
                              Rcp(Square(s_, Sub(s_, r_, g_)))}),
                        Prod({Positive(g_), g_big_, b_small_, K(-1),
                              Rcp(Sub(s_, g_, b_))}),
                        Prod({Positive(b_), b_big_, r_small_, Sub(s_, b_, g_),
                              Rcp(Square(s_, Sub(s_, b_, r_)))}),
                        Prod({Positive(b_), b_big_, g_small_,
                              Rcp(Sub(s_, b_, g_))})});
    Output dh_dg = Hue({first(g_, g_big_, Sub(s_, b_, r_)),
                        Prod({Positive(r_), r_big_, g_small_, Sub(s_, r_, b_),
                              Rcp(Square(s_, Sub(s_, r_, g_)))}),
                        Prod({Positive(r_), r_big_, b_small_,
                              Rcp(Sub(s_, r_, b_))}),
                        Prod({Positive(b_), b_big_, g_small_, Sub(s_, r_, b_),
                              Rcp(Square(s_, Sub(s_, b_, g_)))}),
                        Prod({Positive(b_), b_big_, r_small_, K(-1),
                              Rcp(Sub(s_, b_, r_))})});
    Output dh_db = Hue({first(b_, b_big_, Sub(s_, r_, g_)),
                        Prod({Positive(r_), r_big_, b_small_, Sub(s_, g_, r_),
                              Rcp(Square(s_, Sub(s_, r_, b_)))}),
                        Prod({Positive(r_), r_big_, g_small_, K(-1),
                              Rcp(Sub(s_, r_, g_))}),
                        Prod({Positive(g_), g_big_, b_small_, Sub(s_, g_, r_),
                              Rcp(Square(s_, Sub(s_, g_, b_)))}),
                        Prod({Positive(g_), g_big_, r_small_,
                              Rcp(Sub(s_, g_, r_))})});
    auto per_channel = [&](int i, const Output& dr, const Output& dg,
                           const Output& db) {
      const Output d = Channel(dy, i);
      return Pack(s_, {Mul(s_, d, dr), Mul(s_, d, dg), Mul(s_, d, db)}, -1);
    };
    return AddV2(s_,
                 AddV2(s_, per_channel(2, r_big_, g_big_, b_big_),
                       per_channel(1, ds_dr, ds_dg, ds_db)),
                 per_channel(0, dh_dr, dh_dg, dh_db));
  }

 private:
  Output K(float v) { return Cast(s_, Const(s_, v), t_); }
  Output Channel(const Output& v, int i) {
    return GatherV2(s_, v, Const(s_, i), Const(s_, -1));
  }
  Output Mask(const Output& a, const Output& b) {
    return Cast(s_, AddNode1(s_, "LogicalAnd", {a, b}, {}), t_);
  }
  Output Positive(const Output& v) { return Cast(s_, Greater(s_, v, K(0)), t_); }
  Output Rcp(const Output& v) { return AddNode1(s_, "DivNoNan", {K(1), v}, {}); }
  // Left to right, as Python's a * b * c.
  Output Prod(const std::vector<Output>& f) {
    Output p = f[0];
    for (size_t i = 1; i < f.size(); ++i) p = Mul(s_, p, f[i]);
    return p;
  }
  // (60 * t1 + ... + 60 * t5) / 360.
  Output Hue(const std::vector<Output>& terms) {
    Output sum = Mul(s_, K(60), terms[0]);
    for (size_t i = 1; i < terms.size(); ++i) {
      sum = AddV2(s_, sum, Mul(s_, K(60), terms[i]));
    }
    return RealDiv(s_, sum, K(360));
  }

  const Scope& s_;
  const DataType t_;
  Output r_, g_, b_, sat_, val_;
  Output r_big_, g_big_, b_big_, r_small_, g_small_, b_small_;
};

absl::Status RGBToHSVGradFn(const Scope& s, In in, Dx dx) {
  (*dx)[0] = RgbToHsvGrad(s, in).Build(in.dy[0]);
  return absl::OkStatus();
}

}  // namespace

void RegisterImageGrads(GradRegistry* r) {
  r->Register("CropAndResize", CropAndResizeGradFn);
  r->Register("ResizeBicubic", ResizeBicubicGradFn);
  r->Register("ScaleAndTranslate", ScaleAndTranslateGradFn);
  r->Register("ExtractImagePatches", ExtractImagePatchesGradFn);
  r->Register("RGBToHSV", RGBToHSVGradFn);
  for (const char* op : {"HSVToRGB", "DrawBoundingBoxes", "NonMaxSuppression",
                         "NonMaxSuppressionV2", "NonMaxSuppressionWithOverlaps"}) {
    r->RegisterNoGradient(op);
  }
}

}  // namespace weft
