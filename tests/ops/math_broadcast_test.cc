// NumPy broadcasting in the binary kernels: the plan (merging, strides),
// then every broadcasting shape family against a reference that indexes
// each output element independently.
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "ops/cpu/broadcast.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::Node;
using testing_util::Random;
using testing_util::RunOk;
using testing_util::RunStatus;

using Dims = std::vector<int64_t>;

Dims ToDims(absl::Span<const int64_t> s) { return Dims(s.begin(), s.end()); }

TEST(BroadcastPlanTest, SameShapeMergesToOneDim) {
  const BroadcastPlan p = *MakeBroadcastPlan(TensorShape({2, 3, 4}),
                                             TensorShape({2, 3, 4}));
  EXPECT_EQ(p.out_shape, TensorShape({2, 3, 4}));
  EXPECT_EQ(ToDims(p.dims), Dims({24}));
  EXPECT_EQ(ToDims(p.x_strides), Dims({1}));
  EXPECT_EQ(ToDims(p.y_strides), Dims({1}));
}

TEST(BroadcastPlanTest, RowAndColumnVectors) {
  BroadcastPlan p =
      *MakeBroadcastPlan(TensorShape({5, 7}), TensorShape({7}));
  EXPECT_EQ(ToDims(p.dims), Dims({5, 7}));
  EXPECT_EQ(ToDims(p.x_strides), Dims({7, 1}));
  EXPECT_EQ(ToDims(p.y_strides), Dims({0, 1}));
  p = *MakeBroadcastPlan(TensorShape({5, 7}), TensorShape({5, 1}));
  EXPECT_EQ(ToDims(p.dims), Dims({5, 7}));
  EXPECT_EQ(ToDims(p.y_strides), Dims({1, 0}));
  EXPECT_FALSE(p.y_inner_contiguous());
}

TEST(BroadcastPlanTest, MergesLikeDimsAndDropsOnes) {
  // [8,1,5] op [4,1] -> [8,4,5]: x broadcasts over dim 1, y over 0 and 2.
  BroadcastPlan p =
      *MakeBroadcastPlan(TensorShape({8, 1, 5}), TensorShape({4, 1}));
  EXPECT_EQ(p.out_shape, TensorShape({8, 4, 5}));
  EXPECT_EQ(ToDims(p.dims), Dims({8, 4, 5}));
  EXPECT_EQ(ToDims(p.x_strides), Dims({5, 0, 1}));
  EXPECT_EQ(ToDims(p.y_strides), Dims({0, 1, 0}));
  // [2,3,4,5] op [4,5]: the two leading dims merge.
  p = *MakeBroadcastPlan(TensorShape({2, 3, 4, 5}), TensorShape({4, 5}));
  EXPECT_EQ(ToDims(p.dims), Dims({6, 20}));
  EXPECT_EQ(ToDims(p.y_strides), Dims({0, 1}));
  // All ones: a single element.
  p = *MakeBroadcastPlan(TensorShape({1, 1}), TensorShape({1}));
  EXPECT_EQ(p.out_shape, TensorShape({1, 1}));
  EXPECT_EQ(ToDims(p.dims), Dims({1}));
}

TEST(BroadcastPlanTest, IncompatibleShapes) {
  const absl::StatusOr<BroadcastPlan> p =
      MakeBroadcastPlan(TensorShape({2, 3}), TensorShape({4}));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(), "Incompatible shapes: [2,3] vs. [4]");
  EXPECT_FALSE(ShapesBroadcast(TensorShape({2, 3}), TensorShape({4})));
  EXPECT_TRUE(ShapesBroadcast(TensorShape({2, 1}), TensorShape({4})));
}

TEST(BroadcastPlanTest, RowIteratorVisitsEveryRowOnce) {
  const BroadcastPlan p =
      *MakeBroadcastPlan(TensorShape({3, 1, 4, 2}), TensorShape({5, 1, 2}));
  // dims {3,5,4,2}: x strides {8,0,2,1}, y strides {0,2,0,1}.
  EXPECT_EQ(ToDims(p.dims), Dims({3, 5, 4, 2}));
  BroadcastRowIterator it(p, 7);  // row 7 = index (0, 1, 3)
  EXPECT_EQ(it.x_offset(), 3 * 2);
  EXPECT_EQ(it.y_offset(), 1 * 2);
  it.Next();  // row 8 = (0, 2, 0)
  EXPECT_EQ(it.x_offset(), 0);
  EXPECT_EQ(it.y_offset(), 2 * 2);
}

// The broadcast result of f over x and y, element by element.
template <typename T, typename Tout>
Tensor Reference(const Tensor& x, const Tensor& y,
                 const std::function<Tout(T, T)>& f) {
  const int rank = std::max(x.dims(), y.dims());
  auto dim = [rank](const Tensor& t, int i) {
    const int j = i - (rank - t.dims());
    return j >= 0 ? t.dim_size(j) : int64_t{1};
  };
  TensorShape out_shape;
  for (int i = 0; i < rank; ++i) {
    out_shape.AddDim(dim(x, i) == 1 ? dim(y, i) : dim(x, i));
  }
  Tensor out(DataTypeToEnum<Tout>::value, out_shape);
  std::vector<int64_t> index(rank, 0);
  for (int64_t e = 0; e < out.NumElements(); ++e) {
    int64_t rem = e;
    for (int i = rank - 1; i >= 0; --i) {
      index[i] = rem % out_shape.dim_size(i);
      rem /= out_shape.dim_size(i);
    }
    auto offset = [&](const Tensor& t) {
      int64_t off = 0;
      for (int i = 0; i < rank; ++i) {
        const int64_t d = dim(t, i);
        off = off * d + (d == 1 ? 0 : index[i]);
      }
      return off;
    };
    out.data<Tout>()[e] = f(x.data<T>()[offset(x)], y.data<T>()[offset(y)]);
  }
  return out;
}

