// FusedBatchNorm* and the image resizes: values against reference loops
// (in double) for both layouts, the empty and edge cases, and the error
// paths with TensorFlow's wording, each naming the input at fault. The
// numbers against TensorFlow itself are in
// tests/conformance/nn_norm_resize_test.py.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::RunAll;
using testing_util::RunStatus;
using testing_util::Random;

NodeBuilder Bn(const std::string& op, bool training, const char* format = "NHWC",
               float factor = 1.0f) {
  NodeBuilder b("n", op);
  b.Attr("T", DT_FLOAT).Attr("epsilon", 0.001f).Attr("data_format", format)
      .Attr("is_training", training);
  if (op != "FusedBatchNormGrad" && op != "FusedBatchNorm") b.Attr("U", DT_FLOAT);
  if (op.find("Grad") == std::string::npos) b.Attr("exponential_avg_factor", factor);
  return b;
}

Tensor Vec(std::vector<float> v) {
  return MakeTensor<float>({static_cast<int64_t>(v.size())}, v);
}

// Element (o, c, s) of x viewed as [outer, channels, inner].
struct View {
  int64_t outer, channels, inner;
  int64_t at(int64_t o, int64_t c, int64_t s) const {
    return (o * channels + c) * inner + s;
  }
};

void ExpectStatus(const absl::Status& s, absl::string_view needle) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find(needle), absl::string_view::npos)
      << "'" << needle << "' not in: " << s;
}

// Training and inference forward, then the training gradient, in both
// layouts, against double-precision loops.
TEST(FusedBatchNormTest, MatchesReferenceLoops) {
  for (const char* format : {"NHWC", "NCHW"}) {
    const bool nchw = std::string(format) == "NCHW";
    const std::vector<int64_t> shape =
        nchw ? std::vector<int64_t>{3, 5, 7, 9} : std::vector<int64_t>{3, 7, 9, 5};
    const View v = nchw ? View{3, 5, 63} : View{189, 5, 1};
    const Tensor x = Random<float>(shape, -2, 3, 7);
    const Tensor dy = Random<float>(shape, -1, 1, 8);
    const Tensor scale = Vec({0.5f, 1, 2, -1, 3});
    const Tensor offset = Vec({0, 1, -1, 0.25f, 2});
    const Tensor old_mean = Vec({1, 2, 3, 4, 5});
    const Tensor old_var = Vec({1, 1, 2, 2, 3});
    const int64_t n = v.outer * v.inner;
    std::vector<double> mean(5), var(5);
    for (int64_t c = 0; c < 5; ++c) {
      double s = 0, sq = 0;
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) s += x.data<float>()[v.at(o, c, i)];
      mean[c] = s / n;
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          const double d = x.data<float>()[v.at(o, c, i)] - mean[c];
          sq += d * d;
        }
      var[c] = sq / n;
    }
    const std::vector<Tensor> out = RunAll(Bn("FusedBatchNormV3", true, format, 0.25f),
                                           {x, scale, offset, old_mean, old_var});
    ASSERT_EQ(out.size(), 6u);
    EXPECT_EQ(out[5].dims(), 0);
    for (int64_t c = 0; c < 5; ++c) {
      const double m = old_mean.data<float>()[c] * 0.75 + 0.25 * mean[c];
      const double vv = old_var.data<float>()[c] * 0.75 + 0.25 * var[c] * n / (n - 1);
      EXPECT_NEAR(out[1].data<float>()[c], m, 1e-5 * std::abs(m));
      EXPECT_NEAR(out[2].data<float>()[c], vv, 1e-5 * std::abs(vv));
      EXPECT_NEAR(out[3].data<float>()[c], mean[c], 1e-5 + 1e-5 * std::abs(mean[c]));
      EXPECT_NEAR(out[4].data<float>()[c], var[c], 1e-5 * var[c]);
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          const int64_t k = v.at(o, c, i);
          const double want = (x.data<float>()[k] - mean[c]) / std::sqrt(var[c] + 0.001) *
                                  scale.data<float>()[c] + offset.data<float>()[c];
          ASSERT_NEAR(out[0].data<float>()[k], want, 2e-5 * (1 + std::abs(want))) << k;
        }
    }
    // The gradient from the saved statistics.
    const std::vector<Tensor> g = RunAll(Bn("FusedBatchNormGradV3", true, format),
                                         {dy, x, scale, out[3], out[4], out[5]});
    ASSERT_EQ(g.size(), 5u);
    EXPECT_EQ(g[3].NumElements(), 0);
    for (int64_t c = 0; c < 5; ++c) {
      const double r = 1 / std::sqrt(var[c] + 0.001);
      double sdy = 0, sdyx = 0;
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          const int64_t k = v.at(o, c, i);
          sdy += dy.data<float>()[k];
          sdyx += dy.data<float>()[k] * (x.data<float>()[k] - mean[c]);
        }
      EXPECT_NEAR(g[2].data<float>()[c], sdy, 1e-4);
      EXPECT_NEAR(g[1].data<float>()[c], sdyx * r, 1e-4 * (1 + std::abs(sdyx * r)));
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          const int64_t k = v.at(o, c, i);
          const double xc = x.data<float>()[k] - mean[c];
          const double want = scale.data<float>()[c] * r *
                              (dy.data<float>()[k] - sdy / n - xc * r * r * sdyx / n);
          ASSERT_NEAR(g[0].data<float>()[k], want, 1e-4 * (1 + std::abs(want))) << k;
        }
    }
  }
}

