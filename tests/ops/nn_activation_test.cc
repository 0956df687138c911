// Relu6, LeakyRelu, Elu, Selu, Softplus, Softsign and their gradients;
// L2Loss and SoftmaxCrossEntropyWithLogits; each against a reference loop.
#include <cmath>
#include <functional>
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

template <typename T>
class ActivationTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ActivationTest, FloatTypes);

// Applies f to each element of x.
template <typename T>
Tensor Map(const Tensor& x, const std::function<double(double)>& f) {
  Tensor out(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    out.data<T>()[i] = static_cast<T>(f(x.data<T>()[i]));
  }
  return out;
}

template <typename T>
Tensor Map2(const Tensor& a, const Tensor& b,
            const std::function<double(double, double)>& f) {
  Tensor out(a.dtype(), a.shape());
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    out.data<T>()[i] = static_cast<T>(f(a.data<T>()[i], b.data<T>()[i]));
  }
  return out;
}

constexpr double kScale = 1.0507009873554804934193349852946;
constexpr double kAlpha = 1.6732632423543772848170429916717;

TYPED_TEST(ActivationTest, ForwardMatchesFormulas) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  // Large enough to be sharded over threads.
  const Tensor x = Random<T>({300, 257}, -8, 8);
  const double tol = std::is_same_v<T, float> ? 2e-6 : 1e-12;
  ExpectTensorNear(RunOk(Node("Relu6", dt), {x}),
                   Map<T>(x, [](double v) { return std::min(std::max(v, 0.0), 6.0); }), 0);
  ExpectTensorNear(RunOk(Node("Elu", dt), {x}),
                   Map<T>(x, [](double v) { return v < 0 ? std::expm1(v) : v; }), tol);
  ExpectTensorNear(RunOk(Node("Selu", dt), {x}), Map<T>(x, [](double v) {
                     return v < 0 ? kScale * kAlpha * std::expm1(v) : kScale * v;
                   }),
                   tol * 4);
  ExpectTensorNear(RunOk(Node("Softplus", dt), {x}),
                   Map<T>(x, [](double v) { return std::log1p(std::exp(v)); }), tol * 4);
  ExpectTensorNear(RunOk(Node("Softsign", dt), {x}),
                   Map<T>(x, [](double v) { return v / (1 + std::abs(v)); }), tol);
  ExpectTensorNear(RunOk(Node("LeakyRelu", dt).Attr("alpha", 0.3f), {x}),
                   Map<T>(x, [](double v) { return v > 0 ? v : static_cast<double>(T(0.3f)) * v; }),
                   tol);
  ExpectTensorEqual(RunOk(Node("Relu6", DT_INT32), {MakeTensor<int32_t>({4}, {-3, 2, 6, 9})}),
                    MakeTensor<int32_t>({4}, {0, 2, 6, 6}));
}

TYPED_TEST(ActivationTest, SoftplusStaysFiniteAtExtremes) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor y = RunOk(Node("Softplus", dt), {MakeTensor<T>({3}, {-1000, 0, 1000})});
  EXPECT_NEAR(y.data<T>()[0], 0, 1e-30);
  EXPECT_NEAR(y.data<T>()[1], std::log(2.0), 1e-6);
  EXPECT_EQ(y.data<T>()[2], T(1000));
}

