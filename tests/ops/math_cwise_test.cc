// Element-wise math kernels on same-shape inputs: every op, every dtype
// family, against reference loops in this file; error cases; the threaded
// path on large tensors.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

#include "gtest/gtest.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::Node;
using testing_util::Random;
using testing_util::RunOk;
using testing_util::RunStatus;
using testing_util::Scalar;

// Applies `f` element by element to build the expected output.
template <typename T, typename Tout = T, typename F>
Tensor Reference(const Tensor& x, const Tensor& y, const F& f) {
  Tensor out(DataTypeToEnum<Tout>::value, x.shape());
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    out.data<Tout>()[i] = f(x.data<T>()[i], y.data<T>()[i]);
  }
  return out;
}

template <typename T>
Tensor UnaryReference(const Tensor& x, const std::function<T(T)>& f) {
  Tensor out(DataTypeToEnum<T>::value, x.shape());
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    out.data<T>()[i] = f(x.data<T>()[i]);
  }
  return out;
}

template <typename T>
class ArithmeticTest : public ::testing::Test {};
using NumericTypes = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(ArithmeticTest, NumericTypes);

TYPED_TEST(ArithmeticTest, AddSubMulMaxMinSquaredDifference) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x = Random<T>({3, 5}, -50, 50, 1);
  const Tensor y = Random<T>({3, 5}, -50, 50, 2);
  for (const char* op : {"Add", "AddV2"}) {
    ExpectTensorEqual(RunOk(Node(op, dt), {x, y}),
                      Reference<T>(x, y, [](T a, T b) { return a + b; }));
  }
  ExpectTensorEqual(RunOk(Node("Sub", dt), {x, y}),
                    Reference<T>(x, y, [](T a, T b) { return a - b; }));
  ExpectTensorEqual(RunOk(Node("Mul", dt), {x, y}),
                    Reference<T>(x, y, [](T a, T b) { return a * b; }));
  ExpectTensorEqual(RunOk(Node("Maximum", dt), {x, y}),
                    Reference<T>(x, y, [](T a, T b) { return a > b ? a : b; }));
  ExpectTensorEqual(RunOk(Node("Minimum", dt), {x, y}),
                    Reference<T>(x, y, [](T a, T b) { return a < b ? a : b; }));
  ExpectTensorEqual(
      RunOk(Node("SquaredDifference", dt), {x, y}),
      Reference<T>(x, y, [](T a, T b) { return (a - b) * (a - b); }));
}

TYPED_TEST(ArithmeticTest, ComparisonsGiveBool) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  Tensor x = Random<T>({4, 6}, -5, 5, 3);
  Tensor y = Random<T>({4, 6}, -5, 5, 4);
  x.data<T>()[0] = y.data<T>()[0];  // at least one tie
  using Cmp = std::function<bool(T, T)>;
  const std::vector<std::pair<const char*, Cmp>> cases = {
      {"Greater", [](T a, T b) { return a > b; }},
      {"Less", [](T a, T b) { return a < b; }},
      {"GreaterEqual", [](T a, T b) { return a >= b; }},
      {"LessEqual", [](T a, T b) { return a <= b; }},
      {"Equal", [](T a, T b) { return a == b; }},
      {"NotEqual", [](T a, T b) { return a != b; }},
  };
  for (const auto& [op, f] : cases) {
    SCOPED_TRACE(op);
    ExpectTensorEqual(RunOk(Node(op, dt), {x, y}), Reference<T, bool>(x, y, f));
  }
}

TYPED_TEST(ArithmeticTest, NegSquareAbsSign) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x = MakeTensor<T>({5}, {T(-3), T(0), T(2), T(-1), T(7)});
  ExpectTensorEqual(RunOk(Node("Neg", dt), {x}),  // -0.0 for floats
                    MakeTensor<T>({5}, {T(3), -T(0), T(-2), T(1), T(-7)}));
  ExpectTensorEqual(RunOk(Node("Square", dt), {x}),
                    MakeTensor<T>({5}, {T(9), T(0), T(4), T(1), T(49)}));
  ExpectTensorEqual(RunOk(Node("Abs", dt), {x}),
                    MakeTensor<T>({5}, {T(3), T(0), T(2), T(1), T(7)}));
  ExpectTensorEqual(RunOk(Node("Sign", dt), {x}),
                    MakeTensor<T>({5}, {T(-1), T(0), T(1), T(-1), T(1)}));
}

template <typename T>
class FloatTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FloatTest, FloatTypes);

