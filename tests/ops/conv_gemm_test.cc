// SmallGemm (ops/cpu/conv_gemm.h) against a reference loop, and the
// convolutions built on it against direct nested-loop convolutions, on shapes
// the TensorFlow goldens do not reach: output depths past one and two
// vectors (17, 40), row counts that leave partial tiles, many chunks and
// several threads, transposed A, accumulation, and the sliding-window rows
// (conv_sliding.h) of narrow stride-1 convolutions and filter gradients.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "ops/cpu/conv_gemm.h"
#include "ops/testing/kernel_runner.h"

namespace weft {
namespace {

std::vector<float> RandomVector(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

TEST(SmallGemmTest, MatchesReferenceWithStridesAndAccumulate) {
  struct Shape { int64_t m, n, k; };
  for (const Shape s : {Shape{1, 1, 1}, Shape{12, 32, 7}, Shape{13, 16, 25},
                        Shape{25, 17, 400}, Shape{100, 40, 3}, Shape{7, 65, 31},
                        Shape{6, 8, 5}, Shape{13, 24, 9}, Shape{19, 48, 4},
                        Shape{5, 3, 0}}) {
    for (bool transposed : {false, true}) {
      for (bool accumulate : {false, true}) {
        SCOPED_TRACE(testing::Message() << s.m << "x" << s.n << "x" << s.k
                                        << " transposed=" << transposed
                                        << " accumulate=" << accumulate);
        const int64_t ldb = s.n + 3, ldc = s.n + 5;
        const std::vector<float> a = RandomVector(s.m * s.k + 1, 1);
        const std::vector<float> b = RandomVector(std::max<int64_t>(1, s.k * ldb), 2);
        std::vector<float> c = RandomVector(s.m * ldc, 3);
        std::vector<float> want = c;
        const int64_t a_row = transposed ? 1 : s.k, a_depth = transposed ? s.m : 1;
        for (int64_t i = 0; i < s.m; ++i) {
          for (int64_t j = 0; j < s.n; ++j) {
            double sum = accumulate ? want[i * ldc + j] : 0;
            for (int64_t p = 0; p < s.k; ++p) {
              sum += double{a[i * a_row + p * a_depth]} * b[p * ldb + j];
            }
            want[i * ldc + j] = static_cast<float>(sum);
          }
        }
        SmallGemm<float>(s.m, s.n, s.k, a.data(), a_row, a_depth, b.data(), ldb,
                         c.data(), ldc, accumulate);
        for (int64_t i = 0; i < s.m * ldc; ++i) {
          ASSERT_NEAR(c[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << "at " << i;
        }
      }
    }
  }
}

TEST(SmallGemmTest, OneColumnIsDotProducts) {
  // n = 1, B contiguous (ldb = 1): the dot-product path, with segments whose
  // length leaves a 16-lane tail.
  for (int64_t m : {1, 7, 30}) {
    for (bool accumulate : {false, true}) {
      const int64_t k = 3 * 37;
      const GemmALayout la{5, 1, 37, 60};
      const std::vector<float> a = RandomVector(5 * m + 2 * 60 + 37, 9);
      const std::vector<float> b = RandomVector(k, 10);
      std::vector<float> c = RandomVector(m * 2, 11);
      std::vector<float> want = c;
      for (int64_t i = 0; i < m; ++i) {
        double sum = accumulate ? want[i * 2] : 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += double{a[i * 5 + (p / 37) * 60 + p % 37]} * b[p];
        }
        want[i * 2] = static_cast<float>(sum);
      }
      SmallGemm<float>(m, 1, k, a.data(), la, b.data(), 1, c.data(), 2, accumulate);
      for (int64_t i = 0; i < m * 2; ++i) {
        ASSERT_NEAR(c[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << "m=" << m << " at " << i;
      }
    }
  }
}

TEST(SmallGemmTest, SegmentedDepth) {
  // k = 3 segments of 5; rows 2 apart, depth steps 3 apart, segments 40 apart.
  for (int64_t m : {1, 5, 12, 29}) {
    for (int64_t n : {16, 33}) {
      SCOPED_TRACE(testing::Message() << "m=" << m << " n=" << n);
      const int64_t k = 15;
      const GemmALayout la{2, 3, 5, 40};
      const std::vector<float> a = RandomVector(2 * m + 2 * 40 + 5 * 3, 7);
      const std::vector<float> b = RandomVector(k * n, 8);
      std::vector<float> c(m * n);
      SmallGemm<float>(m, n, k, a.data(), la, b.data(), n, c.data(), n, false);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double want = 0;
          for (int64_t p = 0; p < k; ++p) {
            want += double{a[i * 2 + (p / 5) * 40 + (p % 5) * 3]} * b[p * n + j];
          }
          ASSERT_NEAR(c[i * n + j], want, 1e-4 * (1 + std::abs(want)));
        }
      }
      std::vector<double> cd(m * n);
      const std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end());
      SmallGemm<double>(m, n, k, ad.data(), la, bd.data(), n, cd.data(), n, false);
      for (int64_t i = 0; i < m * n; ++i) ASSERT_NEAR(cd[i], c[i], 1e-4);
    }
  }
}

// Direct convolution, NHWC, SAME or VALID, stride s, row dilation dil.
struct Conv {
  int64_t batch, rows, cols, depth, f_rows, f_cols, out_depth, stride;
  bool same;
  int64_t dil = 1;
  int64_t f_rows_eff() const { return (f_rows - 1) * dil + 1; }
  int64_t out_rows() const { return same ? (rows + stride - 1) / stride : (rows - f_rows_eff()) / stride + 1; }
  int64_t out_cols() const { return same ? (cols + stride - 1) / stride : (cols - f_cols) / stride + 1; }
  int64_t pad_top() const { return same ? std::max<int64_t>(0, ((out_rows() - 1) * stride + f_rows_eff() - rows) / 2) : 0; }
  int64_t pad_left() const { return same ? std::max<int64_t>(0, ((out_cols() - 1) * stride + f_cols - cols) / 2) : 0; }
  // Calls fn(x_index, w_index, y_index) for every multiply of the forward conv.
  template <typename Fn>
  void ForEachTap(Fn fn) const {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t oh = 0; oh < out_rows(); ++oh)
        for (int64_t ow = 0; ow < out_cols(); ++ow)
          for (int64_t kh = 0; kh < f_rows; ++kh)
            for (int64_t kw = 0; kw < f_cols; ++kw) {
              const int64_t ih = oh * stride - pad_top() + kh * dil;
              const int64_t iw = ow * stride - pad_left() + kw;
              if (ih < 0 || ih >= rows || iw < 0 || iw >= cols) continue;
              for (int64_t c = 0; c < depth; ++c)
                for (int64_t o = 0; o < out_depth; ++o)
                  fn(((b * rows + ih) * cols + iw) * depth + c,
                     ((kh * f_cols + kw) * depth + c) * out_depth + o,
                     ((b * out_rows() + oh) * out_cols() + ow) * out_depth + o);
            }
  }
};

void ExpectNear(const Tensor& got, const std::vector<double>& want) {
  ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got.data<float>()[i], want[i], 1e-3 * (1 + std::abs(want[i]))) << "at " << i;
  }
}

