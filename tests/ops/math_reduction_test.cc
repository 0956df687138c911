// Reductions (Sum, Mean, Prod, Max, Min, All, Any) over arbitrary axis sets,
// and ArgMax / ArgMin, against a reference that folds each output element
// independently.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::Node;
using testing_util::Random;
using testing_util::RunOk;
using testing_util::RunStatus;
using testing_util::Scalar;

NodeBuilder Reduce(const char* op, DataType dt, bool keep_dims = false) {
  return Node(op, dt).Attr("keep_dims", keep_dims);
}

Tensor Axes(const std::vector<int32_t>& axes) {
  return MakeTensor<int32_t>({static_cast<int64_t>(axes.size())}, axes);
}

// Folds `x` over `axes` with `fold` starting from `init`; `finish` maps
// (accumulator, count) to the output value.
template <typename T, typename Acc = T, typename Fold, typename Finish>
Tensor ReferenceReduce(const Tensor& x, std::vector<int> axes, bool keep_dims,
                       Acc init, const Fold& fold, const Finish& finish) {
  const int rank = x.dims();
  std::vector<bool> reduced(rank, false);
  for (int a : axes) reduced[a < 0 ? a + rank : a] = true;
  TensorShape out_shape;
  std::vector<int64_t> out_dims;  // rank entries, 1 where reduced
  int64_t count = 1;
  for (int i = 0; i < rank; ++i) {
    out_dims.push_back(reduced[i] ? 1 : x.dim_size(i));
    if (reduced[i]) count *= x.dim_size(i);
    if (!reduced[i]) {
      out_shape.AddDim(x.dim_size(i));
    } else if (keep_dims) {
      out_shape.AddDim(1);
    }
  }
  const int64_t out_n = out_shape.num_elements();
  std::vector<Acc> acc(out_n, init);
  std::vector<int64_t> index(rank);
  for (int64_t e = 0; e < x.NumElements(); ++e) {
    int64_t rem = e;
    for (int i = rank - 1; i >= 0; --i) {
      index[i] = rem % x.dim_size(i);
      rem /= x.dim_size(i);
    }
    int64_t o = 0;
    for (int i = 0; i < rank; ++i) o = o * out_dims[i] + (reduced[i] ? 0 : index[i]);
    acc[o] = fold(acc[o], x.data<T>()[e]);
  }
  Tensor out(DataTypeToEnum<T>::value, out_shape);
  for (int64_t o = 0; o < out_n; ++o) out.data<T>()[o] = finish(acc[o], count);
  return out;
}

template <typename T>
Tensor RefSum(const Tensor& x, std::vector<int> axes, bool keep = false) {
  return ReferenceReduce<T, double>(
      x, axes, keep, 0.0, [](double a, T v) { return a + v; },
      [](double a, int64_t) { return static_cast<T>(a); });
}

template <typename T>
class ReductionTest : public ::testing::Test {};
using NumericTypes = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(ReductionTest, NumericTypes);

// Axis sets over a rank-4 input: single axes, contiguous and split groups,
// negative axes, everything, nothing.
const std::vector<std::vector<int>>& AxisSets() {
  static const auto* sets = new std::vector<std::vector<int>>{
      {0}, {1}, {2}, {3}, {-1}, {0, 1}, {1, 2}, {2, 3}, {0, 2}, {1, 3},
      {0, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2, 3}, {}, {3, 0}};
  return *sets;
}

std::vector<int32_t> ToInt32(const std::vector<int>& v) {
  return std::vector<int32_t>(v.begin(), v.end());
}

TYPED_TEST(ReductionTest, AllOpsOverEveryAxisSet) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x = Random<T>({3, 4, 5, 6}, -4, 4, 21);
  const double tol = std::is_same_v<T, float> ? 1e-4 : 1e-12;
  for (bool keep : {false, true}) {
    for (const std::vector<int>& axes : AxisSets()) {
      SCOPED_TRACE(::testing::Message() << "axes " << ::testing::PrintToString(axes)
                                        << " keep_dims " << keep);
      const Tensor a = Axes(ToInt32(axes));
      ExpectTensorNear(RunOk(Reduce("Sum", dt, keep), {x, a}),
                       RefSum<T>(x, axes, keep), tol);
      ExpectTensorNear(
          RunOk(Reduce("Mean", dt, keep), {x, a}),
          ReferenceReduce<T, double>(
              x, axes, keep, 0.0, [](double s, T v) { return s + v; },
              [](double s, int64_t n) {
                // Integer means truncate toward zero, as TensorFlow's.
                return std::is_integral_v<T>
                           ? static_cast<T>(static_cast<int64_t>(s) / n)
                           : static_cast<T>(s / n);
              }),
          tol);
      ExpectTensorEqual(
          RunOk(Reduce("Max", dt, keep), {x, a}),
          ReferenceReduce<T>(
              x, axes, keep, std::numeric_limits<T>::lowest(),
              [](T m, T v) { return v > m ? v : m; }, [](T m, int64_t) { return m; }));
      ExpectTensorEqual(
          RunOk(Reduce("Min", dt, keep), {x, a}),
          ReferenceReduce<T>(
              x, axes, keep, std::numeric_limits<T>::max(),
              [](T m, T v) { return v < m ? v : m; }, [](T m, int64_t) { return m; }));
    }
  }
}

