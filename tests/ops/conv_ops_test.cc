// Conv2D, its backprops and pooling against TensorFlow (conv_golden.inc, from
// conv_golden.py): SAME / VALID / EXPLICIT, strides 1 and 2, dilation, odd
// sizes, batch > 1. Also attr and shape errors, NCHW, and a timing of the
// 32x28x28x1 -> 32 filters 5x5 Conv2D (printed, not asserted).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"

namespace weft {
namespace {

struct ConvCase {
  const char* name;
  std::vector<int64_t> in_shape, f_shape;
  int stride, dilation;
  const char* padding;
  std::vector<int64_t> explicit_paddings, out_shape;
  std::vector<float> x, w, dy, y, dx, dw;
};
struct PoolCase {
  const char* name;
  std::vector<int64_t> in_shape;
  int ksize, stride;
  const char* padding;
  std::vector<int64_t> out_shape;
  std::vector<float> x, dy, max, max_grad, avg, avg_grad;
};

#include "tests/ops/conv_golden.inc"

std::vector<int64_t> Window(int v) { return {1, v, v, 1}; }

Tensor Sizes(const std::vector<int64_t>& s) {
  std::vector<int32_t> v(s.begin(), s.end());
  return MakeTensor<int32_t>({4}, v);
}

NodeBuilder ConvNode(const char* op, const ConvCase& tc) {
  NodeBuilder b("conv", op);
  b.Attr("T", DT_FLOAT)
      .Attr("strides", Window(tc.stride))
      .Attr("dilations", Window(tc.dilation))
      .Attr("padding", tc.padding);
  if (!tc.explicit_paddings.empty()) b.Attr("explicit_paddings", tc.explicit_paddings);
  return b;
}

constexpr double kTol = 1e-4;

TEST(ConvOpsTest, Conv2DAndBackpropsMatchTensorFlow) {
  for (const ConvCase& tc : kConvCases) {
    SCOPED_TRACE(tc.name);
    const Tensor x = MakeTensor<float>(tc.in_shape, tc.x);
    const Tensor w = MakeTensor<float>(tc.f_shape, tc.w);
    const Tensor dy = MakeTensor<float>(tc.out_shape, tc.dy);

    KernelRunner fwd(ConvNode("Conv2D", tc).Build());
    auto y = fwd.Run({x, w});
    ASSERT_TRUE(y.ok()) << y.status();
    ExpectTensorNear(y->at(0), MakeTensor<float>(tc.out_shape, tc.y), kTol);

    KernelRunner bi(ConvNode("Conv2DBackpropInput", tc).Build());
    auto dx = bi.Run({Sizes(tc.in_shape), w, dy});
    ASSERT_TRUE(dx.ok()) << dx.status();
    ExpectTensorNear(dx->at(0), MakeTensor<float>(tc.in_shape, tc.dx), kTol);

    KernelRunner bf(ConvNode("Conv2DBackpropFilter", tc).Build());
    auto dw = bf.Run({x, Sizes(tc.f_shape), dy});
    ASSERT_TRUE(dw.ok()) << dw.status();
    ExpectTensorNear(dw->at(0), MakeTensor<float>(tc.f_shape, tc.dw), kTol);
  }
}

TEST(ConvOpsTest, Conv2DDouble) {
  const ConvCase& tc = kConvCases[1];
  std::vector<double> xd(tc.x.begin(), tc.x.end()), wd(tc.w.begin(), tc.w.end()),
      yd(tc.y.begin(), tc.y.end());
  NodeBuilder b = ConvNode("Conv2D", tc);
  b.Attr("T", DT_DOUBLE);
  KernelRunner fwd(b.Build());
  auto y = fwd.Run({MakeTensor<double>(tc.in_shape, xd), MakeTensor<double>(tc.f_shape, wd)});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectTensorNear(y->at(0), MakeTensor<double>(tc.out_shape, yd), kTol);
}

NodeBuilder PoolNode(const char* op, const PoolCase& tc) {
  NodeBuilder b("pool", op);
  b.Attr("T", DT_FLOAT)
      .Attr("ksize", Window(tc.ksize))
      .Attr("strides", Window(tc.stride))
      .Attr("padding", tc.padding);
  return b;
}

TEST(PoolOpsTest, MatchesTensorFlow) {
  for (const PoolCase& tc : kPoolCases) {
    SCOPED_TRACE(tc.name);
    const Tensor x = MakeTensor<float>(tc.in_shape, tc.x);
    const Tensor dy = MakeTensor<float>(tc.out_shape, tc.dy);
    const Tensor ymax = MakeTensor<float>(tc.out_shape, tc.max);

    KernelRunner mp(PoolNode("MaxPool", tc).Build());
    auto y = mp.Run({x});
    ASSERT_TRUE(y.ok()) << y.status();
    ExpectTensorNear(y->at(0), ymax, 0);

    KernelRunner mpg(PoolNode("MaxPoolGrad", tc).Build());
    auto g = mpg.Run({x, ymax, dy});
    ASSERT_TRUE(g.ok()) << g.status();
    ExpectTensorNear(g->at(0), MakeTensor<float>(tc.in_shape, tc.max_grad), kTol);

    KernelRunner ap(PoolNode("AvgPool", tc).Build());
    y = ap.Run({x});
    ASSERT_TRUE(y.ok()) << y.status();
    ExpectTensorNear(y->at(0), MakeTensor<float>(tc.out_shape, tc.avg), kTol);

    KernelRunner apg(PoolNode("AvgPoolGrad", tc).Build());
    g = apg.Run({Sizes(tc.in_shape), dy});
    ASSERT_TRUE(g.ok()) << g.status();
    ExpectTensorNear(g->at(0), MakeTensor<float>(tc.in_shape, tc.avg_grad), kTol);
  }
}

TEST(PoolOpsTest, MaxPoolGradTiesGoToFirstMaximum) {
  NodeBuilder b("pool", "MaxPoolGrad");
  b.Attr("T", DT_FLOAT).Attr("ksize", Window(2)).Attr("strides", Window(2))
      .Attr("padding", "VALID");
  KernelRunner r(b.Build());
  auto g = r.Run({MakeTensor<float>({1, 2, 2, 1}, {5, 5, 5, 5}),
                  MakeTensor<float>({1, 1, 1, 1}, {5}),
                  MakeTensor<float>({1, 1, 1, 1}, {3})});
  ASSERT_TRUE(g.ok()) << g.status();
  ExpectTensorEqual(g->at(0), MakeTensor<float>({1, 2, 2, 1}, {3, 0, 0, 0}));
}

// Many channels (two full 16-lane blocks and a tail), overlapping 3x3
// windows with stride 2 and SAME padding, ties within windows: float (the
// vectorised path) and double (the scalar one) route every gradient to the
// same place as a reference loop.
TEST(PoolOpsTest, MaxPoolGradManyChannelsMatchesReference) {
  const int64_t n = 2, h = 7, w = 6, c = 37;
  std::vector<float> xv(n * h * w * c);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>((i * 7919) % 23);
  const int64_t oh = 4, ow = 3;  // SAME, stride 2
  std::vector<float> gv(n * oh * ow * c);
  for (size_t i = 0; i < gv.size(); ++i) gv[i] = 0.25f * static_cast<float>(i % 11) - 1;
  std::vector<double> want(xv.size(), 0.0);
  const int64_t pad_top = ((oh - 1) * 2 + 3 - h) / 2, pad_left = ((ow - 1) * 2 + 3 - w) / 2;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t ch = 0; ch < c; ++ch) {
          int64_t arg = -1;
          for (int64_t r = i * 2 - pad_top; r < i * 2 - pad_top + 3; ++r)
            for (int64_t q = j * 2 - pad_left; q < j * 2 - pad_left + 3; ++q) {
              if (r < 0 || r >= h || q < 0 || q >= w) continue;
              const int64_t at = ((b * h + r) * w + q) * c + ch;
              if (arg < 0 || xv[arg] < xv[at]) arg = at;
            }
          want[arg] += gv[((b * oh + i) * ow + j) * c + ch];
        }
  for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
    SCOPED_TRACE(DataTypeString(dt));
    NodeBuilder b("pool", "MaxPoolGrad");
    b.Attr("T", dt).Attr("ksize", Window(3)).Attr("strides", Window(2))
        .Attr("padding", "SAME");
    KernelRunner r(b.Build());
    Tensor x(dt, TensorShape({n, h, w, c})), g(dt, TensorShape({n, oh, ow, c}));
    for (size_t i = 0; i < xv.size(); ++i) {
      if (dt == DT_FLOAT) x.data<float>()[i] = xv[i]; else x.data<double>()[i] = xv[i];
    }
    for (size_t i = 0; i < gv.size(); ++i) {
      if (dt == DT_FLOAT) g.data<float>()[i] = gv[i]; else g.data<double>()[i] = gv[i];
    }
    Tensor y(dt, TensorShape({n, oh, ow, c}));  // only its shape is read
    auto out = r.Run({x, y, g});
    ASSERT_TRUE(out.ok()) << out.status();
    for (size_t i = 0; i < want.size(); ++i) {
      const double got = dt == DT_FLOAT ? out->at(0).data<float>()[i]
                                        : out->at(0).data<double>()[i];
      ASSERT_NEAR(got, want[i], 1e-5) << "at " << i;
    }
  }
}

