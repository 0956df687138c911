// Numeric checks (grad_check.h) of second derivatives: the gradients of the
// gradient ops (activation and unary-math *Grad ops, BiasAddGrad, the
// Conv2D backprops, AvgPoolGrad, MaxPoolGrad, MaxPoolGradGrad,
// StridedSliceGrad), and AddGradients
// applied to its own output (a gradient penalty).
#include "graph/builder/array_ops.h"
#include "graph/builder/gradients.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "gtest/gtest.h"
#include "tests/builder/grad_check.h"

namespace weft {
namespace {

using testing_builder::Check;
using testing_builder::Range;
using testing_builder::S;
using testing_builder::X;

TEST(GradGradTest, PiecewiseLinearActivationGrads) {
  for (const char* op : {"ReluGrad", "Relu6Grad", "LeakyReluGrad"}) {
    Check({{2, 3}, {2, 3}}, [op](S s, X x) {
      Output features = Mul(s, x[1], Const(s, 5.0));  // crosses Relu6's cap
      return Mul(s, AddNode1(s, op, {x[0], features}), x[0]);
    });
  }
}

TEST(GradGradTest, ExpLinearAndSmoothActivationGrads) {
  for (const char* op : {"EluGrad", "SeluGrad"}) {
    Check({{2, 3}, {2, 3}}, [op](S s, X x) {
      const char* forward = std::string(op) == "EluGrad" ? "Elu" : "Selu";
      Output outputs = AddNode1(s, forward, {x[1]});
      return Mul(s, AddNode1(s, op, {x[0], outputs}), x[0]);
    });
  }
  for (const char* op : {"SoftplusGrad", "SoftsignGrad"}) {
    Check({{2, 3}, {2, 3}}, [op](S s, X x) {
      return Mul(s, AddNode1(s, op, {x[0], x[1]}), x[0]);
    });
  }
}

TEST(GradGradTest, UnaryMathGrads) {
  for (const char* op : {"TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad",
                         "ReciprocalGrad"}) {
    Check({{2, 3}, {2, 3}}, [op](S s, X x) {
      return Mul(s, AddNode1(s, op, {x[0], x[1]}), x[1]);
    }, Range::kPositive);
  }
}

TEST(GradGradTest, BiasAddGrad) {
  Check({{2, 3, 4}}, [](S s, X x) {
    return Square(s, BiasAddGrad(s, Square(s, x[0])));
  });
  Check({{2, 3, 2, 2}}, [](S s, X x) {
    Output g = AddNode1(s, "BiasAddGrad", {Square(s, x[0])},
                        {{"data_format", Attr("NCHW")}});
    return Square(s, g);
  });
}

AttrList ConvAttrs(int64_t stride, const char* padding) {
  return {{"strides", Attr(std::vector<int64_t>{1, stride, stride, 1})},
          {"padding", Attr(padding)}};
}

TEST(GradGradTest, Conv2DBackprops) {
  for (const char* padding : {"SAME", "VALID"}) {
    const int64_t out = std::string(padding) == "SAME" ? 3 : 2;
    // input [2, 5, 5, 2], filter [3, 3, 2, 3], stride 2.
    Check({{3, 3, 2, 3}, {2, out, out, 3}}, [=](S s, X x) {
      Output dx = AddNode1(s, "Conv2DBackpropInput",
                           {Const(s, {2, 5, 5, 2}), x[0], x[1]},
                           ConvAttrs(2, padding));
      return Mul(s, dx, dx);
    });
    Check({{2, 5, 5, 2}, {2, out, out, 3}}, [=](S s, X x) {
      Output df = AddNode1(s, "Conv2DBackpropFilter",
                           {x[0], Const(s, {3, 3, 2, 3}), x[1]},
                           ConvAttrs(2, padding));
      return Mul(s, df, df);
    });
  }
}

TEST(GradGradTest, DepthwiseConv2dNativeBackprops) {
  for (const char* padding : {"SAME", "VALID"}) {
    const int64_t out = std::string(padding) == "SAME" ? 3 : 2;
    // input [2, 5, 5, 2], filter [3, 3, 2, 2] (multiplier 2), stride 2.
    Check({{3, 3, 2, 2}, {2, out, out, 4}}, [=](S s, X x) {
      Output dx = AddNode1(s, "DepthwiseConv2dNativeBackpropInput",
                           {Const(s, {2, 5, 5, 2}), x[0], x[1]},
                           ConvAttrs(2, padding));
      return Mul(s, dx, dx);
    });
    Check({{2, 5, 5, 2}, {2, out, out, 4}}, [=](S s, X x) {
      Output df = AddNode1(s, "DepthwiseConv2dNativeBackpropFilter",
                           {x[0], Const(s, {3, 3, 2, 2}), x[1]},
                           ConvAttrs(2, padding));
      return Mul(s, df, df);
    });
  }
}

TEST(GradGradTest, AvgPoolGrad) {
  // orig input [1, 4, 5, 2], 2x2 windows, stride 2, SAME: dy [1, 2, 3, 2].
  Check({{1, 2, 3, 2}}, [](S s, X x) {
    Output g = AddNode1(s, "AvgPoolGrad", {Const(s, {1, 4, 5, 2}), x[0]},
                        {{"ksize", Attr(std::vector<int64_t>{1, 2, 2, 1})},
                         {"strides", Attr(std::vector<int64_t>{1, 2, 2, 1})},
                         {"padding", Attr("SAME")}});
    return Mul(s, g, g);
  });
}

// MaxPoolGrad(orig_input, orig_output, grad) and MaxPoolGradGrad: through
// `grad` (the other op), nothing through orig_input (piecewise constant) or
// orig_output (only its shape is read). 3x3 windows with stride 1 overlap,
// so MaxPoolGrad adds several gradients into one input; SAME and VALID.
TEST(GradGradTest, MaxPoolGradAndMaxPoolGradGrad) {
  struct Geometry {
    const char* padding;
    int64_t out_rows, out_cols;
  };
  for (const Geometry& geo : {Geometry{"SAME", 4, 5}, Geometry{"VALID", 2, 3}}) {
    SCOPED_TRACE(geo.padding);
    const AttrList attrs = {{"ksize", Attr(std::vector<int64_t>{1, 3, 3, 1})},
                            {"strides", Attr(std::vector<int64_t>{1, 1, 1, 1})},
                            {"padding", Attr(geo.padding)}};
    const TensorShape in({1, 4, 5, 2}), out({1, geo.out_rows, geo.out_cols, 2});
    Check({in, out, out}, [&](S s, X x) {
      Output g = AddNode1(s, "MaxPoolGrad", {x[0], x[1], x[2]}, attrs);
      return Mul(s, g, g);
    });
    Check({in, out, in}, [&](S s, X x) {
      Output g = AddNode1(s, "MaxPoolGradGrad", {x[0], x[1], x[2]}, attrs);
      return Mul(s, g, g);
    });
    // The V2 forms, the window as inputs.
    const AttrList v2 = {{"padding", Attr(geo.padding)}};
    Check({in, out, out}, [&](S s, X x) {
      Output g = AddNode1(s, "MaxPoolGradV2", {x[0], x[1], x[2], Const(s, {1, 3, 3, 1}),
                                               Const(s, {1, 1, 1, 1})}, v2);
      return Mul(s, g, g);
    });
    Check({in, out, in}, [&](S s, X x) {
      Output g = AddNode1(s, "MaxPoolGradGradV2", {x[0], x[1], x[2], Const(s, {1, 3, 3, 1}),
                                                   Const(s, {1, 1, 1, 1})}, v2);
      return Mul(s, g, g);
    });
  }
}

TEST(GradGradTest, StridedSliceGrad) {
  Check({{2, 3}}, [](S s, X x) {
    Output g = AddNode1(s, "StridedSliceGrad",
                        {Const(s, {4, 5}), Const(s, {1, 0}), Const(s, {3, 5}),
                         Const(s, {1, 2}), x[0]});
    return Mul(s, g, g);
  });
}

// d/dw of |d loss / d x|^2: AddGradients over a graph that already holds
// gradients, through MatMul, BiasAdd, Tanh, Relu and Softmax.
TEST(GradGradTest, GradientPenalty) {
  Check({{2, 3}, {3, 4}, {4}}, [](S s, X x) {
    Output h = Tanh(s, BiasAdd(s, MatMul(s, x[0], x[1]), x[2]));
    Output y = Softmax(s, Mul(s, Relu(s, h), h));
    Output inner = Sum(s, Mul(s, y, y), Const(s, {0, 1}));
    std::vector<Output> g;
    if (!AddGradients(s, {inner}, {x[0]}, {}, &g).ok()) return Output();
    return Mul(s, g[0], g[0]);
  });
}

}  // namespace
}  // namespace weft
