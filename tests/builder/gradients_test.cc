// AddGradients: every registered gradient checked against central
// differences (in double where the kernels have it, else float with a loose
// tolerance), broadcasting cases, summing over consumers, and errors.
#include "graph/builder/gradients.h"

#include <cmath>
#include <functional>
#include <iostream>
#include <random>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "graph/builder/state_ops.h"
#include "gtest/gtest.h"
#include "runtime/status.h"
#include "tests/builder/builder_test_util.h"

namespace weft {
namespace {

using testing_builder::MakeTensor;
using testing_builder::SessionFor;
using testing_builder::Values;

enum class Range { kSigned, kPositive };

// Builds y = f(xs) from placeholders of the given shapes.
using BuildFn = std::function<Output(const Scope&, const std::vector<Output>&)>;

std::vector<double> RandomValues(int64_t n, Range range, std::mt19937* rng) {
  std::uniform_real_distribution<double> mag(0.2, 1.5);
  std::bernoulli_distribution sign(0.5);
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) {
    double x = mag(*rng);
    if (range == Range::kSigned && sign(*rng)) x = -x;
    v.push_back(x);
  }
  return v;
}

// Checks d(sum y)/dx for each x against central differences. Returns an
// error if the graph does not run in `dtype`.
absl::Status CheckIn(DataType dtype, const std::vector<TensorShape>& shapes,
                     const BuildFn& f, Range range) {
  Scope root = Scope::NewRoot();
  std::vector<Output> xs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    xs.push_back(Placeholder(root.WithOpName("x"), dtype));
  }
  Output y = f(root, xs);
  std::vector<Output> grads;
  absl::Status st = AddGradients(root, {y}, xs, {}, &grads);
  if (!st.ok()) return st;
  auto session = SessionFor(root);
  if (!session.ok()) return session.status();
  std::mt19937 rng(42);
  std::vector<std::vector<double>> values;
  for (const TensorShape& s : shapes) {
    values.push_back(RandomValues(s.num_elements(), range, &rng));
  }
  auto feeds = [&](const std::vector<std::vector<double>>& v) {
    std::vector<std::pair<std::string, Tensor>> out;
    for (size_t i = 0; i < shapes.size(); ++i) {
      out.push_back({xs[i].name(), MakeTensor(dtype, shapes[i], v[i])});
    }
    return out;
  };
  std::vector<std::string> grad_names;
  for (const Output& g : grads) grad_names.push_back(g.name());
  std::vector<Tensor> analytic;
  WEFT_RETURN_IF_ERROR((*session)->Run(feeds(values), grad_names, {}, &analytic));
  auto total = [&](const std::vector<std::vector<double>>& v,
                   double* out) -> absl::Status {
    std::vector<Tensor> ys;
    WEFT_RETURN_IF_ERROR((*session)->Run(feeds(v), {y.name()}, {}, &ys));
    *out = 0;
    for (double e : Values(ys[0])) *out += e;
    return absl::OkStatus();
  };
  const bool dbl = dtype == DT_DOUBLE;
  const double h = dbl ? 1e-6 : 1e-3, tol = dbl ? 1e-5 : 3e-2;
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<double> got = Values(analytic[i]);
    EXPECT_EQ(analytic[i].shape(), shapes[i]) << "x" << i;
    for (size_t k = 0; k < values[i].size(); ++k) {
      auto v = values;
      v[i][k] += h;
      double plus, minus;
      WEFT_RETURN_IF_ERROR(total(v, &plus));
      v[i][k] -= 2 * h;
      WEFT_RETURN_IF_ERROR(total(v, &minus));
      double numeric = (plus - minus) / (2 * h);
      EXPECT_NEAR(got[k], numeric, tol * (1 + std::fabs(numeric)))
          << "x" << i << "[" << k << "] in " << DataTypeString(dtype);
    }
  }
  return absl::OkStatus();
}

// Tries double first; falls back to float if a kernel lacks double.
void Check(const std::vector<TensorShape>& shapes, const BuildFn& f,
           Range range = Range::kSigned) {
  absl::Status st = CheckIn(DT_DOUBLE, shapes, f, range);
  if (!st.ok()) {
    std::cout << "not checkable in double (" << st.message()
              << "); checking in float\n";
    st = CheckIn(DT_FLOAT, shapes, f, range);
  }
  EXPECT_TRUE(st.ok()) << st;
}

using X = const std::vector<Output>&;
using S = const Scope&;

TEST(GradientsTest, Identity) {
  Check({{2, 3}}, [](S s, X x) { return Identity(s, x[0]); });
}

TEST(GradientsTest, AddNAndSumOverConsumers) {
  Check({{3}, {3}}, [](S s, X x) {
    return AddN(s, {x[0], Mul(s, x[0], x[1]), x[1]});
  });
  Check({{2}}, [](S s, X x) { return Add(s, Mul(s, x[0], x[0]), x[0]); });
}