TYPED_TEST(FloatTest, Division) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x = MakeTensor<T>({5}, {7, -7, 7, -7, 1});
  const Tensor y = MakeTensor<T>({5}, {2, 2, -2, -2, 0});
  const T inf = std::numeric_limits<T>::infinity();
  for (const char* op : {"RealDiv", "Div"}) {
    ExpectTensorNear(RunOk(Node(op, dt), {x, y}),
                     MakeTensor<T>({5}, {3.5, -3.5, -3.5, 3.5, inf}), 1e-7);
  }
  // Values from TensorFlow 2.21: floor_div / floor_mod of the same inputs.
  ExpectTensorEqual(RunOk(Node("FloorDiv", dt), {x, y}),
                    MakeTensor<T>({5}, {3, -4, -4, 3, inf}));
  const Tensor m = RunOk(Node("FloorMod", dt), {x, y});
  ExpectTensorEqual(m.Slice(0, 4), MakeTensor<T>({4}, {1, 1, -1, -1}));
  EXPECT_TRUE(std::isnan(m.data<T>()[4]));
}

TYPED_TEST(FloatTest, MaximumMinimumPropagateNan) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const Tensor x = MakeTensor<T>({3}, {1, nan, 3});
  const Tensor y = MakeTensor<T>({3}, {nan, 1, 2});
  // TensorFlow 2.21 gives [nan, nan, 3] for Maximum.
  ExpectTensorNear(RunOk(Node("Maximum", dt), {x, y}),
                   MakeTensor<T>({3}, {nan, nan, 3}), 0);
  ExpectTensorNear(RunOk(Node("Minimum", dt), {x, y}),
                   MakeTensor<T>({3}, {nan, nan, 2}), 0);
}

TYPED_TEST(FloatTest, Pow) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x = Random<T>({20}, 0.1, 4, 5);
  const Tensor y = Random<T>({20}, -3, 3, 6);
  ExpectTensorNear(RunOk(Node("Pow", dt), {x, y}),
                   Reference<T>(x, y, [](T a, T b) { return std::pow(a, b); }),
                   1e-5);
}

TYPED_TEST(FloatTest, UnaryMath) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor pos = Random<T>({7, 9}, 0.01, 20, 7);
  const Tensor any = Random<T>({7, 9}, -20, 20, 8);
  const double tol = std::is_same_v<T, float> ? 2e-6 : 1e-12;
  ExpectTensorNear(RunOk(Node("Sqrt", dt), {pos}),
                   UnaryReference<T>(pos, [](T v) { return std::sqrt(v); }), tol);
  ExpectTensorNear(
      RunOk(Node("Rsqrt", dt), {pos}),
      UnaryReference<T>(pos, [](T v) { return 1 / std::sqrt(v); }), tol);
  ExpectTensorNear(RunOk(Node("Log", dt), {pos}),
                   UnaryReference<T>(pos, [](T v) { return std::log(v); }), tol);
  ExpectTensorNear(RunOk(Node("Reciprocal", dt), {pos}),
                   UnaryReference<T>(pos, [](T v) { return 1 / v; }), tol);
  ExpectTensorNear(RunOk(Node("Exp", dt), {any}),
                   UnaryReference<T>(any, [](T v) { return std::exp(v); }), tol);
  ExpectTensorNear(RunOk(Node("Tanh", dt), {any}),
                   UnaryReference<T>(any, [](T v) { return std::tanh(v); }), tol);
  ExpectTensorNear(
      RunOk(Node("Sigmoid", dt), {any}),
      UnaryReference<T>(any, [](T v) { return 1 / (1 + std::exp(-v)); }), tol);
  ExpectTensorEqual(RunOk(Node("Floor", dt), {any}),
                    UnaryReference<T>(any, [](T v) { return std::floor(v); }));
  ExpectTensorEqual(RunOk(Node("Ceil", dt), {any}),
                    UnaryReference<T>(any, [](T v) { return std::ceil(v); }));
}

