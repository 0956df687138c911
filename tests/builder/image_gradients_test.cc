// Numeric checks (grad_check.h) of the builder's gradients of the image
// ops: CropAndResize (image and boxes, bilinear), ResizeBicubic (legacy,
// align_corners, half_pixel_centers), ScaleAndTranslate (a few kernels, with and without antialiasing) and
// ExtractImagePatches (VALID and SAME, strides and rates): each graph is
// differentiated with AddGradients and run, and the gradients match
// central differences. The outputs are weighted by a second input so that
// the checked sums depend on every position.
#include <string>
#include <vector>

#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "gtest/gtest.h"
#include "tests/builder/grad_check.h"

namespace weft {
namespace {

using testing_builder::Check;
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

}  // namespace
}  // namespace weft
