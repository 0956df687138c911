// nn kernels: Relu, ReluGrad, BiasAdd(Grad) in both data formats, Softmax,
// LogSoftmax and SparseSoftmaxCrossEntropyWithLogits, against reference
// loops; numerical stability; TensorFlow's error messages.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::Node;
using testing_util::Random;
using testing_util::RunAll;
using testing_util::RunOk;
using testing_util::RunStatus;
using testing_util::Scalar;

template <typename T>
class NnTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(NnTest, FloatTypes);

TYPED_TEST(NnTest, ReluAndReluGrad) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  // TensorFlow 2.21: relu([nan, -1]) = [nan, 0].
  ExpectTensorNear(
      RunOk(Node("Relu", dt), {MakeTensor<T>({5}, {-2, 0, 3, nan, -1})}),
      MakeTensor<T>({5}, {0, 0, 3, nan, 0}), 0);
  ExpectTensorEqual(RunOk(Node("ReluGrad", dt),
                          {MakeTensor<T>({4}, {1, 2, 3, 4}),
                           MakeTensor<T>({4}, {-1, 0, 0.5, 2})}),
                    MakeTensor<T>({4}, {0, 0, 3, 4}));
  const absl::Status s = RunStatus(
      Node("ReluGrad", dt), {Random<T>({2, 3}, 0, 1), Random<T>({3, 2}, 0, 1)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

// The vectorised float path: whole vectors (16 or 8 lanes), a tail, NaN features
// (not > 0, so 0), sizes large enough to run on the pool.
TYPED_TEST(NnTest, ReluGradVectorBlocksAndTails) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (int64_t n : {1, 15, 16, 17, 37, 100003}) {
    const Tensor g = Random<T>({n}, -1, 1);
    Tensor f = Random<T>({n}, -1, 1);
    f.data<T>()[n / 2] = nan;
    const Tensor out = RunOk(Node("ReluGrad", dt), {g, f});
    for (int64_t i = 0; i < n; ++i) {
      const T want = f.data<T>()[i] > T(0) ? g.data<T>()[i] : T(0);
      ASSERT_EQ(out.data<T>()[i], want) << "n=" << n << " i=" << i;
    }
  }
}

TEST(NnTest, ReluIntegersAndLargeInputs) {
  ExpectTensorEqual(RunOk(Node("Relu", DT_INT32), {MakeTensor<int32_t>({3}, {-5, 0, 5})}),
                    MakeTensor<int32_t>({3}, {0, 0, 5}));
  const Tensor x = Random<float>({1000, 500}, -1, 1);
  const Tensor y = RunOk(Node("Relu", DT_FLOAT), {x});
  for (int64_t i = 0; i < x.NumElements(); i += 7) {
    ASSERT_EQ(y.data<float>()[i], std::max(0.0f, x.data<float>()[i]));
  }
}

// value + bias along `channel`.
template <typename T>
Tensor RefBiasAdd(const Tensor& v, const Tensor& b, int channel) {
  Tensor out(v.dtype(), v.shape());
  int64_t inner = 1;
  for (int i = channel + 1; i < v.dims(); ++i) inner *= v.dim_size(i);
  const int64_t c = v.dim_size(channel);
  for (int64_t i = 0; i < v.NumElements(); ++i) {
    out.data<T>()[i] = v.data<T>()[i] + b.data<T>()[(i / inner) % c];
  }
  return out;
}

template <typename T>
Tensor RefBiasAddGrad(const Tensor& g, int channel) {
  int64_t inner = 1;
  for (int i = channel + 1; i < g.dims(); ++i) inner *= g.dim_size(i);
  const int64_t c = g.dim_size(channel);
  std::vector<double> sums(c, 0);
  for (int64_t i = 0; i < g.NumElements(); ++i) {
    sums[(i / inner) % c] += g.data<T>()[i];
  }
  Tensor out(g.dtype(), TensorShape({c}));
  for (int64_t k = 0; k < c; ++k) out.data<T>()[k] = static_cast<T>(sums[k]);
  return out;
}

TYPED_TEST(NnTest, BiasAddBothFormats) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  struct Case {
    std::vector<int64_t> shape;
    const char* format;
    int channel;
  };
  for (const Case& c : std::vector<Case>{{{4, 3}, "NHWC", 1},
                                         {{2, 3, 4, 5}, "NHWC", 3},
                                         {{2, 3, 4, 5}, "NCHW", 1},
                                         {{2, 3, 4}, "NCHW", 1},
                                         {{1, 2, 1, 1, 3}, "NCHW", 1},
                                         // Rank 2 NCHW has its channels last
                                         // (TensorFlow 2.21's kernel).
                                         {{2, 3}, "NCHW", 1},
                                         {{64, 300, 40}, "NHWC", 2},
                                         {{8, 64, 30, 30}, "NCHW", 1}}) {
    SCOPED_TRACE(TensorShape(c.shape).DebugString() + " " + c.format);
    const Tensor v = Random<T>(c.shape, -5, 5, 1);
    const Tensor b = Random<T>({c.shape[c.channel]}, -5, 5, 2);
    ExpectTensorNear(
        RunOk(Node("BiasAdd", dt).Attr("data_format", c.format), {v, b}),
        RefBiasAdd<T>(v, b, c.channel), 1e-6);
    // Float sums of ~20000 terms of magnitude 5 round off by ~1e-4 (the
    // running sums reach ~1000).
    ExpectTensorNear(
        RunOk(Node("BiasAddGrad", dt).Attr("data_format", c.format), {v}),
        RefBiasAddGrad<T>(v, c.channel), std::is_same_v<T, float> ? 1e-3 : 1e-10);
  }
}

