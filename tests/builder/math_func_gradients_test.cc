// Numeric checks (grad_check.h) of the gradients of the element-wise math
// functions (graph/builder/math_func_grad.cc): each op's d(sum y)/dx
// against central differences in double, with inputs moved into the op's
// domain (|x| < 1 for Asin/Acos/Atanh/Erfinv, x > 1 for Acosh, (0, 1) for
// Ndtri, x > 0 for Lgamma/Digamma/Log1p, Xlogy's y, the K and Y Bessel
// functions, Expint, Spence, Igamma and Zeta's q).
#include <string>

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

// y = op(x * scale + shift) * x, so the product rule mixes in x's gradient.
void CheckUnary(const std::string& op, double scale, double shift,
                Range range = Range::kSigned) {
  SCOPED_TRACE(op);
  Check({{2, 3}}, [op, scale, shift](S s, X x) {
    Output in = Add(s, Mul(s, x[0], Const(s, scale)), Const(s, shift));
    return Mul(s, AddNode1(s, op, {in}), x[0]);
  }, range);
}

TEST(MathFuncGradientsTest, Trigonometric) {
  for (const char* op : {"Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asinh"}) {
    CheckUnary(op, 1.0, 0.0);
  }
  for (const char* op : {"Asin", "Acos", "Atanh"}) CheckUnary(op, 0.5, 0.0);
  CheckUnary("Acosh", 1.0, 1.0, Range::kPositive);
}

TEST(MathFuncGradientsTest, Special) {
  for (const char* op : {"Erf", "Erfc", "Expm1"}) CheckUnary(op, 1.0, 0.0);
  CheckUnary("Erfinv", 0.5, 0.0);
  CheckUnary("Ndtri", 0.3, 0.5);
  for (const char* op : {"Lgamma", "Digamma", "Log1p"}) {
    CheckUnary(op, 1.0, 0.0, Range::kPositive);
  }
}

TEST(MathFuncGradientsTest, Bessel) {
  for (const char* op : {"BesselI0", "BesselI0e", "BesselI1", "BesselI1e",
                         "BesselJ0", "BesselJ1"}) {
    CheckUnary(op, 2.0, 0.0);
  }
  for (const char* op : {"BesselK0", "BesselK0e", "BesselK1", "BesselK1e",
                         "BesselY0", "BesselY1"}) {
    CheckUnary(op, 2.0, 0.1, Range::kPositive);
  }
}

TEST(MathFuncGradientsTest, Integrals) {
  for (const char* op : {"Dawsn", "FresnelCos", "FresnelSin"}) {
    CheckUnary(op, 2.0, 0.0);
  }
  CheckUnary("Expint", 2.0, 0.1, Range::kPositive);
  // Spence: across 1/2 and 3/2, where its formula changes.
  CheckUnary("Spence", 1.5, 0.0, Range::kPositive);
}

TEST(MathFuncGradientsTest, BroadcastingBinary) {
  Check({{2, 3}, {3}}, [](S s, X x) {
    return AddNode1(s, "Atan2", {x[0], x[1]});
  });
  for (const char* op : {"Xdivy", "Xlogy", "Xlog1py"}) {
    SCOPED_TRACE(op);
    Check({{2, 3}, {3}}, [op](S s, X x) {
      return AddNode1(s, op, {x[0], x[1]});
    }, Range::kPositive);
  }
  // Polygamma(n, x): the gradient reaches x only.
  Check({{3}}, [](S s, X x) {
    return AddNode1(s, "Polygamma", {Const(s, 1.0), x[0]});
  }, Range::kPositive);
  // Igamma(a, x) and Igammac through IgammaGradA for a.
  for (const char* op : {"Igamma", "Igammac"}) {
    SCOPED_TRACE(op);
    Check({{2, 3}, {3}}, [op](S s, X x) {
      return AddNode1(s, op, {Mul(s, x[0], Const(s, 3.0)), x[1]});
    }, Range::kPositive);
  }
  // Zeta(x, q): the gradient reaches q only; x broadcasts against it.
  Check({{2, 3}}, [](S s, X x) {
    return AddNode1(s, "Zeta", {Const(s, {2.5, 3.0, 4.5}), x[0]});
  }, Range::kPositive);
}

// Known values: d sin(x)/dx = cos(x) at 0 is 1; d lgamma/dx at 1 is
// digamma(1) = -Euler's gamma; d erf/dx at 0 is 2 / sqrt(pi).
TEST(MathFuncGradientsTest, KnownValues) {
  struct Case {
    const char* op;
    double x, want;
  };
  for (const Case& c : {Case{"Sin", 0.0, 1.0},
                        Case{"Lgamma", 1.0, -0.5772156649015329},
                        Case{"Erf", 0.0, 1.1283791670955126},
                        Case{"Atanh", 0.5, 4.0 / 3.0},
                        // TensorFlow's constants at 0 and at Spence's 1.
                        Case{"BesselI1", 0.0, 1.0}, Case{"BesselJ1", 0.0, 0.5},
                        Case{"BesselI1e", 0.0, 0.5}, Case{"Spence", 1.0, -1.0},
                        Case{"BesselI0", 1.0, 0.5651591039924851}}) {
    SCOPED_TRACE(c.op);
    Scope root = Scope::NewRoot();
    Output x = Const(root, c.x);
    Output y = AddNode1(root, c.op, {x});
    std::vector<Output> grads;
    ASSERT_TRUE(AddGradients(root, {y}, {x}, {}, &grads).ok());
    auto session = testing_builder::SessionFor(root);
    ASSERT_TRUE(session.ok()) << session.status();
    std::vector<Tensor> out;
    ASSERT_TRUE((*session)->Run({}, {grads[0].name()}, {}, &out).ok());
    EXPECT_NEAR(out[0].scalar<double>(), c.want, 1e-14);
  }
}

TEST(MathFuncGradientsTest, NoGradient) {
  Scope root = Scope::NewRoot();
  Output x = Placeholder(root.WithOpName("x"), DT_DOUBLE);
  Output y = Add(root, Mul(root, x, x),
                 Cast(root, AddNode1(root, "IsNan", {x}), DT_DOUBLE));
  Output z = Add(root, y, AddNode1(root, "Rint", {x}));
  std::vector<Output> grads;
  EXPECT_TRUE(AddGradients(root, {z}, {x}, {}, &grads).ok());
}

}  // namespace
}  // namespace weft