TEST(ConvOnSmallGemmTest, LargerShapesMatchDirectConvolution) {
  for (const Conv& cv : {Conv{32, 14, 14, 16, 5, 5, 32, 1, true},
                        Conv{3, 11, 9, 3, 3, 3, 40, 2, false},
                        Conv{2, 20, 20, 24, 1, 1, 17, 1, false},
                        Conv{4, 28, 28, 1, 5, 5, 16, 1, true},
                        Conv{2, 9, 8, 9, 3, 2, 20, 1, true, 2},
                        Conv{3, 10, 7, 2, 2, 3, 5, 2, false, 3},
                        // Stride 1, 3 or 5 columns, 2-16 output channels:
                        // conv_sliding.h (forward and, for input depths of
                        // 8 or more, the input gradient); rows of 30 and 40
                        // pixels split into several tiles, a masked n.
                        Conv{2, 7, 30, 3, 3, 3, 16, 1, true},
                        Conv{3, 6, 17, 12, 5, 5, 5, 1, false},
                        Conv{2, 8, 9, 10, 3, 3, 7, 1, true, 2},
                        Conv{1, 5, 40, 16, 5, 5, 16, 1, true},
                        // 32 output channels, stride 1, rows of at most 14
                        // pixels: the sliding filter gradient (row dilation,
                        // VALID, depth 1).
                        Conv{2, 9, 10, 4, 3, 3, 32, 1, true, 2},
                        Conv{3, 8, 12, 6, 5, 5, 32, 1, false},
                        Conv{2, 9, 9, 1, 3, 3, 32, 1, true},
                        // One AVX2 vector exactly, and one and a half.
                        Conv{2, 7, 9, 3, 3, 3, 8, 1, true},
                        Conv{2, 6, 13, 4, 5, 5, 12, 1, false}}) {
    SCOPED_TRACE(testing::Message() << "input " << cv.batch << "x" << cv.rows << "x"
                                    << cv.cols << "x" << cv.depth << " filter "
                                    << cv.f_rows << "x" << cv.f_cols << "x"
                                    << cv.out_depth << " stride " << cv.stride
                                    << " row dilation " << cv.dil);
    const std::vector<int64_t> xs{cv.batch, cv.rows, cv.cols, cv.depth};
    const std::vector<int64_t> ws{cv.f_rows, cv.f_cols, cv.depth, cv.out_depth};
    const std::vector<int64_t> ys{cv.batch, cv.out_rows(), cv.out_cols(), cv.out_depth};
    const std::vector<float> x = RandomVector(xs[0] * xs[1] * xs[2] * xs[3], 4);
    const std::vector<float> w = RandomVector(ws[0] * ws[1] * ws[2] * ws[3], 5);
    const std::vector<float> dy = RandomVector(ys[0] * ys[1] * ys[2] * ys[3], 6);
    std::vector<double> y(dy.size()), dx(x.size()), dw(w.size());
    cv.ForEachTap([&](int64_t xi, int64_t wi, int64_t yi) {
      y[yi] += double{x[xi]} * w[wi];
      dx[xi] += double{dy[yi]} * w[wi];
      dw[wi] += double{x[xi]} * dy[yi];
    });
    auto node = [&](const char* op) {
      const std::vector<int64_t> strides{1, cv.stride, cv.stride, 1};
      const std::vector<int64_t> dilations{1, cv.dil, 1, 1};
      return NodeBuilder("c", op).Attr("T", DT_FLOAT).Attr("strides", strides)
          .Attr("dilations", dilations)
          .Attr("padding", cv.same ? "SAME" : "VALID").Build();
    };
    auto sizes = [](const std::vector<int64_t>& s) {
      return MakeTensor<int32_t>({4}, std::vector<int32_t>(s.begin(), s.end()));
    };
    KernelRunner fwd(node("Conv2D")), bi(node("Conv2DBackpropInput")),
        bf(node("Conv2DBackpropFilter"));
    auto got_y = fwd.Run({MakeTensor<float>(xs, x), MakeTensor<float>(ws, w)});
    ASSERT_TRUE(got_y.ok()) << got_y.status();
    ExpectNear(got_y->at(0), y);
    auto got_dx = bi.Run({sizes(xs), MakeTensor<float>(ws, w), MakeTensor<float>(ys, dy)});
    ASSERT_TRUE(got_dx.ok()) << got_dx.status();
    ExpectNear(got_dx->at(0), dx);
    auto got_dw = bf.Run({MakeTensor<float>(xs, x), sizes(ws), MakeTensor<float>(ys, dy)});
    ASSERT_TRUE(got_dw.ok()) << got_dw.status();
    ExpectNear(got_dw->at(0), dw);
  }
}

}  // namespace
}  // namespace weft