struct Case {
  Dims x, y;
};

// Scalars, rows, columns, outer products, mixed rank-4 and rank-5 shapes,
// and empty tensors with a 0 dim.
const std::vector<Case>& Cases() {
  static const auto* cases = new std::vector<Case>{
      {{}, {3, 4}},           {{3, 4}, {}},           {{1, 1, 1}, {5}},
      {{6}, {1, 1}},          {{5, 7}, {7}},          {{7}, {5, 7}},
      {{5, 7}, {5, 1}},       {{5, 1}, {5, 7}},       {{4, 1}, {1, 6}},
      {{1, 6}, {4, 1}},       {{2, 1, 3, 1}, {1, 4, 1, 5}},
      {{2, 3, 4, 5}, {3, 1, 5}}, {{2, 3, 4, 5}, {4, 5}},
      {{1, 3, 1, 5, 2}, {4, 1, 6, 1, 2}},           {{0, 3}, {3}},
      {{2, 0}, {2, 1}},       {{0}, {1}},             {{3, 0, 2}, {0, 1}},
      {{}, {0}},
  };
  return *cases;
}

template <typename T>
void CheckCases(const char* op, const std::function<T(T, T)>& f) {
  const DataType dt = DataTypeToEnum<T>::value;
  uint32_t seed = 100;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(absl::StrCat(op, " ", TensorShape(c.x).DebugString(), " op ",
                              TensorShape(c.y).DebugString()));
    const Tensor x = Random<T>(c.x, -9, 9, ++seed);
    const Tensor y = Random<T>(c.y, 1, 9, ++seed);
    ExpectTensorEqual(RunOk(Node(op, dt), {x, y}), Reference<T, T>(x, y, f));
  }
}

TEST(BroadcastKernelTest, FloatArithmetic) {
  CheckCases<float>("AddV2", [](float a, float b) { return a + b; });
  CheckCases<float>("Sub", [](float a, float b) { return a - b; });
  CheckCases<float>("Mul", [](float a, float b) { return a * b; });
  CheckCases<float>("RealDiv", [](float a, float b) { return a / b; });
  CheckCases<float>("Maximum", [](float a, float b) { return a > b ? a : b; });
}

TEST(BroadcastKernelTest, DoubleAndIntegers) {
  CheckCases<double>("Sub", [](double a, double b) { return a - b; });
  CheckCases<int32_t>("Mul", [](int32_t a, int32_t b) { return a * b; });
  CheckCases<int64_t>("FloorDiv", [](int64_t a, int64_t b) {
    const int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  });
}

TEST(BroadcastKernelTest, ComparisonsBroadcast) {
  uint32_t seed = 500;
  for (const Case& c : Cases()) {
    const Tensor x = Random<int32_t>(c.x, -3, 3, ++seed);
    const Tensor y = Random<int32_t>(c.y, -3, 3, ++seed);
    ExpectTensorEqual(
        RunOk(Node("GreaterEqual", DT_INT32), {x, y}),
        Reference<int32_t, bool>(x, y, [](int32_t a, int32_t b) { return a >= b; }));
  }
}

TEST(BroadcastKernelTest, RandomShapesUpToRank6) {
  std::mt19937 gen(7);
  for (int trial = 0; trial < 60; ++trial) {
    const int rank = 1 + trial % 6;
    Dims out(rank), x, y;
    for (int i = 0; i < rank; ++i) out[i] = 1 + gen() % 4;
    // Each operand drops some leading dims and sets some dims to 1.
    const int xr = rank - static_cast<int>(gen() % (rank + 1));
    const int yr = rank - static_cast<int>(gen() % (rank + 1));
    for (int i = rank - xr; i < rank; ++i) x.push_back(gen() % 3 ? out[i] : 1);
    for (int i = rank - yr; i < rank; ++i) y.push_back(gen() % 3 ? out[i] : 1);
    SCOPED_TRACE(absl::StrCat(TensorShape(x).DebugString(), " op ",
                              TensorShape(y).DebugString()));
    const Tensor tx = Random<float>(x, -5, 5, trial);
    const Tensor ty = Random<float>(y, -5, 5, trial + 1000);
    ExpectTensorEqual(
        RunOk(Node("SquaredDifference", DT_FLOAT), {tx, ty}),
        Reference<float, float>(tx, ty, [](float a, float b) {
          return (a - b) * (a - b);
        }));
  }
}

TEST(BroadcastKernelTest, LargeBroadcastsUseThreads) {
  for (const Case& c : std::vector<Case>{{{2048, 700}, {700}},
                                         {{2048, 700}, {2048, 1}},
                                         {{64, 1, 3000}, {1, 40, 1}}}) {
    const Tensor x = Random<float>(c.x, -5, 5, 1);
    const Tensor y = Random<float>(c.y, -5, 5, 2);
    ExpectTensorEqual(
        RunOk(Node("AddV2", DT_FLOAT), {x, y}),
        Reference<float, float>(x, y, [](float a, float b) { return a + b; }));
  }
}

TEST(BroadcastKernelTest, IncompatibleShapesAtRunTime) {
  const absl::Status s = RunStatus(
      Node("AddV2", DT_FLOAT),
      {Random<float>({2, 3}, 0, 1), Random<float>({4}, 0, 1)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("Incompatible shapes: [2,3] vs. [4]"),
            std::string::npos)
      << s;
  // A 0 dim broadcasts only against 1 or 0.
  EXPECT_EQ(RunStatus(Node("Mul", DT_FLOAT),
                      {Tensor(DT_FLOAT, TensorShape({0, 3})),
                       Random<float>({2, 3}, 0, 1)})
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace weft