TYPED_TEST(ActivationTest, GradientsMatchFormulas) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor g = Random<T>({40, 33}, -2, 2, 7);
  const Tensor f = Random<T>({40, 33}, -8, 8, 8);
  const double tol = std::is_same_v<T, float> ? 2e-6 : 1e-12;
  ExpectTensorNear(RunOk(Node("Relu6Grad", dt), {g, f}),
                   Map2<T>(g, f, [](double a, double v) { return v > 0 && v < 6 ? a : 0; }), 0);
  const Tensor elu = RunOk(Node("Elu", dt), {f});
  ExpectTensorNear(RunOk(Node("EluGrad", dt), {g, elu}),
                   Map2<T>(g, f, [](double a, double v) { return v < 0 ? a * std::exp(v) : a; }),
                   tol * 4);
  const Tensor selu = RunOk(Node("Selu", dt), {f});
  ExpectTensorNear(RunOk(Node("SeluGrad", dt), {g, selu}), Map2<T>(g, f, [](double a, double v) {
                     return v < 0 ? a * kScale * kAlpha * std::exp(v) : a * kScale;
                   }),
                   tol * 8);
  ExpectTensorNear(RunOk(Node("SoftplusGrad", dt), {g, f}),
                   Map2<T>(g, f, [](double a, double v) { return a / (1 + std::exp(-v)); }), tol);
  ExpectTensorNear(RunOk(Node("SoftsignGrad", dt), {g, f}), Map2<T>(g, f, [](double a, double v) {
                     return a / ((1 + std::abs(v)) * (1 + std::abs(v)));
                   }),
                   tol);
  ExpectTensorNear(RunOk(Node("LeakyReluGrad", dt), {g, f}),
                   Map2<T>(g, f, [](double a, double v) {
                     return v > 0 ? a : static_cast<double>(T(0.2f)) * a;
                   }),
                   tol);
  const absl::Status s = RunStatus(Node("LeakyReluGrad", dt),
                                   {Random<T>({2, 3}, 0, 1), Random<T>({5}, 0, 1)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TYPED_TEST(ActivationTest, L2Loss) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Tensor x = Random<T>({100, 1000}, -1, 1);  // several blocks
  double want = 0;
  for (int64_t i = 0; i < x.NumElements(); ++i) want += x.data<T>()[i] * double{x.data<T>()[i]};
  const Tensor y = RunOk(Node("L2Loss", dt), {x});
  ASSERT_EQ(y.dims(), 0);
  EXPECT_NEAR(y.data<T>()[0], want / 2, want * 1e-5);
  EXPECT_EQ(RunOk(Node("L2Loss", dt), {Tensor(dt, TensorShape({0}))}).data<T>()[0], T(0));
}

// loss_r = -sum(labels * log_softmax(logits)), backprop = softmax - labels.
template <typename T>
void CheckXent(const Tensor& logits, const Tensor& labels, int64_t rows, int64_t classes) {
  auto at = [](const Tensor& t, int64_t r, int64_t c) {
    return double{t.data<T>()[(t.dim_size(0) == 1 ? 0 : r) * t.dim_size(1) +
                              (t.dim_size(1) == 1 ? 0 : c)]};
  };
  std::vector<Tensor> out = RunAll(
      Node("SoftmaxCrossEntropyWithLogits", DataTypeToEnum<T>::value), {logits, labels});
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[1].shape(), TensorShape({rows, classes}));
  for (int64_t r = 0; r < rows; ++r) {
    double max = -1e300, sum = 0;
    for (int64_t c = 0; c < classes; ++c) max = std::max(max, at(logits, r, c));
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(at(logits, r, c) - max);
    double loss = 0;
    for (int64_t c = 0; c < classes; ++c) {
      const double log_p = at(logits, r, c) - max - std::log(sum);
      loss -= at(labels, r, c) * log_p;
      EXPECT_NEAR(out[1].data<T>()[r * classes + c], std::exp(log_p) - at(labels, r, c), 1e-5);
    }
    EXPECT_NEAR(out[0].data<T>()[r], loss, 1e-4 * (1 + std::abs(loss)));
  }
}

TYPED_TEST(ActivationTest, SoftmaxCrossEntropy) {
  using T = TypeParam;
  CheckXent<T>(Random<T>({64, 10}, -30, 30), Random<T>({64, 10}, 0, 1, 3), 64, 10);
  // Labels broadcast along the batch; logits along the classes.
  CheckXent<T>(Random<T>({5, 4}, -3, 3), Random<T>({1, 4}, 0, 1, 3), 5, 4);
  CheckXent<T>(Random<T>({5, 1}, -3, 3), Random<T>({5, 4}, 0, 1, 3), 5, 4);
  const absl::Status s =
      RunStatus(Node("SoftmaxCrossEntropyWithLogits", DataTypeToEnum<T>::value),
                {Random<T>({5, 4}, 0, 1), Random<T>({3, 4}, 0, 1)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find("broadcastable"), std::string::npos) << s;
}

}  // namespace
}  // namespace weft