TYPED_TEST(FloatTest, RoundHalfToEvenAndSignOfSpecials) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  // TensorFlow 2.21: round([0.5, 1.5, 2.5, -0.5, -1.5]) = [0, 2, 2, -0, -2].
  ExpectTensorEqual(
      RunOk(Node("Round", dt), {MakeTensor<T>({5}, {0.5, 1.5, 2.5, -0.5, -1.5})}),
      MakeTensor<T>({5}, {0, 2, 2, -0.0, -2}));
  // Zero results keep the input's sign (IEEE, as TensorFlow): floor(-0),
  // ceil(-0.5) and round(-0.5) are -0. The first four values fill one SSE
  // vector, so a vectorized path is tested, not only a scalar tail.
  const Tensor z = MakeTensor<T>({8}, {-0.0, 0.0, -0.5, 0.25, -0.75, 3e9, -3e9, 2.5});
  ExpectTensorEqual(RunOk(Node("Floor", dt), {z}),
                    MakeTensor<T>({8}, {-0.0, 0, -1, 0, -1, 3e9, -3e9, 2}));
  ExpectTensorEqual(RunOk(Node("Ceil", dt), {z}),
                    MakeTensor<T>({8}, {-0.0, 0, -0.0, 1, -0.0, 3e9, -3e9, 3}));
  ExpectTensorEqual(RunOk(Node("Round", dt), {z}),
                    MakeTensor<T>({8}, {-0.0, 0, -0.0, 0, -1, 3e9, -3e9, 2}));
  // TensorFlow 2.21: sign([0, -0, -2, 3, nan]) = [0, 0, -1, 1, nan].
  ExpectTensorNear(
      RunOk(Node("Sign", dt), {MakeTensor<T>({5}, {0.0, -0.0, -2, 3, nan})}),
      MakeTensor<T>({5}, {0, 0, -1, 1, nan}), 0);
}

// Sqrt and Rsqrt round correctly, as TensorFlow's do: Eigen's fast float
// sqrt (an estimate and one Newton step) gave sqrt(2) = 1.4142134 and
// sqrt(+inf) = NaN. 67 values fill whole vectors of every width and a tail.
TYPED_TEST(FloatTest, SqrtAndRsqrtRoundCorrectly) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const T inf = std::numeric_limits<T>::infinity();
  Tensor x = Random<T>({67}, 1e-3, 1e6, 9);
  const T specials[] = {inf, 2, 0, -0.0, 3, 5, std::numeric_limits<T>::min(), 1};
  for (int i = 0; i < 8; ++i) x.data<T>()[i * 8] = specials[i];
  const Tensor sqrt = RunOk(Node("Sqrt", dt), {x});
  const Tensor rsqrt = RunOk(Node("Rsqrt", dt), {x});
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const T v = x.data<T>()[i];
    EXPECT_EQ(sqrt.data<T>()[i], std::sqrt(v)) << "Sqrt(" << v << "), element " << i;
    EXPECT_EQ(rsqrt.data<T>()[i], T(1) / std::sqrt(v)) << "Rsqrt(" << v << "), element " << i;
  }
  // TensorFlow 2.21: sqrt([2, inf]) = [1.4142135, inf], rsqrt(2) = 0.70710677.
  if (std::is_same_v<T, float>) {
    EXPECT_EQ(sqrt.data<T>()[8], T(1.4142135f));
    EXPECT_EQ(rsqrt.data<T>()[8], T(0.70710677f));
  }
  EXPECT_EQ(sqrt.data<T>()[0], inf);
  EXPECT_EQ(rsqrt.data<T>()[0], T(0));
  EXPECT_TRUE(std::signbit(sqrt.data<T>()[24]));  // sqrt(-0) = -0
  const Tensor negative = RunOk(Node("Sqrt", dt), {MakeTensor<T>({1}, {-1})});
  EXPECT_TRUE(std::isnan(negative.data<T>()[0]));
}

TYPED_TEST(FloatTest, UnaryGradients) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor y = Random<T>({4, 5}, 0.1, 0.9, 9);
  const Tensor dy = Random<T>({4, 5}, -2, 2, 10);
  const double tol = 1e-6;
  ExpectTensorNear(RunOk(Node("TanhGrad", dt), {y, dy}),
                   Reference<T>(y, dy, [](T a, T d) { return d * (1 - a * a); }),
                   tol);
  ExpectTensorNear(RunOk(Node("SigmoidGrad", dt), {y, dy}),
                   Reference<T>(y, dy, [](T a, T d) { return d * a * (1 - a); }),
                   tol);
  ExpectTensorNear(
      RunOk(Node("RsqrtGrad", dt), {y, dy}),
      Reference<T>(y, dy, [](T a, T d) { return T(-0.5) * d * a * a * a; }), tol);
  ExpectTensorNear(RunOk(Node("SqrtGrad", dt), {y, dy}),
                   Reference<T>(y, dy, [](T a, T d) { return T(0.5) * d / a; }),
                   tol);
  // TensorFlow 2.21: sqrt_grad(2, 3) = 0.75, rsqrt_grad(2, 3) = -12.
  ExpectTensorNear(RunOk(Node("SqrtGrad", dt), {Scalar<T>(2), Scalar<T>(3)}),
                   Scalar<T>(0.75), 0);
  ExpectTensorNear(RunOk(Node("RsqrtGrad", dt), {Scalar<T>(2), Scalar<T>(3)}),
                   Scalar<T>(-12), 0);
}