// Runs `node` on inputs expecting failure; returns the message.
std::string Error(const tensorflow::NodeDef& node, const std::vector<Tensor>& in,
                  absl::StatusCode code) {
  KernelRunner r(node);
  auto out = r.Run(in);
  EXPECT_FALSE(out.ok());
  if (out.ok()) return "";
  EXPECT_EQ(out.status().code(), code) << out.status();
  return std::string(out.status().message());
}

TEST(ConvOpsTest, Errors) {
  const Tensor x = MakeTensor<float>({1, 4, 4, 2}, {});
  const Tensor w = MakeTensor<float>({3, 3, 2, 1}, {});
  auto conv = [](std::vector<int64_t> strides, const char* format = "NHWC") {
    return NodeBuilder("c", "Conv2D").Attr("T", DT_FLOAT).Attr("strides", strides)
        .Attr("padding", "SAME").Attr("data_format", format);
  };
  std::string msg = Error(conv({1, 2, 2}).Build(), {x, w},
                          absl::StatusCode::kInvalidArgument);
  EXPECT_NE(msg.find("strides"), std::string::npos) << msg;
  msg = Error(conv({2, 1, 1, 1}).Build(), {x, w}, absl::StatusCode::kInvalidArgument);
  EXPECT_NE(msg.find("strides"), std::string::npos) << msg;
  msg = Error(conv({1, 1, 1, 1}).Attr("dilations", std::vector<int64_t>{1, 0, 1, 1}).Build(),
              {x, w}, absl::StatusCode::kInvalidArgument);
  EXPECT_NE(msg.find("dilations"), std::string::npos) << msg;
  msg = Error(conv({1, 1, 1, 1}, "NCHW").Build(), {x, w},
              absl::StatusCode::kUnimplemented);
  EXPECT_NE(msg.find("NHWC"), std::string::npos) << msg;
  msg = Error(conv({1, 1, 1, 1}).Build(), {x, MakeTensor<float>({3, 3, 3, 1}, {})},
              absl::StatusCode::kInvalidArgument);
  EXPECT_NE(msg.find("depth"), std::string::npos) << msg;
  msg = Error(conv({1, 1, 1, 1}).Attr("padding", "VALID").Build(),
              {x, MakeTensor<float>({5, 5, 2, 1}, {})}, absl::StatusCode::kInvalidArgument);
  EXPECT_NE(msg.find("window"), std::string::npos) << msg;
  msg = Error(conv({1, 1, 1, 1}).Attr("padding", "EXPLICIT")
                  .Attr("explicit_paddings", std::vector<int64_t>{0, 0, 1, 1}).Build(),
              {x, w}, absl::StatusCode::kInvalidArgument);
  EXPECT_NE(msg.find("explicit_paddings"), std::string::npos) << msg;
  // Backprop with an out_backprop of the wrong shape.
  msg = Error(NodeBuilder("c", "Conv2DBackpropInput").Attr("T", DT_FLOAT)
                  .Attr("strides", Window(1)).Attr("padding", "SAME").Build(),
              {Sizes({1, 4, 4, 2}), w, MakeTensor<float>({1, 3, 3, 1}, {})},
              absl::StatusCode::kInvalidArgument);
  EXPECT_NE(msg.find("out_backprop"), std::string::npos) << msg;
  // Pools: ksize names the attr.
  msg = Error(NodeBuilder("p", "MaxPool").Attr("T", DT_FLOAT)
                  .Attr("ksize", std::vector<int64_t>{1, 2, 2, 2})
                  .Attr("strides", Window(1)).Attr("padding", "VALID").Build(),
              {x}, absl::StatusCode::kInvalidArgument);
  EXPECT_NE(msg.find("ksize"), std::string::npos) << msg;
}