TYPED_TEST(ReductionTest, ProdOfSmallValues) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x = Random<T>({2, 3, 4}, -2, 3, 5);
  for (const std::vector<int>& axes :
       std::vector<std::vector<int>>{{0}, {1}, {2}, {0, 2}, {0, 1, 2}}) {
    ExpectTensorNear(
        RunOk(Reduce("Prod", dt), {x, Axes(ToInt32(axes))}),
        ReferenceReduce<T, double>(
            x, axes, false, 1.0, [](double p, T v) { return p * v; },
            [](double p, int64_t) { return static_cast<T>(p); }),
        1e-5);
  }
}

TYPED_TEST(ReductionTest, EmptyReductionsGiveIdentities) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x(dt, TensorShape({0, 3}));
  const Tensor axis0 = Scalar<int32_t>(0);
  const T lowest = std::numeric_limits<T>::has_infinity
                       ? -std::numeric_limits<T>::infinity()
                       : std::numeric_limits<T>::lowest();
  const T highest = std::numeric_limits<T>::has_infinity
                        ? std::numeric_limits<T>::infinity()
                        : std::numeric_limits<T>::max();
  // TensorFlow 2.21: sum 0, prod 1, max -inf / INT_MIN, min inf / INT_MAX,
  // mean NaN for floats and 0 for integers.
  ExpectTensorEqual(RunOk(Reduce("Sum", dt), {x, axis0}),
                    MakeTensor<T>({3}, {0, 0, 0}));
  ExpectTensorEqual(RunOk(Reduce("Prod", dt), {x, axis0}),
                    MakeTensor<T>({3}, {1, 1, 1}));
  ExpectTensorEqual(RunOk(Reduce("Max", dt), {x, axis0}),
                    MakeTensor<T>({3}, {lowest, lowest, lowest}));
  ExpectTensorEqual(RunOk(Reduce("Min", dt), {x, axis0}),
                    MakeTensor<T>({3}, {highest, highest, highest}));
  const Tensor mean = RunOk(Reduce("Mean", dt), {x, axis0});
  ASSERT_EQ(mean.shape(), TensorShape({3}));
  if (std::is_integral_v<T>) {
    ExpectTensorEqual(mean, MakeTensor<T>({3}, {0, 0, 0}));
  } else {
    EXPECT_TRUE(std::isnan(static_cast<double>(mean.data<T>()[0])));
  }
  // Reducing the non-empty axis of an empty tensor gives an empty result.
  EXPECT_EQ(RunOk(Reduce("Sum", dt), {x, Scalar<int32_t>(1)}).shape(),
            TensorShape({0}));
}

TEST(ReductionTest, MeanOfIntegersTruncates) {
  // TensorFlow 2.21: mean([[1,2],[3,5]], 1) = [1, 4]; mean([-1,-2]) = -1.
  ExpectTensorEqual(RunOk(Reduce("Mean", DT_INT32),
                          {MakeTensor<int32_t>({2, 2}, {1, 2, 3, 5}), Axes({1})}),
                    MakeTensor<int32_t>({2}, {1, 4}));
  ExpectTensorEqual(RunOk(Reduce("Mean", DT_INT32),
                          {MakeTensor<int32_t>({2}, {-1, -2}), Axes({0})}),
                    Scalar<int32_t>(-1));
}