TEST(CwiseTest, GradientOpsNeedEqualElementCounts) {
  const absl::Status s =
      RunStatus(Node("TanhGrad", DT_FLOAT),
                {Random<float>({2, 3}, 0, 1), Random<float>({3, 3}, 0, 1)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("same number of elements, got 6 and 9"),
            std::string::npos)
      << s;
  // Equal counts in different shapes are fine (as TensorFlow): output has
  // the shape of y.
  const Tensor z = RunOk(Node("TanhGrad", DT_FLOAT),
                         {Random<float>({2, 3}, 0, 1), Random<float>({6}, 0, 1)});
  EXPECT_EQ(z.shape(), TensorShape({2, 3}));
}

template <typename T>
class IntTest : public ::testing::Test {};
using IntTypes = ::testing::Types<int32_t, int64_t>;
TYPED_TEST_SUITE(IntTest, IntTypes);

TYPED_TEST(IntTest, DivTruncatesFloorDivFloors) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x = MakeTensor<T>({4}, {7, -7, 7, -7});
  const Tensor y = MakeTensor<T>({4}, {2, 2, -2, -2});
  // TensorFlow 2.21: div = [3,-3,-3,3]; floor_div = [3,-4,-4,3];
  // floor_mod = [1,1,-1,-1].
  ExpectTensorEqual(RunOk(Node("Div", dt), {x, y}),
                    MakeTensor<T>({4}, {3, -3, -3, 3}));
  ExpectTensorEqual(RunOk(Node("FloorDiv", dt), {x, y}),
                    MakeTensor<T>({4}, {3, -4, -4, 3}));
  ExpectTensorEqual(RunOk(Node("FloorMod", dt), {x, y}),
                    MakeTensor<T>({4}, {1, 1, -1, -1}));
}

TYPED_TEST(IntTest, DivisionByZeroIsAnErrorNotACrash) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x = MakeTensor<T>({2}, {1, 2});
  for (const char* op : {"Div", "FloorDiv", "FloorMod"}) {
    SCOPED_TRACE(op);
    for (const Tensor& y : {MakeTensor<T>({2}, {1, 0}), Scalar<T>(0)}) {
      const absl::Status s = RunStatus(Node(op, dt), {x, y});
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
      EXPECT_NE(s.message().find("Integer division by zero"), std::string::npos)
          << s;
    }
  }
}

TYPED_TEST(IntTest, MinByMinusOneWrapsInsteadOfTrapping) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const T min = std::numeric_limits<T>::min();
  const Tensor x = MakeTensor<T>({2}, {min, 6});
  const Tensor y = MakeTensor<T>({2}, {-1, -1});
  // TensorFlow 2.21 gives INT_MIN for INT_MIN / -1 (no trap).
  ExpectTensorEqual(RunOk(Node("Div", dt), {x, y}), MakeTensor<T>({2}, {min, -6}));
  ExpectTensorEqual(RunOk(Node("FloorDiv", dt), {x, y}),
                    MakeTensor<T>({2}, {min, -6}));
  ExpectTensorEqual(RunOk(Node("FloorMod", dt), {x, y}),
                    MakeTensor<T>({2}, {0, 0}));
}

TYPED_TEST(IntTest, PowAndNegativeExponents) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  ExpectTensorEqual(RunOk(Node("Pow", dt), {MakeTensor<T>({4}, {2, -3, 0, 1}),
                                            MakeTensor<T>({4}, {10, 3, 0, 5})}),
                    MakeTensor<T>({4}, {1024, -27, 1, 1}));
  const absl::Status s = RunStatus(
      Node("Pow", dt), {MakeTensor<T>({2}, {2, 2}), MakeTensor<T>({2}, {3, -1})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("negative integer powers"), std::string::npos) << s;
}

TYPED_TEST(IntTest, RoundIsIdentity) {
  using T = TypeParam;
  const Tensor x = MakeTensor<T>({3}, {-4, 0, 9});
  ExpectTensorEqual(RunOk(Node("Round", DataTypeToEnum<T>::value), {x}), x);
}

TEST(CwiseTest, LogicalOps) {
  const Tensor x = MakeTensor<bool>({4}, {true, true, false, false});
  const Tensor y = MakeTensor<bool>({4}, {true, false, true, false});
  ExpectTensorEqual(RunOk(NodeBuilder("n", "LogicalAnd"), {x, y}),
                    MakeTensor<bool>({4}, {true, false, false, false}));
  ExpectTensorEqual(RunOk(NodeBuilder("n", "LogicalOr"), {x, y}),
                    MakeTensor<bool>({4}, {true, true, true, false}));
  ExpectTensorEqual(RunOk(NodeBuilder("n", "LogicalNot"), {x}),
                    MakeTensor<bool>({4}, {false, false, true, true}));
  ExpectTensorEqual(RunOk(Node("Equal", DT_BOOL), {x, y}),
                    MakeTensor<bool>({4}, {true, false, false, true}));
  ExpectTensorEqual(RunOk(Node("NotEqual", DT_BOOL), {x, y}),
                    MakeTensor<bool>({4}, {false, true, true, false}));
}