// Conv2D by its definition (double sums), SAME or VALID, NHWC / HWIO.
std::vector<float> ReferenceConv(const std::vector<int64_t>& xs, const std::vector<float>& x,
                                 const std::vector<int64_t>& ws, const std::vector<float>& w,
                                 int stride, bool same, std::vector<int64_t>* out_shape) {
  const int64_t batch = xs[0], ih = xs[1], iw = xs[2], c = xs[3];
  const int64_t kh = ws[0], kw = ws[1], n = ws[3];
  const int64_t oh = same ? (ih + stride - 1) / stride : (ih - kh) / stride + 1;
  const int64_t ow = same ? (iw + stride - 1) / stride : (iw - kw) / stride + 1;
  const int64_t pt = same ? std::max<int64_t>((oh - 1) * stride + kh - ih, 0) / 2 : 0;
  const int64_t pl = same ? std::max<int64_t>((ow - 1) * stride + kw - iw, 0) / 2 : 0;
  *out_shape = {batch, oh, ow, n};
  std::vector<float> y(batch * oh * ow * n);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < oh; ++r)
      for (int64_t q = 0; q < ow; ++q)
        for (int64_t o = 0; o < n; ++o) {
          double sum = 0;
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t yy = r * stride + i - pt, xx = q * stride + j - pl;
              if (yy < 0 || yy >= ih || xx < 0 || xx >= iw) continue;
              for (int64_t ch = 0; ch < c; ++ch) {
                sum += double{x[((b * ih + yy) * iw + xx) * c + ch]} *
                       w[((i * kw + j) * c + ch) * n + o];
              }
            }
          y[((b * oh + r) * ow + q) * n + o] = static_cast<float>(sum);
        }
  return y;
}