TEST(FusedBatchNormTest, InferenceAndEmptyStatistics) {
  const Tensor x = MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  // Inference: y = (x - mean) * rsqrt(var + eps) * scale + offset; the
  // statistics pass through.
  const std::vector<Tensor> inf = RunAll(Bn("FusedBatchNorm", false),
                                         {x, Vec({2, 1}), Vec({1, 0}), Vec({1, 2}), Vec({4, 1})});
  ASSERT_EQ(inf.size(), 5u);
  const double r0 = 2 / std::sqrt(4.001), r1 = 1 / std::sqrt(1.001);
  EXPECT_NEAR(inf[0].data<float>()[0], 0 * r0 + 1, 1e-6);
  EXPECT_NEAR(inf[0].data<float>()[1], 0 * r1, 1e-6);
  EXPECT_NEAR(inf[0].data<float>()[2], 2 * r0 + 1, 1e-6);
  EXPECT_NEAR(inf[0].data<float>()[3], 2 * r1, 1e-6);
  EXPECT_EQ(inf[1].data<float>()[1], 2.0f);
  EXPECT_EQ(inf[2].data<float>()[0], 4.0f);
  // Training with empty mean and variance (what Keras feeds): fine while
  // exponential_avg_factor is 1. Two elements a channel: Bessel doubles.
  const std::vector<Tensor> tr = RunAll(Bn("FusedBatchNormV2", true),
                                        {x, Vec({1, 1}), Vec({0, 0}), Vec({}), Vec({})});
  ASSERT_EQ(tr.size(), 5u);
  EXPECT_FLOAT_EQ(tr[1].data<float>()[0], 2.0f);
  EXPECT_FLOAT_EQ(tr[2].data<float>()[0], 2.0f);
  EXPECT_FLOAT_EQ(tr[4].data<float>()[0], 1.0f);
  // An empty x: NaN statistics, zero gradients.
  const Tensor empty(DT_FLOAT, TensorShape({0, 2, 2, 2}));
  const std::vector<Tensor> e = RunAll(Bn("FusedBatchNormV3", true),
                                       {empty, Vec({1, 1}), Vec({0, 0}), Vec({}), Vec({})});
  ASSERT_EQ(e.size(), 6u);
  EXPECT_TRUE(std::isnan(e[1].data<float>()[0]));
  EXPECT_TRUE(std::isnan(e[2].data<float>()[1]));
  const std::vector<Tensor> eg = RunAll(Bn("FusedBatchNormGradV3", true),
                                        {empty, empty, Vec({1, 1}), Vec({0, 0}), Vec({1, 1}), Vec({})});
  ASSERT_EQ(eg.size(), 5u);
  EXPECT_EQ(eg[1].data<float>()[0], 0.0f);
  EXPECT_EQ(eg[2].data<float>()[1], 0.0f);
}