TEST(CwiseTest, EqualityWithIncompatibleShapes) {
  const Tensor x = Random<float>({2, 3}, 0, 1);
  const Tensor y = Random<float>({4}, 0, 1);
  const absl::Status s = RunStatus(Node("Equal", DT_FLOAT), {x, y});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("Incompatible shapes: [2,3] vs. [4]"),
            std::string::npos)
      << s;
  // TensorFlow 2.21: Equal -> False, NotEqual -> True (scalars).
  ExpectTensorEqual(
      RunOk(Node("Equal", DT_FLOAT).Attr("incompatible_shape_error", false),
            {x, y}),
      Scalar<bool>(false));
  ExpectTensorEqual(
      RunOk(Node("NotEqual", DT_FLOAT).Attr("incompatible_shape_error", false),
            {x, y}),
      Scalar<bool>(true));
}

TEST(CwiseTest, ScalarInputsGiveScalars) {
  ExpectTensorEqual(
      RunOk(Node("AddV2", DT_FLOAT), {Scalar<float>(1.5f), Scalar<float>(2)}),
      Scalar<float>(3.5f));
  ExpectTensorEqual(
      RunOk(Node("Less", DT_INT64), {Scalar<int64_t>(1), Scalar<int64_t>(2)}),
      Scalar<bool>(true));
  ExpectTensorEqual(RunOk(Node("Neg", DT_INT32), {Scalar<int32_t>(4)}),
                    Scalar<int32_t>(-4));
}

TEST(CwiseTest, NoKernelForUnsupportedType) {
  // Weft, like TensorFlow, has no integer RealDiv or Reciprocal kernel.
  const absl::Status s = RunStatus(
      Node("RealDiv", DT_INT32), {Scalar<int32_t>(1), Scalar<int32_t>(2)});
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  // T once, though every RealDiv kernel rejects it.
  EXPECT_NE(
      s.message().find("no CPU kernel for op 'RealDiv' with T=int32 (node '"),
      std::string::npos)
      << s;
}

// Large enough that the kernels shard over the intra-op pool.
TEST(CwiseTest, LargeTensorsUseThreadsAndStayCorrect) {
  const Tensor x = Random<float>({513, 1031}, -3, 3, 11);
  const Tensor y = Random<float>({513, 1031}, -3, 3, 12);
  ExpectTensorEqual(RunOk(Node("AddV2", DT_FLOAT), {x, y}),
                    Reference<float>(x, y, [](float a, float b) { return a + b; }));
  ExpectTensorEqual(
      RunOk(Node("Mul", DT_FLOAT), {x, Scalar<float>(0.5f)}),
      UnaryReference<float>(x, [](float a) { return a * 0.5f; }));
  ExpectTensorNear(RunOk(Node("Exp", DT_FLOAT), {x}),
                   UnaryReference<float>(x, [](float a) { return std::exp(a); }),
                   2e-6);
  ExpectTensorEqual(
      RunOk(Node("Greater", DT_FLOAT), {x, y}),
      Reference<float, bool>(x, y, [](float a, float b) { return a > b; }));
  const Tensor xi = Random<int32_t>({300000}, -1000, 1000, 13);
  const Tensor yi = Random<int32_t>({300000}, 1, 50, 14);
  ExpectTensorEqual(
      RunOk(Node("FloorDiv", DT_INT32), {xi, yi}),
      Reference<int32_t>(xi, yi, [](int32_t a, int32_t b) {
        return static_cast<int32_t>(std::floor(static_cast<double>(a) / b));
      }));
}

TEST(CwiseTest, EmptyTensors) {
  const Tensor e(DT_FLOAT, TensorShape({0, 3}));
  EXPECT_EQ(RunOk(Node("AddV2", DT_FLOAT), {e, e}).shape(),
            TensorShape({0, 3}));
  EXPECT_EQ(RunOk(Node("Exp", DT_FLOAT), {e}).shape(), TensorShape({0, 3}));
  EXPECT_EQ(RunOk(Node("Less", DT_FLOAT), {e, e}).dtype(), DT_BOOL);
}

}  // namespace
}  // namespace weft