TEST(ConvOpsTest, FiltersLargerThanL2MatchReference) {
  // Filters over the 512 KiB L2 budget take other paths (conv_im2col.h's
  // column blocks, packed once per task, and a 1x1 as one packed GEMM);
  // 160 and 300 columns leave a partial last block.
  struct Case {
    std::vector<int64_t> x, w;
    int stride;
    bool same;
  };
  const Case cases[] = {
      {{1, 9, 7, 128}, {3, 3, 128, 160}, 1, true},
      {{2, 8, 9, 128}, {3, 3, 128, 160}, 2, true},
      {{1, 7, 7, 160}, {3, 3, 160, 96}, 1, false},
      {{2, 6, 5, 512}, {1, 1, 512, 300}, 1, false},
      {{1, 6, 6, 512}, {1, 1, 512, 300}, 2, false},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(testing::Message() << "filter " << tc.w[0] << "x" << tc.w[1] << "x"
                                    << tc.w[2] << "x" << tc.w[3] << " stride " << tc.stride);
    std::vector<float> xv(tc.x[0] * tc.x[1] * tc.x[2] * tc.x[3]);
    std::vector<float> wv(tc.w[0] * tc.w[1] * tc.w[2] * tc.w[3]);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>((i * 7919) % 13) / 13 - 0.5f;
    for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<float>((i * 104729) % 17) / 170 - 0.05f;
    std::vector<int64_t> out_shape;
    const std::vector<float> want = ReferenceConv(tc.x, xv, tc.w, wv, tc.stride, tc.same, &out_shape);
    KernelRunner conv(NodeBuilder("c", "Conv2D").Attr("T", DT_FLOAT)
                          .Attr("strides", Window(tc.stride))
                          .Attr("padding", tc.same ? "SAME" : "VALID").Build());
    auto y = conv.Run({MakeTensor<float>(tc.x, xv), MakeTensor<float>(tc.w, wv)});
    ASSERT_TRUE(y.ok()) << y.status();
    ExpectTensorNear(y->at(0), MakeTensor<float>(out_shape, want), 1e-4);
  }
}

// Milliseconds per run of `r` on `in` (after one warm-up run).
double MsPerRun(KernelRunner& r, const std::vector<Tensor>& in) {
  EXPECT_TRUE(r.Run(in).ok());
  const int kIters = 20;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kIters; ++i) EXPECT_TRUE(r.Run(in).ok());
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start).count() / kIters;
}

TEST(ConvOpsTest, Timing) {
  // The reference size: 32x28x28x1 input, 32 filters of 5x5, SAME, and its
  // two backprops. Printed for comparison with TensorFlow, not asserted.
  std::vector<float> xv(32 * 28 * 28), wv(5 * 5 * 32), gv(32 * 28 * 28 * 32);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i % 7) * 0.1f;
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<float>(i % 5) * 0.1f;
  for (size_t i = 0; i < gv.size(); ++i) gv[i] = static_cast<float>(i % 3) * 0.1f;
  const Tensor x = MakeTensor<float>({32, 28, 28, 1}, xv);
  const Tensor w = MakeTensor<float>({5, 5, 1, 32}, wv);
  const Tensor dy = MakeTensor<float>({32, 28, 28, 32}, gv);
  auto node = [](const char* op) {
    return NodeBuilder("c", op).Attr("T", DT_FLOAT).Attr("strides", Window(1))
        .Attr("padding", "SAME").Build();
  };
  KernelRunner fwd(node("Conv2D"));
  KernelRunner bi(node("Conv2DBackpropInput"));
  KernelRunner bf(node("Conv2DBackpropFilter"));
  std::printf("Conv2D 32x28x28x1 -> 32 filters 5x5 SAME: %.3f ms/run\n",
              MsPerRun(fwd, {x, w}));
  std::printf("Conv2DBackpropInput (same sizes): %.3f ms/run\n",
              MsPerRun(bi, {Sizes({32, 28, 28, 1}), w, dy}));
  std::printf("Conv2DBackpropFilter (same sizes): %.3f ms/run\n",
              MsPerRun(bf, {x, Sizes({5, 5, 1, 32}), dy}));
}

}  // namespace
}  // namespace weft