TEST(FusedBatchNormTest, ErrorsNameTheInput) {
  const Tensor x = Random<float>({2, 3, 3, 4}, -1, 1);
  const Tensor v4 = Vec({1, 1, 1, 1});
  const Tensor v3 = Vec({1, 1, 1});
  ExpectStatus(RunStatus(Bn("FusedBatchNormV3", true), {Random<float>({3, 4}, 0, 1), v4, v4, v4, v4}),
               "input must be 4 or 5-dimensional");
  ExpectStatus(RunStatus(Bn("FusedBatchNormV3", true), {x, v3, v4, v4, v4}),
               "scale must have the same number of elements as the channels of x, got 3 and 4");
  ExpectStatus(RunStatus(Bn("FusedBatchNormV3", true), {x, v4, v3, v4, v4}), "offset must have");
  ExpectStatus(RunStatus(Bn("FusedBatchNormV3", true), {x, Random<float>({2, 2}, 0, 1), v4, v4, v4}),
               "scale must be 1-dimensional");
  ExpectStatus(RunStatus(Bn("FusedBatchNormV3", false), {x, v4, v4, v3, v4}),
               "When is_training=false, mean must have");
  ExpectStatus(RunStatus(Bn("FusedBatchNormV3", false), {x, v4, v4, v4, v3}),
               "When is_training=false, variance must have");
  ExpectStatus(RunStatus(Bn("FusedBatchNormV3", true, "NHWC", 0.5f), {x, v4, v4, Vec({}), v4}),
               "When exponential_avg_factor != 1, mean must have");
  // NCHW: the channels are dim 1 (3 here).
  ExpectStatus(RunStatus(Bn("FusedBatchNormV3", true, "NCHW"), {x, v4, v4, v4, v4}),
               "got 4 and 3");
  // The gradients.
  const std::vector<Tensor> ok = {x, x, v4, v4, v4, Vec({})};
  std::vector<Tensor> bad = ok;
  bad[0] = Random<float>({2, 3, 3, 5}, 0, 1);
  ExpectStatus(RunStatus(Bn("FusedBatchNormGradV3", true), bad), "x and y_backprop must have same shape");
  bad = ok;
  bad[3] = v3;
  ExpectStatus(RunStatus(Bn("FusedBatchNormGradV3", true), bad), "reserve_space_1 must have");
  bad = ok;
  bad[4] = v3;
  ExpectStatus(RunStatus(Bn("FusedBatchNormGradV3", true), bad), "reserve_space_2 must have");
  bad = ok;
  bad[2] = v3;
  ExpectStatus(RunStatus(Bn("FusedBatchNormGradV3", true), bad), "scale must have");
  ExpectStatus(RunStatus(Bn("FusedBatchNormGradV3", false, "NCHW"),
                         {x, x, v3, v3, v3, Vec({})}),
               "only support NHWC");
}

NodeBuilder Resize(const std::string& op, DataType t, bool align, bool half) {
  NodeBuilder b("n", op);
  b.Attr("T", t).Attr("align_corners", align).Attr("half_pixel_centers", half);
  return b;
}

Tensor Size(int32_t h, int32_t w) { return MakeTensor<int32_t>({2}, {h, w}); }

TEST(ResizeTest, BilinearAndNearestValues) {
  const Tensor img = MakeTensor<float>({1, 2, 2, 1}, {0, 1, 2, 3});
  // align_corners 2 -> 3: the corners stay, the middle averages.
  ExpectTensorNear(RunAll(Resize("ResizeBilinear", DT_FLOAT, true, false), {img, Size(3, 3)})[0],
                   MakeTensor<float>({1, 3, 3, 1}, {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3}), 1e-6);
  // Legacy 2 -> 4: scale 0.5, the last rows clamp.
  ExpectTensorNear(RunAll(Resize("ResizeBilinear", DT_FLOAT, false, false), {img, Size(1, 4)})[0],
                   MakeTensor<float>({1, 1, 4, 1}, {0, 0.5, 1, 1}), 1e-6);
  // Half-pixel 2 -> 4 columns: x at -0.25, 0.25, 0.75, 1.25; the one row
  // at y 0.5, halfway between the two.
  ExpectTensorNear(RunAll(Resize("ResizeBilinear", DT_FLOAT, false, true), {img, Size(1, 4)})[0],
                   MakeTensor<float>({1, 1, 4, 1}, {1, 1.25, 1.75, 2}), 1e-6);
  // Integer images give float.
  const Tensor u8 = MakeTensor<uint8_t>({1, 1, 2, 1}, {0, 255});
  ExpectTensorNear(RunAll(Resize("ResizeBilinear", DT_UINT8, true, false), {u8, Size(1, 3)})[0],
                   MakeTensor<float>({1, 1, 3, 1}, {0, 127.5, 255}), 1e-6);
  // Nearest, 2 -> 3 with align_corners: round(0.5) = 1 (away from zero).
  ExpectTensorEqual(RunAll(Resize("ResizeNearestNeighbor", DT_FLOAT, true, false),
                           {img, Size(1, 3)})[0],
                    MakeTensor<float>({1, 1, 3, 1}, {0, 1, 1}));
  // Its gradient accumulates where the forward op sampled.
  ExpectTensorEqual(RunAll(Resize("ResizeNearestNeighborGrad", DT_FLOAT, true, false),
                           {MakeTensor<float>({1, 1, 3, 1}, {1, 2, 4}), Size(1, 2)})[0],
                    MakeTensor<float>({1, 1, 2, 1}, {1, 6}));
  // Bilinear's gradient sums to the incoming total.
  const Tensor g = Random<float>({2, 5, 7, 3}, -1, 1);
  const Tensor orig = Random<float>({2, 3, 4, 3}, 0, 1);
  const Tensor dx = RunAll(Resize("ResizeBilinearGrad", DT_FLOAT, false, true), {g, orig})[0];
  ASSERT_EQ(dx.shape(), orig.shape());
  double in = 0, out = 0;
  for (int64_t i = 0; i < g.NumElements(); ++i) in += g.data<float>()[i];
  for (int64_t i = 0; i < dx.NumElements(); ++i) out += dx.data<float>()[i];
  EXPECT_NEAR(in, out, 1e-4);
}