TEST(NnTest, BiasAddErrors) {
  // Messages as TensorFlow 2.21's.
  absl::Status s = RunStatus(Node("BiasAdd", DT_FLOAT),
                             {Random<float>({2, 3}, 0, 1), Random<float>({2}, 0, 1)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("Must provide as many biases as the last dimension "
                             "of the input tensor: [2] vs. [2,3]"),
            std::string::npos)
      << s;
  s = RunStatus(Node("BiasAdd", DT_FLOAT),
                {Random<float>({3}, 0, 1), Random<float>({3}, 0, 1)});
  EXPECT_NE(s.message().find("Input tensor must be at least 2D: [3]"),
            std::string::npos)
      << s;
  s = RunStatus(Node("BiasAdd", DT_FLOAT),
                {Random<float>({2, 3}, 0, 1), Random<float>({1, 3}, 0, 1)});
  EXPECT_NE(s.message().find("Biases must be 1D"), std::string::npos) << s;
  s = RunStatus(Node("BiasAddGrad", DT_FLOAT), {Random<float>({3}, 0, 1)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(NnTest, BiasAddGradOfEmptyBatch) {
  ExpectTensorEqual(RunOk(Node("BiasAddGrad", DT_FLOAT),
                          {Tensor(DT_FLOAT, TensorShape({0, 3}))}),
                    MakeTensor<float>({3}, {0, 0, 0}));
}

// Softmax of each row of [rows, classes], in double.
template <typename T>
std::vector<double> RefSoftmax(const Tensor& x, bool log) {
  const int64_t classes = x.dim_size(x.dims() - 1);
  std::vector<double> out(x.NumElements());
  for (int64_t r = 0; r < x.NumElements() / classes; ++r) {
    const T* row = x.data<T>() + r * classes;
    double max = row[0];
    for (int64_t j = 0; j < classes; ++j) max = std::max<double>(max, row[j]);
    double sum = 0;
    for (int64_t j = 0; j < classes; ++j) sum += std::exp(row[j] - max);
    for (int64_t j = 0; j < classes; ++j) {
      out[r * classes + j] = log ? row[j] - max - std::log(sum)
                                 : std::exp(row[j] - max) / sum;
    }
  }
  return out;
}

template <typename T>
Tensor FromDoubles(const TensorShape& shape, const std::vector<double>& v) {
  Tensor t(DataTypeToEnum<T>::value, shape);
  for (size_t i = 0; i < v.size(); ++i) t.data<T>()[i] = static_cast<T>(v[i]);
  return t;
}

TYPED_TEST(NnTest, SoftmaxAndLogSoftmax) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{7}, {3, 10}, {2, 3, 4}, {2000, 100}}) {
    SCOPED_TRACE(TensorShape(shape).DebugString());
    const Tensor x = Random<T>(shape, -10, 10, 3);
    ExpectTensorNear(RunOk(Node("Softmax", dt), {x}),
                     FromDoubles<T>(x.shape(), RefSoftmax<T>(x, false)), 1e-6);
    ExpectTensorNear(RunOk(Node("LogSoftmax", dt), {x}),
                     FromDoubles<T>(x.shape(), RefSoftmax<T>(x, true)), 1e-5);
  }
}

TEST(NnTest, SoftmaxIsStableForLargeLogits) {
  const Tensor x = MakeTensor<float>({2, 3}, {1000, 1001, 1002, -1000, -1000, -1000});
  const Tensor y = RunOk(Node("Softmax", DT_FLOAT), {x});
  // exp(-2), exp(-1), 1 normalised; uniform for equal logits.
  const double s = std::exp(-2.0) + std::exp(-1.0) + 1;
  ExpectTensorNear(y,
                   MakeTensor<float>({2, 3}, {static_cast<float>(std::exp(-2.0) / s),
                                              static_cast<float>(std::exp(-1.0) / s),
                                              static_cast<float>(1 / s), 1.0f / 3,
                                              1.0f / 3, 1.0f / 3}),
                   1e-6);
  // A NaN poisons its own row only.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ExpectTensorNear(RunOk(Node("Softmax", DT_FLOAT),
                         {MakeTensor<float>({2, 2}, {0, nan, 1, 1})}),
                   MakeTensor<float>({2, 2}, {nan, nan, 0.5f, 0.5f}), 1e-7);
  const absl::Status e = RunStatus(Node("Softmax", DT_FLOAT), {Scalar<float>(1)});
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument) << e;
  EXPECT_EQ(RunOk(Node("Softmax", DT_FLOAT), {Tensor(DT_FLOAT, TensorShape({2, 0}))})
                .shape(),
            TensorShape({2, 0}));
}