TEST(ReductionTest, AxisTensorForms) {
  const Tensor x = Random<float>({2, 3}, -1, 1);
  const Tensor want = RefSum<float>(x, {1});
  // Scalar, vector, int64, negative, and rank-2 (TensorFlow accepts it).
  ExpectTensorNear(RunOk(Reduce("Sum", DT_FLOAT), {x, Scalar<int32_t>(1)}),
                   want, 1e-6);
  ExpectTensorNear(RunOk(Reduce("Sum", DT_FLOAT).Attr("Tidx", DT_INT64),
                         {x, MakeTensor<int64_t>({1}, {-1})}),
                   want, 1e-6);
  ExpectTensorNear(RunOk(Reduce("Sum", DT_FLOAT),
                         {x, MakeTensor<int32_t>({1, 1}, {1})}),
                   want, 1e-6);
  // Reducing nothing returns the input (sharing its buffer).
  const Tensor same = RunOk(Reduce("Sum", DT_FLOAT), {x, Axes({})});
  ExpectTensorEqual(same, x);
  EXPECT_TRUE(same.SharesBufferWith(x));
  // A scalar input with no axes.
  ExpectTensorEqual(RunOk(Reduce("Max", DT_FLOAT), {Scalar<float>(3), Axes({})}),
                    Scalar<float>(3));
}

