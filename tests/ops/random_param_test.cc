// ParameterizedTruncatedNormal, StatelessParameterizedTruncatedNormal and
// RandomGammaGrad: errors (TensorFlow's messages), empty outputs, values
// inside their bounds for each of the three samplers, a seeded stream that
// goes on across runs and is the same for two kernels, and the stateless
// form's broadcast layout. Bit-exact agreement with TensorFlow is
// tests/conformance/random_param_test.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "tests/ops/array_test_util.h"

namespace weft {
namespace {

using testing_util::Vec;

constexpr float kInf = std::numeric_limits<float>::infinity();

tensorflow::NodeDef Stateful(DataType dtype = DT_FLOAT, int seed = 5) {
  return NodeBuilder("p", "ParameterizedTruncatedNormal")
      .Attr("dtype", dtype)
      .Attr("T", DT_INT32)
      .Attr("seed", seed)
      .Attr("seed2", 9)
      .Build();
}

tensorflow::NodeDef Stateless(DataType dtype = DT_FLOAT) {
  return NodeBuilder("s", "StatelessParameterizedTruncatedNormal")
      .Attr("dtype", dtype)
      .Attr("S", DT_INT32)
      .Attr("Tseed", DT_INT64)
      .Build();
}

absl::StatusOr<std::vector<Tensor>> RunStateful(const Tensor& shape, float mean, float sd,
                                                float lo, float hi) {
  KernelRunner r(Stateful());
  return r.Run({shape, Tensor::Scalar(mean), Tensor::Scalar(sd), Tensor::Scalar(lo),
                Tensor::Scalar(hi)});
}

void ExpectError(const absl::StatusOr<std::vector<Tensor>>& out, const std::string& text) {
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), text)) << out.status();
}

TEST(ParameterizedTruncatedNormalTest, SamplesStayInsideTheirBounds) {
  // Normal rejection, uniform rejection, exponential tails on either side.
  const float cases[][4] = {{0, 1, -2, 2},     {0, 1, 0.5f, 0.6f}, {0, 1, 3, kInf},
                            {0, 1, -kInf, -4}, {5, 2, -kInf, 4},   {1, 0.1f, 0.95f, 1.5f}};
  for (const auto& p : cases) {
    auto out = RunStateful(Vec<int32_t>({3, 150}), p[0], p[1], p[2], p[3]);
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& t = (*out)[0];
    ASSERT_EQ(t.NumElements(), 450);
    for (int64_t i = 0; i < t.NumElements(); ++i) {
      const float v = t.data<float>()[i];
      ASSERT_TRUE(v >= p[2] && v <= p[3]) << v << " outside [" << p[2] << ", " << p[3] << "]";
    }
  }
}

TEST(ParameterizedTruncatedNormalTest, SeededStreamGoesOnAndRepeats) {
  const std::vector<Tensor> in = {Vec<int32_t>({10}), Tensor::Scalar(0.0f),
                                  Tensor::Scalar(1.0f), Tensor::Scalar(-1.0f),
                                  Tensor::Scalar(1.0f)};
  KernelRunner a(Stateful()), b(Stateful());
  auto a1 = a.Run(in), a2 = a.Run(in), b1 = b.Run(in);
  ASSERT_TRUE(a1.ok() && a2.ok() && b1.ok());
  const float* x1 = (*a1)[0].data<float>();
  const float* x2 = (*a2)[0].data<float>();
  const float* y1 = (*b1)[0].data<float>();
  bool differs = false;
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(x1[i], y1[i]);
    differs |= x1[i] != x2[i];
  }
  EXPECT_TRUE(differs);
}