NodeBuilder Xent(DataType dt, DataType labels) {
  return Node("SparseSoftmaxCrossEntropyWithLogits", dt).Attr("Tlabels", labels);
}

template <typename T, typename L>
void CheckXent(const Tensor& logits, const Tensor& labels, double tol) {
  const std::vector<double> logp = RefSoftmax<T>(logits, true);
  const int64_t batch = logits.dim_size(0), classes = logits.dim_size(1);
  std::vector<double> loss(batch), grad(batch * classes);
  for (int64_t r = 0; r < batch; ++r) {
    const int64_t y = labels.data<L>()[r];
    loss[r] = -logp[r * classes + y];
    for (int64_t j = 0; j < classes; ++j) {
      grad[r * classes + j] = std::exp(logp[r * classes + j]) - (j == y ? 1 : 0);
    }
  }
  const std::vector<Tensor> out =
      RunAll(Xent(DataTypeToEnum<T>::value, DataTypeToEnum<L>::value),
             {logits, labels});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensorNear(out[0], FromDoubles<T>(TensorShape({batch}), loss), tol);
  ExpectTensorNear(out[1], FromDoubles<T>(logits.shape(), grad), tol);
}

TYPED_TEST(NnTest, SparseSoftmaxCrossEntropy) {
  using T = TypeParam;
  const Tensor logits = Random<T>({6, 5}, -4, 4, 5);
  CheckXent<T, int32_t>(logits, MakeTensor<int32_t>({6}, {0, 4, 2, 2, 1, 3}), 1e-6);
  CheckXent<T, int64_t>(logits, MakeTensor<int64_t>({6}, {4, 4, 0, 1, 1, 2}), 1e-6);
  const Tensor big = Random<T>({3000, 40}, -4, 4, 6);
  CheckXent<T, int64_t>(big, Random<int64_t>({3000}, 0, 40, 7), 1e-6);
}

TEST(NnTest, SparseSoftmaxCrossEntropyIsStable) {
  // Logits of 1e4 would overflow a naive exp(); the loss stays finite.
  const Tensor logits = MakeTensor<float>({1, 3}, {1e4f, 0, -1e4f});
  const std::vector<Tensor> out =
      RunAll(Xent(DT_FLOAT, DT_INT32), {logits, MakeTensor<int32_t>({1}, {1})});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensorNear(out[0], MakeTensor<float>({1}, {1e4f}), 1e-6);
  ExpectTensorNear(out[1], MakeTensor<float>({1, 3}, {1, -1, 0}), 1e-6);
}

TEST(NnTest, SparseSoftmaxCrossEntropyErrors) {
  const Tensor logits = Random<float>({3, 4}, 0, 1);
  // TensorFlow 2.21's message: the min label if negative, else the max.
  absl::Status s = RunStatus(Xent(DT_FLOAT, DT_INT64),
                             {logits, MakeTensor<int64_t>({3}, {1, 5, -1})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("Received a label value of -1 which is outside the "
                             "valid range of [0, 4).  Label values: 1 5 -1"),
            std::string::npos)
      << s;
  s = RunStatus(Xent(DT_FLOAT, DT_INT32),
                {logits, MakeTensor<int32_t>({3}, {1, 4, 0})});
  EXPECT_NE(s.message().find("Received a label value of 4"), std::string::npos) << s;
  s = RunStatus(Xent(DT_FLOAT, DT_INT32), {logits, MakeTensor<int32_t>({2}, {0, 0})});
  EXPECT_NE(s.message().find("logits and labels must have the same first "
                             "dimension, got logits shape [3,4] and labels shape [2]"),
            std::string::npos)
      << s;
  s = RunStatus(Xent(DT_FLOAT, DT_INT32),
                {Tensor(DT_FLOAT, TensorShape({2, 0})), MakeTensor<int32_t>({2}, {0, 0})});
  EXPECT_NE(s.message().find("Must have at least one class, but got logits shape "
                             "[2,0]"),
            std::string::npos)
      << s;
  s = RunStatus(Xent(DT_FLOAT, DT_INT32),
                {Random<float>({4}, 0, 1), MakeTensor<int32_t>({4}, {0, 0, 0, 0})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  // An empty batch is fine.
  const std::vector<Tensor> out =
      RunAll(Xent(DT_FLOAT, DT_INT32),
             {Tensor(DT_FLOAT, TensorShape({0, 4})), Tensor(DT_INT32, TensorShape({0}))});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), TensorShape({0}));
  EXPECT_EQ(out[1].shape(), TensorShape({0, 4}));
}

}  // namespace
}  // namespace weft