// Each binary op, with equal shapes and three broadcasting patterns.
void CheckBinary(Output (*op)(const Scope&, const Output&, const Output&),
                 Range range = Range::kSigned) {
  BuildFn f = [op](S s, X x) { return op(s, x[0], x[1]); };
  Check({{2, 3}, {2, 3}}, f, range);
  Check({{2, 3}, {3}}, f, range);
  Check({{2, 1}, {1, 3}}, f, range);
  Check({{}, {2, 3}}, f, range);
}

TEST(GradientsTest, Add) { CheckBinary(Add); }
TEST(GradientsTest, AddV2) { CheckBinary(AddV2); }
TEST(GradientsTest, Sub) { CheckBinary(Sub); }
TEST(GradientsTest, Mul) { CheckBinary(Mul); }
TEST(GradientsTest, RealDiv) { CheckBinary(RealDiv); }
TEST(GradientsTest, Maximum) { CheckBinary(Maximum); }
TEST(GradientsTest, Minimum) { CheckBinary(Minimum); }
TEST(GradientsTest, Pow) { CheckBinary(Pow, Range::kPositive); }

void CheckUnary(Output (*op)(const Scope&, const Output&),
                Range range = Range::kSigned) {
  Check({{2, 3}}, [op](S s, X x) { return op(s, x[0]); }, range);
}

TEST(GradientsTest, Neg) { CheckUnary(Neg); }
TEST(GradientsTest, Square) { CheckUnary(Square); }
TEST(GradientsTest, Sqrt) { CheckUnary(Sqrt, Range::kPositive); }
TEST(GradientsTest, Rsqrt) { CheckUnary(Rsqrt, Range::kPositive); }
TEST(GradientsTest, Exp) { CheckUnary(Exp); }
TEST(GradientsTest, Log) { CheckUnary(Log, Range::kPositive); }
TEST(GradientsTest, Reciprocal) { CheckUnary(Reciprocal, Range::kPositive); }
TEST(GradientsTest, Tanh) { CheckUnary(Tanh); }
TEST(GradientsTest, Sigmoid) { CheckUnary(Sigmoid); }
TEST(GradientsTest, Relu) { CheckUnary(Relu); }

TEST(GradientsTest, MatMulAllTransposes) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      TensorShape a = ta ? TensorShape({3, 2}) : TensorShape({2, 3});
      TensorShape b = tb ? TensorShape({4, 3}) : TensorShape({3, 4});
      // Weighting the output makes every element's gradient distinct.
      Check({a, b}, [ta, tb](S s, X x) {
        Output m = MatMul(s, x[0], x[1], ta, tb);
        return Mul(s, m, m);
      });
    }
  }
}

TEST(GradientsTest, BiasAdd) {
  Check({{2, 3}, {3}}, [](S s, X x) {
    return Square(s, BiasAdd(s, x[0], x[1]));
  });
}

TEST(GradientsTest, SumAndMean) {
  for (auto op : {Sum, Mean}) {
    for (int axis : {0, 1, -1}) {
      for (bool keep : {false, true}) {
        Check({{2, 3}}, [op, axis, keep](S s, X x) {
          return Square(s, op(s, x[0], Const(s, axis), keep));
        });
      }
    }
    Check({{2, 3}}, [op](S s, X x) {
      return Square(s, op(s, x[0], Const(s, {0, 1}), false));
    });
  }
}

TEST(GradientsTest, ReshapeExpandDimsSqueeze) {
  Check({{2, 3}}, [](S s, X x) {
    return Square(s, Reshape(s, x[0], Const(s, {3, 2})));
  });
  Check({{2, 3}}, [](S s, X x) {
    return Square(s, ExpandDims(s, x[0], Const(s, 1)));
  });
  Check({{2, 1, 3}}, [](S s, X x) {
    return Square(s, Squeeze(s, x[0], {1}));
  });
}

TEST(GradientsTest, Transpose) {
  Check({{2, 3, 4}}, [](S s, X x) {
    Output t = Transpose(s, x[0], Const(s, {2, 0, 1}));
    return Mul(s, t, t);
  });
}

TEST(GradientsTest, ConcatV2) {
  for (int axis : {0, 1, -1}) {
    Check({{2, 3}, {2, 3}}, [axis](S s, X x) {
      return Square(s, ConcatV2(s, {x[0], x[1], x[0]}, Const(s, axis)));
    });
  }
}

TEST(GradientsTest, Cast) {
  // float -> double, checked in float (a double -> float cast would round
  // away the numeric differences).
  absl::Status st = CheckIn(DT_FLOAT, {{3}}, [](S s, X x) {
    return Square(s, Cast(s, Square(s, x[0]), DT_DOUBLE));
  }, Range::kSigned);
  EXPECT_TRUE(st.ok()) << st;
}

TEST(GradientsTest, Softmax) {
  Check({{2, 3}}, [](S s, X x) {
    return Mul(s, Softmax(s, x[0]), Square(s, x[0]));
  });
}