TEST(ReductionTest, BadAxes) {
  const Tensor x = Random<float>({2, 3}, -1, 1);
  absl::Status s = RunStatus(Reduce("Sum", DT_FLOAT), {x, Axes({2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("Invalid reduction dimension 2 for input with 2 "
                             "dimension(s)"),
            std::string::npos)
      << s;
  s = RunStatus(Reduce("Sum", DT_FLOAT), {x, Axes({-3})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  s = RunStatus(Reduce("Sum", DT_FLOAT), {Scalar<float>(1), Axes({0})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  // TensorFlow 2.21: "Axes contains duplicate dimension: 1" for [1, -1].
  s = RunStatus(Reduce("Sum", DT_FLOAT), {x, Axes({1, -1})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("duplicate dimension: 1"), std::string::npos) << s;
}

TEST(ReductionTest, MaxAndMinPropagateNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = MakeTensor<float>({2, 3}, {1, nan, 3, 4, 5, 6});
  ExpectTensorNear(RunOk(Reduce("Max", DT_FLOAT), {x, Axes({1})}),
                   MakeTensor<float>({2}, {nan, 6}), 0);
  ExpectTensorNear(RunOk(Reduce("Min", DT_FLOAT), {x, Axes({0})}),
                   MakeTensor<float>({3}, {1, nan, 3}), 0);
}

TEST(ReductionTest, AllAndAny) {
  const Tensor x =
      MakeTensor<bool>({2, 3}, {true, true, false, true, true, true});
  NodeBuilder all("n", "All"), any("n", "Any");
  ExpectTensorEqual(RunOk(all, {x, Axes({1})}),
                    MakeTensor<bool>({2}, {false, true}));
  ExpectTensorEqual(RunOk(all, {x, Axes({0})}),
                    MakeTensor<bool>({3}, {true, true, false}));
  ExpectTensorEqual(RunOk(any, {x, Axes({0, 1})}), Scalar<bool>(true));
  ExpectTensorEqual(RunOk(any, {MakeTensor<bool>({2}, {false, false}), Axes({0})}),
                    Scalar<bool>(false));
  // Empty: All is true, Any is false.
  const Tensor empty(DT_BOOL, TensorShape({0}));
  ExpectTensorEqual(RunOk(all, {empty, Axes({0})}), Scalar<bool>(true));
  ExpectTensorEqual(RunOk(any, {empty, Axes({0})}), Scalar<bool>(false));
}

// Shapes that take the threaded paths: many rows, few outputs (split
// rows), wide inner dims (chunked columns), and a staged [r, k, r] pattern.
TEST(ReductionTest, LargeReductions) {
  struct Case {
    std::vector<int64_t> shape;
    std::vector<int> axes;
  };
  for (const Case& c : std::vector<Case>{{{1 << 20}, {0}},
                                         {{100000, 3}, {0}},
                                         {{3, 100000}, {1}},
                                         {{2000, 700}, {0}},
                                         {{2000, 700}, {1}},
                                         {{64, 50, 300}, {0, 2}},
                                         {{20, 3000, 5}, {1}}}) {
    SCOPED_TRACE(TensorShape(c.shape).DebugString());
    const Tensor x = Random<double>(c.shape, -1, 1, 3);
    const Tensor a = Axes(ToInt32(c.axes));
    ExpectTensorNear(RunOk(Reduce("Sum", DT_DOUBLE), {x, a}),
                     RefSum<double>(x, c.axes), 1e-9);
    ExpectTensorEqual(
        RunOk(Reduce("Max", DT_DOUBLE), {x, a}),
        ReferenceReduce<double>(
            x, c.axes, false, -2.0, [](double m, double v) { return v > m ? v : m; },
            [](double m, int64_t) { return m; }));
  }
}

// ---- ArgMax / ArgMin -------------------------------------------------------

NodeBuilder Arg(const char* op, DataType dt, DataType out = DT_INT64) {
  return Node(op, dt).Attr("output_type", out);
}

template <typename T>
Tensor RefArg(const Tensor& x, int axis, bool max) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= x.dim_size(i);
  for (int i = axis + 1; i < x.dims(); ++i) inner *= x.dim_size(i);
  const int64_t n = x.dim_size(axis);
  TensorShape s = x.shape();
  s.RemoveDim(axis);
  Tensor out(DT_INT64, s);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t r = 1; r < n; ++r) {
        const T v = x.data<T>()[(o * n + r) * inner + i];
        const T b = x.data<T>()[(o * n + best) * inner + i];
        if (max ? v > b : v < b) best = r;
      }
      out.data<int64_t>()[o * inner + i] = best;
    }
  }
  return out;
}

TYPED_TEST(ReductionTest, ArgMaxArgMinEveryAxis) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x = Random<T>({4, 5, 6}, -100, 100, 8);
  for (int axis = -3; axis < 3; ++axis) {
    SCOPED_TRACE(axis);
    const int a = axis < 0 ? axis + 3 : axis;
    ExpectTensorEqual(RunOk(Arg("ArgMax", dt), {x, Scalar<int32_t>(axis)}),
                      RefArg<T>(x, a, true));
    ExpectTensorEqual(RunOk(Arg("ArgMin", dt), {x, Scalar<int32_t>(axis)}),
                      RefArg<T>(x, a, false));
  }
}

TEST(ArgMaxTest, TiesNanAndOutputType) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // TensorFlow 2.21: argmax([1,3,3,2]) = 1; argmax([1,nan,3,2]) = 2.
  ExpectTensorEqual(
      RunOk(Arg("ArgMax", DT_FLOAT, DT_INT32),
            {MakeTensor<float>({4}, {1, 3, 3, 2}), Scalar<int32_t>(0)}),
      Scalar<int32_t>(1));
  ExpectTensorEqual(
      RunOk(Arg("ArgMax", DT_FLOAT),
            {MakeTensor<float>({4}, {1, nan, 3, 2}), Scalar<int64_t>(0)}),
      Scalar<int64_t>(2));
  ExpectTensorEqual(
      RunOk(Arg("ArgMin", DT_INT32, DT_INT32),
            {MakeTensor<int32_t>({2, 3}, {5, 1, 1, 0, 9, 0}), Scalar<int32_t>(1)}),
      MakeTensor<int32_t>({2}, {1, 0}));
}

TEST(ArgMaxTest, Errors) {
  const Tensor x = Random<float>({2, 3}, 0, 1);
  // Messages as TensorFlow 2.21's.
  absl::Status s = RunStatus(Arg("ArgMax", DT_FLOAT), {x, Scalar<int32_t>(2)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("Expected dimension in the range [-2, 2), but got 2"),
            std::string::npos)
      << s;
  s = RunStatus(Arg("ArgMax", DT_FLOAT), {x, MakeTensor<int32_t>({1}, {1})});
  EXPECT_NE(s.message().find("dim must be a scalar"), std::string::npos) << s;
  s = RunStatus(Arg("ArgMax", DT_FLOAT),
                {Tensor(DT_FLOAT, TensorShape({2, 0})), Scalar<int32_t>(1)});
  EXPECT_NE(s.message().find("Reduction axis 1 is empty in shape [2,0]"),
            std::string::npos)
      << s;
  s = RunStatus(Arg("ArgMax", DT_FLOAT), {Scalar<float>(1), Scalar<int32_t>(0)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(ArgMaxTest, LargeInputs) {
  const Tensor x = Random<float>({3000, 300}, -1, 1, 4);
  ExpectTensorEqual(RunOk(Arg("ArgMax", DT_FLOAT), {x, Scalar<int32_t>(1)}),
                    RefArg<float>(x, 1, true));
  ExpectTensorEqual(RunOk(Arg("ArgMin", DT_FLOAT), {x, Scalar<int32_t>(0)}),
                    RefArg<float>(x, 0, false));
}

}  // namespace
}  // namespace weft