TEST(ParameterizedTruncatedNormalTest, Errors) {
  ExpectError(RunStateful(Tensor::Scalar<int32_t>(3), 0, 1, -1, 1),
              "Input shape should be a vector, got shape: []");
  ExpectError(RunStateful(Vec<int32_t>({}), 0, 1, -1, 1), "Shape tensor must not be empty");
  ExpectError(RunStateful(Vec<int32_t>({2, -1}), 0, 1, -1, 1), "shape");
  ExpectError(RunStateful(Vec<int32_t>({4}), 0, 0, -1, 1), "Invalid parameters");
  ExpectError(RunStateful(Vec<int32_t>({4}), 0, 1, 1, 1), "Invalid parameters");
  ExpectError(RunStateful(Vec<int32_t>({4}), 0, 1, -kInf, kInf), "Invalid parameters");
  ExpectError(RunStateful(Vec<int32_t>({4}), 0, std::nanf(""), -1, 1), "Invalid parameters");
  // Empty outputs check nothing, as TensorFlow's.
  auto empty = RunStateful(Vec<int32_t>({0, 3}), 0, 0, 1, -1);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[0].NumElements(), 0);

  KernelRunner r(Stateful());
  ExpectError(r.Run({Vec<int32_t>({2, 2}), Tensor(DT_FLOAT, TensorShape({1, 1})),
                     Tensor::Scalar(1.0f), Tensor::Scalar(-1.0f), Tensor::Scalar(1.0f)}),
              "Input means should be a scalar or vector, got shape: [1,1]");
  ExpectError(r.Run({Vec<int32_t>({2, 2}), Vec<float>({0, 0, 0}), Tensor::Scalar(1.0f),
                     Tensor::Scalar(-1.0f), Tensor::Scalar(1.0f)}),
              "Input means should have length 1 or shape[0], got shape: [3]");
  ExpectError(r.Run({Vec<int32_t>({2, 2}), Tensor::Scalar(0.0f), Tensor::Scalar(1.0f),
                     Vec<float>({-1, -1, -1}), Tensor::Scalar(1.0f)}),
              "Input minvals should have length 1 or shape[0], got shape: [3]");
}

TEST(StatelessParameterizedTruncatedNormalTest, BroadcastLayoutAndErrors) {
  KernelRunner r(Stateless());
  const Tensor seed = Vec<int64_t>({1, 2});
  // Batches [2] (means), samples in front: column b holds batch b.
  auto out = r.Run({Vec<int32_t>({50, 2}), seed, Vec<float>({-100, 100}),
                    Tensor::Scalar(1.0f), Vec<float>({-101, 99}), Vec<float>({-99, 101})});
  ASSERT_TRUE(out.ok()) << out.status();
  const float* v = (*out)[0].data<float>();
  for (int s = 0; s < 50; ++s) {
    EXPECT_TRUE(v[2 * s] >= -101 && v[2 * s] <= -99) << v[2 * s];
    EXPECT_TRUE(v[2 * s + 1] >= 99 && v[2 * s + 1] <= 101) << v[2 * s + 1];
  }
  auto again = r.Run({Vec<int32_t>({50, 2}), seed, Vec<float>({-100, 100}),
                      Tensor::Scalar(1.0f), Vec<float>({-101, 99}), Vec<float>({-99, 101})});
  ASSERT_TRUE(again.ok());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(v[i], (*again)[0].data<float>()[i]);

  const Tensor one = Tensor::Scalar(1.0f);
  ExpectError(r.Run({Vec<int32_t>({4}), Vec<int64_t>({1, 2, 3}), one, one, Tensor::Scalar(0.0f),
                     Tensor::Scalar(2.0f)}),
              "seed must have shape [2], not [3]");
  ExpectError(r.Run({Vec<int32_t>({4, 3}), seed, Vec<float>({0, 0, 0}), Vec<float>({1, 1}),
                     Tensor::Scalar(0.0f), Tensor::Scalar(2.0f)}),
              "means, stddevs, minvals, maxvals must have compatible batch dimensions: "
              "[3] vs. [2] vs. [] vs. []");
  ExpectError(r.Run({Vec<int32_t>({3, 4}), seed, Vec<float>({0, 0, 0}), one,
                     Tensor::Scalar(0.0f), Tensor::Scalar(2.0f)}),
              "Shape passed in must end with broadcasted shape.");
  ExpectError(r.Run({Tensor::Scalar<int32_t>(3), seed, one, one, Tensor::Scalar(0.0f),
                     Tensor::Scalar(2.0f)}),
              "Input shape should be a vector");
  ExpectError(r.Run({Vec<int32_t>({3}), seed, one, Tensor::Scalar(-1.0f),
                     Tensor::Scalar(0.0f), Tensor::Scalar(2.0f)}),
              "Invalid parameters");
}

TEST(RandomGammaGradTest, BroadcastsAndMatchesAFiniteDifferenceOfTheCdf) {
  KernelRunner r(NodeBuilder("g", "RandomGammaGrad").Attr("T", DT_DOUBLE).Build());
  auto out = r.Run({Vec<double>({1.0, 2.0}), Tensor::Scalar(0.5)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].NumElements(), 2);
  // alpha 1 is the exponential: sample = -log(1 - u), so d sample / d alpha
  // is -(dF/dalpha) / f; for Gamma(1) at x, dF/dalpha = ... > 0, and the
  // derivative is positive and finite.
  for (int i = 0; i < 2; ++i) {
    const double d = (*out)[0].data<double>()[i];
    EXPECT_TRUE(std::isfinite(d) && d > 0) << d;
  }
  auto bad = r.Run({Vec<double>({1.0, 2.0}), Vec<double>({1.0, 2.0, 3.0})});
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace weft