TEST(GradientsTest, SparseSoftmaxCrossEntropy) {
  Check({{3, 4}}, [](S s, X x) {
    Output labels = Const(s, {int64_t{0}, int64_t{3}, int64_t{1}});
    return Square(s, SparseSoftmaxCrossEntropyWithLogits(s, x[0], labels).loss);
  });
}

TEST(GradientsTest, Fill) {
  Check({{}}, [](S s, X x) {
    return Square(s, Fill(s, Const(s, {2, 3}), x[0]));
  });
}

// Every op with a gradient function must be checked by a test above; add
// it here with its test.
TEST(GradientsTest, EveryRegisteredGradientIsTested) {
  const std::set<std::string> tested = {
      "Identity", "AddN", "Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum",
      "Minimum", "Pow", "Neg", "Square", "Sqrt", "Rsqrt", "Exp", "Log",
      "Reciprocal", "Tanh", "Sigmoid", "Relu", "MatMul", "BiasAdd", "Sum",
      "Mean", "Reshape", "ExpandDims", "Squeeze", "Transpose", "ConcatV2",
      "Cast", "Softmax", "SparseSoftmaxCrossEntropyWithLogits", "Fill",
      "ReadVariableOp"};
  for (const std::string& op : GlobalGradRegistry().OpNames()) {
    const GradFn* fn = nullptr;
    ASSERT_TRUE(GlobalGradRegistry().LookUp(op, &fn).ok());
    if (fn != nullptr) {
      EXPECT_TRUE(tested.count(op)) << "gradient of " << op << " is untested";
    }
  }
}

TEST(GradientsTest, StopGradientBlocks) {
  Scope root = Scope::NewRoot();
  Output x = Const(root, {1.f, 2.f});
  Output y = Add(root, StopGradient(root, Square(root, x)), x);
  std::vector<Output> grads;
  ASSERT_TRUE(AddGradients(root, {y}, {x}, {}, &grads).ok()) << root.status();
  auto out = testing_builder::RunGraph(root, {}, grads);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{1, 1}));
}

TEST(GradientsTest, UnconnectedXGetsZerosAndGradYsScale) {
  Scope root = Scope::NewRoot();
  Output x = Const(root, {1.f, 2.f});
  Output z = Const(root, {5.f});
  Output y = Square(root, x);
  std::vector<Output> grads;
  ASSERT_TRUE(AddGradients(root, {y}, {x, z}, {Const(root, {10.f, 100.f})},
                           &grads)
                  .ok());
  auto out = testing_builder::RunGraph(root, {}, grads);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{20, 400}));
  EXPECT_EQ(Values((*out)[1]), (std::vector<double>{0}));
}

TEST(GradientsTest, ThroughResourceVariableRead) {
  Scope root = Scope::NewRoot();
  ResourceVariable v = NewResourceVariable(root.WithOpName("v"), {2},
                                           DT_FLOAT, Const(root, {3.f, -1.f}));
  Output loss = Sum(root, Square(root, v.value), Const(root, 0));
  std::vector<Output> grads;
  // Through the ReadVariableOp to the handle, as TF's resource variables.
  ASSERT_TRUE(AddGradients(root, {loss}, {v.handle}, {}, &grads).ok())
      << root.status();
  auto out = testing_builder::RunGraph(root, {}, grads, {v.initializer.node});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{6, -2}));
}

TEST(GradientsTest, ChainedXsAndScopeDevice) {
  // xs = {a, b} with b = a * a: d(b + a)/da counts the path through b.
  Scope root = Scope::NewRoot();
  Output a = Const(root, {3.f});
  Output b = Mul(root, a, a);
  Output y = Add(root, b, a);
  std::vector<Output> grads;
  Scope on_cpu = root.WithDevice("/device:CPU:0");
  ASSERT_TRUE(AddGradients(on_cpu, {y}, {a, b}, {}, &grads).ok());
  EXPECT_EQ(root.FindNode(grads[0].node)->device(), "/device:CPU:0");
  EXPECT_EQ(grads[0].node.rfind("gradients/", 0), 0u) << grads[0].node;
  auto out = testing_builder::RunGraph(root, {}, grads);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{7}));
  EXPECT_EQ(Values((*out)[1]), (std::vector<double>{1}));
}

TEST(GradientsTest, MissingGradientNamesOpAndNode) {
  Scope root = Scope::NewRoot();
  Output x = Const(root, {1.f, 2.f});
  Output t = Tile(root.WithOpName("tiled"), x, Const(root, {2}));
  std::vector<Output> grads;
  absl::Status st = AddGradients(root, {t}, {x}, {}, &grads);
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(st.message(), "'Tile'")) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "'tiled'")) << st;
  EXPECT_EQ(root.status(), st);
}

TEST(GradientsTest, BadArguments) {
  Scope root = Scope::NewRoot();
  Output x = Const(root, 1.f);
  std::vector<Output> grads;
  EXPECT_FALSE(AddGradients(root, {x}, {Output()}, {}, &grads).ok());
  Scope other = Scope::NewRoot();
  EXPECT_FALSE(AddGradients(other, {x}, {x}, {x, x}, &grads).ok());
}

}  // namespace
}  // namespace weft