TEST(ResizeTest, ErrorsNameTheInput) {
  const Tensor img = Random<float>({1, 3, 3, 2}, 0, 1);
  for (const char* op : {"ResizeBilinear", "ResizeNearestNeighbor"}) {
    SCOPED_TRACE(op);
    ExpectStatus(RunStatus(Resize(op, DT_FLOAT, true, true), {img, Size(2, 2)}),
                 "If half_pixel_centers is True, align_corners must be False.");
    ExpectStatus(RunStatus(Resize(op, DT_FLOAT, false, false),
                           {Random<float>({3, 3, 2}, 0, 1), Size(2, 2)}),
                 "input must be 4-dimensional");
    ExpectStatus(RunStatus(Resize(op, DT_FLOAT, false, false),
                           {img, MakeTensor<int32_t>({3}, {1, 2, 3})}),
                 "shape_t must have two elements");
    ExpectStatus(RunStatus(Resize(op, DT_FLOAT, false, false),
                           {img, MakeTensor<int32_t>({1, 2}, {2, 2})}),
                 "shape_t must be 1-dimensional");
    ExpectStatus(RunStatus(Resize(op, DT_FLOAT, false, false), {img, Size(0, 2)}),
                 "output dimensions must be positive");
    ExpectStatus(RunStatus(Resize(op, DT_FLOAT, false, false), {img, Size(2, -3)}),
                 "output dimensions must be positive");
    ExpectStatus(RunStatus(Resize(op, DT_FLOAT, false, false),
                           {Tensor(DT_FLOAT, TensorShape({1, 0, 3, 2})), Size(2, 2)}),
                 "input image must be of non-zero size");
    // A huge size fails before anything is allocated or computed.
    const absl::Status huge = RunStatus(Resize(op, DT_FLOAT, false, false),
                                        {img, Size(2147483647, 2147483647)});
    EXPECT_FALSE(huge.ok());
    EXPECT_NE(huge.message().find("too large"), absl::string_view::npos) << huge;
  }
  ExpectStatus(RunStatus(Resize("ResizeNearestNeighborGrad", DT_FLOAT, false, false),
                         {img, Size(0, 1)}),
               "shape_t's elements must be positive");
  const absl::Status huge = RunStatus(Resize("ResizeNearestNeighborGrad", DT_FLOAT, false, false),
                                      {img, Size(2147483647, 2147483647)});
  EXPECT_FALSE(huge.ok());
  // TensorFlow lets the nearest gradient through with both attrs.
  EXPECT_TRUE(RunStatus(Resize("ResizeNearestNeighborGrad", DT_FLOAT, true, true),
                        {img, Size(2, 2)}).ok());
  ExpectStatus(RunStatus(Resize("ResizeBilinearGrad", DT_FLOAT, true, true), {img, img}),
               "If half_pixel_centers is True");
  ExpectStatus(RunStatus(Resize("ResizeBilinearGrad", DT_FLOAT, false, false),
                         {img, Random<float>({3, 3}, 0, 1)}),
               "original_image must be 4-dimensional");
  ExpectStatus(RunStatus(Resize("ResizeBilinearGrad", DT_FLOAT, false, false),
                         {Random<float>({3, 3}, 0, 1), img}),
               "input_grad must be 4-dimensional");
}

}  // namespace
}  // namespace weft
