// Numeric checks (grad_check.h) of the builder's gradients of
// FusedBatchNorm/V2/V3 (training and inference, NHWC and NCHW) and of
// ResizeBilinear and ResizeNearestNeighbor: a graph through each is
// differentiated with AddGradients and run, and the gradients of x, scale,
// offset and the image match central differences. The kernels have no
// double, so the check runs in float.
#include <string>
#include <vector>

#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "gtest/gtest.h"
#include "tests/builder/grad_check.h"

namespace weft {
namespace {

using testing_builder::Check;
using testing_builder::Range;
using testing_builder::S;
using testing_builder::X;

// y * w summed: weights make the normalised output's gradient non-trivial
// (sum(y) alone does not depend on x in training).
Output BatchNorm(S s, X x, const char* op, bool training, const char* format) {
  const std::vector<float> mean = {0.1f, -0.2f, 0.3f};
  const std::vector<float> var = {0.5f, 1.0f, 2.0f};
  Output m = training ? Const(s, std::vector<float>{}, TensorShape({0}))
                      : Const(s, mean, TensorShape({3}));
  Output v = training ? Const(s, std::vector<float>{}, TensorShape({0}))
                      : Const(s, var, TensorShape({3}));
  AttrList attrs = {{"is_training", Attr(training)},
                    {"data_format", Attr(format)},
                    {"epsilon", Attr(0.01f)}};
  std::vector<Output> out = AddNode(s, op, {x[0], x[1], x[2], m, v}, attrs);
  if (out.empty()) return Output();
  return Mul(s, out[0], x[3]);
}

TEST(NormResizeGradientsTest, FusedBatchNorm) {
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    for (bool training : {true, false}) {
      for (const char* format : {"NHWC", "NCHW"}) {
        SCOPED_TRACE(std::string(op) + (training ? " training " : " inference ") + format);
        const TensorShape x = std::string(format) == "NHWC" ? TensorShape({2, 2, 3, 3})
                                                            : TensorShape({2, 3, 2, 3});
        Check({x, {3}, {3}, x}, [&](S s, X in) { return BatchNorm(s, in, op, training, format); });
      }
    }
  }
}

TEST(NormResizeGradientsTest, Resizes) {
  for (bool align : {false, true}) {
    for (bool half : {false, true}) {
      if (align && half) continue;  // TensorFlow rejects the pair
      for (const char* op : {"ResizeBilinear", "ResizeNearestNeighbor"}) {
        SCOPED_TRACE(std::string(op) + (align ? " align" : "") + (half ? " half" : ""));
        Check({{2, 3, 4, 2}, {2, 5, 3, 2}}, [&](S s, X in) {
          Output y = AddNode1(s, op, {in[0], Const(s, {5, 3})},
                              {{"align_corners", Attr(align)},
                               {"half_pixel_centers", Attr(half)}});
          return Mul(s, y, in[1]);
        });
      }
    }
  }
}

}  // namespace
}  // namespace weft
