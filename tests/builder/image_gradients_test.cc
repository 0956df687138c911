// Numeric checks (grad_check.h) of the builder's gradients of the image
// ops: CropAndResize (image and boxes, bilinear), ResizeBicubic (legacy,
// align_corners, half_pixel_centers), ScaleAndTranslate (a few kernels, with and without antialiasing) and
// ExtractImagePatches (VALID and SAME, strides and rates) and RGBToHSV:
// each graph is differentiated with AddGradients and run, and the
// gradients match central differences. RGBToHSV's gradient also matches
// TensorFlow 2.21's values where channels tie or are zero (its tie rule). The outputs are weighted by a second input so that
// the checked sums depend on every position.
#include <cmath>
#include <string>
#include <vector>

#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "gtest/gtest.h"
#include "tests/builder/builder_test_util.h"
#include "tests/builder/grad_check.h"

namespace weft {
namespace {

using testing_builder::Check;
using testing_builder::Range;
using testing_builder::RunGraph;
using testing_builder::Values;
using testing_builder::S;
using testing_builder::X;

TEST(ImageGradientsTest, CropAndResize) {
  // Bilinear only: with "nearest" the boxes' gradient is TensorFlow's
  // bilinear approximation, not the (zero) derivative; the nearest image
  // gradient is checked against TensorFlow in the conformance test.
  for (const char* method : {"bilinear"}) {
    SCOPED_TRACE(method);
    Check({{2, 4, 5, 2}, {3, 4}, {3, 3, 4, 2}}, [&](S s, X in) {
      // Boxes near fixed ones, inside the image, so no sample crosses the
      // extrapolation edge.
      Output base = Const(s, std::vector<float>{0.1f, 0.1f, 0.8f, 0.9f, 0.2f, 0.3f, 0.7f, 0.6f,
                                                0.9f, 0.8f, 0.15f, 0.2f},
                          TensorShape({3, 4}));
      Output boxes = AddV2(s, base, Mul(s, Const(s, 0.05f), in[1]));
      Output crops = AddNode1(s, "CropAndResize",
                              {in[0], boxes, Const(s, {0, 1, 1}), Const(s, {3, 4})},
                              {{"method", Attr(method)}, {"extrapolation_value", Attr(0.0f)}});
      return Mul(s, crops, in[2]);
    });
  }
}

TEST(ImageGradientsTest, ResizeBicubic) {
  for (int mode = 0; mode < 3; ++mode) {
    SCOPED_TRACE(mode);
    Check({{2, 4, 3, 2}, {2, 6, 5, 2}}, [&](S s, X in) {
      Output y = AddNode1(s, "ResizeBicubic", {in[0], Const(s, {6, 5})},
                          {{"align_corners", Attr(mode == 1)},
                           {"half_pixel_centers", Attr(mode == 2)}});
      return Mul(s, y, in[1]);
    });
  }
}

TEST(ImageGradientsTest, ScaleAndTranslate) {
  for (const char* kernel : {"lanczos3", "triangle", "keyscubic"}) {
    for (bool antialias : {true, false}) {
      SCOPED_TRACE(std::string(kernel) + (antialias ? " antialias" : ""));
      Check({{1, 5, 6, 2}, {1, 3, 8, 2}}, [&](S s, X in) {
        Output y = AddNode1(s, "ScaleAndTranslate",
                            {in[0], Const(s, {3, 8}), Const(s, {0.6f, 1.3f}),
                             Const(s, {0.2f, -0.5f})},
                            {{"kernel_type", Attr(kernel)}, {"antialias", Attr(antialias)}});
        return Mul(s, y, in[1]);
      });
    }
  }
}

TEST(ImageGradientsTest, ExtractImagePatches) {
  struct Case {
    const char* padding;
    int64_t stride, rate;
    TensorShape out;
  };
  for (const Case& c : {Case{"VALID", 1, 1, {2, 4, 5, 12}}, Case{"SAME", 2, 1, {2, 3, 3, 12}},
                        Case{"VALID", 1, 2, {2, 3, 4, 12}}}) {
    SCOPED_TRACE(std::string(c.padding) + " stride " + std::to_string(c.stride) + " rate " +
                 std::to_string(c.rate));
    Check({{2, 5, 6, 3}, c.out}, [&](S s, X in) {
      Output p = AddNode1(s, "ExtractImagePatches", {in[0]},
                          {{"ksizes", Attr(std::vector<int64_t>{1, 2, 2, 1})},
                           {"strides", Attr(std::vector<int64_t>{1, c.stride, c.stride, 1})},
                           {"rates", Attr(std::vector<int64_t>{1, c.rate, c.rate, 1})},
                           {"padding", Attr(c.padding)}});
      return Mul(s, p, in[1]);
    });
  }
}

TEST(ImageGradientsTest, RGBToHSV) {
  // Positive, distinct channels: away from the ties where the derivative
  // jumps.
  Check({{4, 5, 3}, {4, 5, 3}}, [&](S s, X in) {
    return Mul(s, AddNode1(s, "RGBToHSV", {in[0]}, {}), in[1]);
  }, Range::kPositive);
}

TEST(ImageGradientsTest, RGBToHSVTiesAndZerosAsTensorFlow) {
  Scope s = Scope::NewRoot();
  // [1, 6, 3]: Weft's RGBToHSV wants rank >= 3 (TensorFlow's, >= 1).
  Output x = Const(s, std::vector<float>{0.5f, 0.5f, 0.5f, 0, 0, 0, 1, 0.2f, 0.2f,
                                         0.3f, 0.9f, 0.9f, 0.25f, 0.75f, 0.5f,
                                         0.8f, 0.1f, 0.4f},
                   TensorShape({1, 6, 3}));
  // Weights 1, 2, 3 for h, s, v of every pixel.
  Output y = Mul(s, AddNode1(s, "RGBToHSV", {x}, {}), Const(s, {1.f, 2.f, 3.f}));
  std::vector<Output> grads;
  ASSERT_TRUE(AddGradients(s, {y}, {x}, {}, &grads).ok()) << s.status();
  absl::StatusOr<std::vector<Tensor>> out = RunGraph(s, {}, grads);
  ASSERT_TRUE(out.ok()) << out.status();
  // TensorFlow 2.21, tf.GradientTape over the same graph.
  const std::vector<double> want = {
      7.0, 0.0, -4.0, 3.0, 0.0, 0.0, 3.4000000953674316, 0.2083333283662796,
      -2.2083332538604736, -2.222222328186035, 3.4629628658294678,
      0.2777777910232544, -2.8333334922790527, 3.722222089767456,
      0.3333333432674408, 3.4145407676696777, -2.363945484161377,
      -0.2380952388048172};
  const std::vector<double> got = Values(out->at(0));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 2e-6 * (1 + std::abs(want[i]))) << i;
  }
}

}  // namespace
}  // namespace weft
