// Numeric checks (grad_check.h) of the builder gradients of Conv3D and its
// backprops, MaxPool3D, AvgPool3D and AvgPool3DGrad, LRN and
// MaxPoolWithArgmax: SAME and VALID, strides 1 and 2, a dilation.
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "gtest/gtest.h"
#include "tests/builder/grad_check.h"

namespace weft {
namespace {

using testing_builder::Check;
using testing_builder::S;
using testing_builder::X;
using Ints = std::vector<int64_t>;

AttrList ConvAttrs(int64_t stride, const char* padding, int64_t dilation = 1) {
  return {{"strides", Attr(Ints{1, stride, stride, stride, 1})},
          {"dilations", Attr(Ints{1, dilation, 1, dilation, 1})},
          {"padding", Attr(padding)}};
}

TEST(Nn3dGradientsTest, Conv3D) {
  for (const char* padding : {"SAME", "VALID"}) {
    for (int64_t stride : {1, 2}) {
      Check({{2, 4, 3, 5, 2}, {2, 2, 3, 2, 3}}, [=](S s, X x) {
        Output y = AddNode1(s, "Conv3D", {x[0], x[1]}, ConvAttrs(stride, padding));
        return Mul(s, y, y);
      });
    }
  }
  Check({{1, 5, 3, 5, 1}, {2, 2, 2, 1, 2}}, [=](S s, X x) {
    Output y = AddNode1(s, "Conv3D", {x[0], x[1]}, ConvAttrs(1, "SAME", 2));
    return Mul(s, y, y);
  });
}

// The backprops are linear in their tensor inputs.
TEST(Nn3dGradientsTest, Conv3DBackprops) {
  for (int64_t stride : {1, 2}) {
    // input 1x4x3x5x2, filter 2x2x3x2x3: SAME output 1 x 4/s x 3/s x 5/s x 3.
    const int64_t o[3] = {(4 + stride - 1) / stride, (3 + stride - 1) / stride,
                          (5 + stride - 1) / stride};
    const TensorShape dy({1, o[0], o[1], o[2], 3});
    Check({{2, 2, 3, 2, 3}, dy}, [=](S s, X x) {
      Output g = AddNode1(s, "Conv3DBackpropInputV2",
                          {Const(s, {1, 4, 3, 5, 2}), x[0], x[1]}, ConvAttrs(stride, "SAME"));
      return Mul(s, g, g);
    });
    Check({{1, 4, 3, 5, 2}, dy}, [=](S s, X x) {
      Output g = AddNode1(s, "Conv3DBackpropFilterV2",
                          {x[0], Const(s, {2, 2, 3, 2, 3}), x[1]}, ConvAttrs(stride, "SAME"));
      return Mul(s, g, g);
    });
  }
}

AttrList PoolAttrs(int64_t k, int64_t stride, const char* padding) {
  return {{"ksize", Attr(Ints{1, k, k, k, 1})},
          {"strides", Attr(Ints{1, stride, stride, stride, 1})},
          {"padding", Attr(padding)}};
}

TEST(Nn3dGradientsTest, Pool3D) {
  for (const char* padding : {"SAME", "VALID"}) {
    // Few entries, so no two in a window are within the float check's step.
    Check({{1, 4, 2, 3, 2}}, [=](S s, X x) {
      return Square(s, AddNode1(s, "MaxPool3D", {x[0]}, PoolAttrs(2, 2, padding)));
    });
    Check({{2, 4, 3, 5, 2}}, [=](S s, X x) {
      return Square(s, AddNode1(s, "AvgPool3D", {x[0]}, PoolAttrs(3, 2, padding)));
    });
  }
  // AvgPool3DGrad, linear in grad: SAME 3x3x3 windows, stride 2.
  Check({{2, 2, 2, 3, 2}}, [=](S s, X x) {
    Output g = AddNode1(s, "AvgPool3DGrad", {Const(s, {2, 4, 3, 5, 2}), x[0]},
                        PoolAttrs(3, 2, "SAME"));
    return Mul(s, g, g);
  });
}

TEST(Nn3dGradientsTest, Lrn) {
  for (float beta : {0.5f, 0.75f}) {
    Check({{2, 2, 1, 6}}, [=](S s, X x) {
      Output y = AddNode1(s, "LRN", {x[0]},
                          {{"depth_radius", Attr(int64_t{2})}, {"bias", Attr(1.5f)},
                           {"alpha", Attr(0.3f)}, {"beta", Attr(beta)}});
      return Mul(s, y, x[0]);
    });
  }
}

TEST(Nn3dGradientsTest, MaxPoolWithArgmax) {
  for (bool batch : {false, true}) {
    for (const char* padding : {"SAME", "VALID"}) {
      Check({{2, 4, 5, 2}}, [=](S s, X x) {
        std::vector<Output> y = AddNode(s, "MaxPoolWithArgmax", {x[0]},
                                        {{"ksize", Attr(Ints{1, 2, 2, 1})},
                                         {"strides", Attr(Ints{1, 2, 2, 1})},
                                         {"padding", Attr(padding)},
                                         {"include_batch_in_index", Attr(batch)}});
        return Square(s, y[0]);
      });
    }
  }
}

}  // namespace
}  // namespace weft
