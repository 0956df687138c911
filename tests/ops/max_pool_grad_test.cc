// MaxPoolGrad and MaxPoolGradGrad on CPU against a scalar reference of
// TensorFlow's rule (row-major window walk, the first entry seeds the
// maximum, later ones replace it only when strictly greater): channel counts
// that fill no vector, one or several vectors and ragged ones (float's
// vector paths on AVX2 and AVX-512, with tails), square and rectangular
// windows, SAME and VALID, strides below, at and above the window, frequent
// ties, NaN and -inf inputs; float and double (the scalar path). Results
// must match exactly: the kernels add each window's gradient in the
// reference's order. TensorFlow's own outputs are in conv_golden.inc
// (conv_ops_test) and tests/conformance.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"

namespace weft {
namespace {

struct Geometry {
  int k_rows, k_cols, s_rows, s_cols;
  const char* padding;
};

struct Dims {
  int64_t n, h, w, c, oh, ow, pad_top, pad_left;
};

// TensorFlow's output size and padding before, for one spatial dimension.
void OutAndPad(int64_t in, int k, int s, bool same, int64_t* out, int64_t* pad) {
  if (same) {
    *out = (in + s - 1) / s;
    *pad = std::max<int64_t>((*out - 1) * s + k - in, 0) / 2;
  } else {
    *out = (in - k) / s + 1;
    *pad = 0;
  }
}

Dims MakeDims(int64_t n, int64_t h, int64_t w, int64_t c, const Geometry& g) {
  Dims d{n, h, w, c, 0, 0, 0, 0};
  const bool same = std::string(g.padding) == "SAME";
  OutAndPad(h, g.k_rows, g.s_rows, same, &d.oh, &d.pad_top);
  OutAndPad(w, g.k_cols, g.s_cols, same, &d.ow, &d.pad_left);
  return d;
}

// The offset of the arg max of channel ch over window (b, i, j), or -1 for
// an empty window.
template <typename T>
int64_t ArgMax(const std::vector<T>& x, const Dims& d, const Geometry& g,
               int64_t b, int64_t i, int64_t j, int64_t ch) {
  int64_t arg = -1;
  for (int64_t r = i * g.s_rows - d.pad_top; r < i * g.s_rows - d.pad_top + g.k_rows; ++r) {
    for (int64_t q = j * g.s_cols - d.pad_left; q < j * g.s_cols - d.pad_left + g.k_cols; ++q) {
      if (r < 0 || r >= d.h || q < 0 || q >= d.w) continue;
      const int64_t at = ((b * d.h + r) * d.w + q) * d.c + ch;
      if (arg < 0 || x[arg] < x[at]) arg = at;
    }
  }
  return arg;
}

template <typename T>
std::vector<T> RefMaxPoolGrad(const std::vector<T>& x, const std::vector<T>& grad,
                              const Dims& d, const Geometry& g) {
  std::vector<T> dx(x.size(), T(0));
  for (int64_t b = 0; b < d.n; ++b)
    for (int64_t i = 0; i < d.oh; ++i)
      for (int64_t j = 0; j < d.ow; ++j)
        for (int64_t ch = 0; ch < d.c; ++ch) {
          const int64_t arg = ArgMax(x, d, g, b, i, j, ch);
          if (arg >= 0) dx[arg] += grad[((b * d.oh + i) * d.ow + j) * d.c + ch];
        }
  return dx;
}

template <typename T>
std::vector<T> RefMaxPoolGradGrad(const std::vector<T>& x, const std::vector<T>& grad,
                                  const Dims& d, const Geometry& g) {
  std::vector<T> out;
  for (int64_t b = 0; b < d.n; ++b)
    for (int64_t i = 0; i < d.oh; ++i)
      for (int64_t j = 0; j < d.ow; ++j)
        for (int64_t ch = 0; ch < d.c; ++ch) {
          const int64_t arg = ArgMax(x, d, g, b, i, j, ch);
          out.push_back(arg < 0 ? T(0) : grad[arg]);
        }
  return out;
}

tensorflow::NodeDef PoolNode(const char* op, DataType dt, const Geometry& g) {
  NodeBuilder b("pool", op);
  b.Attr("T", dt)
      .Attr("ksize", std::vector<int64_t>{1, g.k_rows, g.k_cols, 1})
      .Attr("strides", std::vector<int64_t>{1, g.s_rows, g.s_cols, 1})
      .Attr("padding", g.padding);
  return b.Build();
}

template <typename T>
Tensor ToTensor(const std::vector<int64_t>& shape, const std::vector<T>& v) {
  return MakeTensor<T>(shape, v);
}

// Inputs: `levels` distinct values (few levels: many ties), with NaN and
// -inf sprinkled when `specials`.
template <typename T>
std::vector<T> Input(size_t size, int levels, bool specials) {
  std::vector<T> x(size);
  for (size_t i = 0; i < size; ++i) {
    x[i] = static_cast<T>((i * 7919) % levels) - T(2);
    if (specials && i % 29 == 3) x[i] = std::numeric_limits<T>::quiet_NaN();
    if (specials && i % 31 == 5) x[i] = -std::numeric_limits<T>::infinity();
  }
  return x;
}

template <typename T>
std::vector<T> Grad(size_t size) {
  std::vector<T> g(size);
  for (size_t i = 0; i < size; ++i) g[i] = T(0.25) * static_cast<T>(i % 11) - T(1);
  return g;
}

template <typename T>
void ExpectSame(const Tensor& got, const std::vector<T>& want) {
  ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got.data<T>()[i], want[i]) << "at " << i;
  }
}

const Geometry kGeometries[] = {
    {2, 2, 2, 2, "VALID"},  // the CNN's: windows tile the input
    {3, 3, 2, 2, "SAME"},   // overlapping, padding on both sides
    {3, 3, 1, 1, "SAME"},   // every input in up to 9 windows
    {3, 3, 2, 2, "VALID"},  // a dropped last row / column
    {2, 3, 1, 2, "SAME"},   // rectangular window and strides
    {3, 2, 2, 1, "VALID"},
    {2, 2, 3, 3, "VALID"},  // stride above the window: inputs in no window
    {4, 4, 3, 3, "SAME"},
};

template <typename T>
class MaxPoolGradTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MaxPoolGradTest, FloatTypes);

TYPED_TEST(MaxPoolGradTest, MatchesReferenceOnRaggedChannels) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  for (int64_t c : {1, 5, 8, 13, 16, 24, 37}) {
    for (const Geometry& g : kGeometries) {
      for (int levels : {3, 23}) {
        for (bool specials : {false, true}) {
          SCOPED_TRACE(absl::StrCat("c=", c, " window ", g.k_rows, "x", g.k_cols,
                                    " strides ", g.s_rows, "x", g.s_cols, " ",
                                    g.padding, " levels ", levels,
                                    specials ? " with NaN, -inf" : ""));
          const Dims d = MakeDims(2, 7, 6, c, g);
          const std::vector<int64_t> in_shape = {d.n, d.h, d.w, d.c};
          const std::vector<int64_t> out_shape = {d.n, d.oh, d.ow, d.c};
          const std::vector<T> x = Input<T>(d.n * d.h * d.w * c, levels, specials);
          const Tensor xt = ToTensor(in_shape, x);
          const Tensor orig_out(dt, TensorShape(out_shape));  // only its shape is read

          const std::vector<T> dy = Grad<T>(d.n * d.oh * d.ow * c);
          KernelRunner grad(PoolNode("MaxPoolGrad", dt, g));
          auto dx = grad.Run({xt, orig_out, ToTensor(out_shape, dy)});
          ASSERT_TRUE(dx.ok()) << dx.status();
          ExpectSame(dx->at(0), RefMaxPoolGrad(x, dy, d, g));

          const std::vector<T> gg = Grad<T>(x.size());
          KernelRunner grad_grad(PoolNode("MaxPoolGradGrad", dt, g));
          auto y = grad_grad.Run({xt, orig_out, ToTensor(in_shape, gg)});
          ASSERT_TRUE(y.ok()) << y.status();
          ExpectSame(y->at(0), RefMaxPoolGradGrad(x, gg, d, g));
        }
      }
    }
  }
}

// All-equal windows in every lane, tails included: each window's gradient
// goes to its first entry, as in TensorFlow.
TYPED_TEST(MaxPoolGradTest, TiesGoToTheFirstEntryInEveryLane) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  const Geometry g{2, 2, 2, 2, "VALID"};
  const int64_t c = 21;
  const std::vector<T> x(4 * 4 * c, T(5));
  std::vector<T> dy(2 * 2 * c);
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<T>(i + 1);
  KernelRunner r(PoolNode("MaxPoolGrad", dt, g));
  auto dx = r.Run({ToTensor({1, 4, 4, c}, x), Tensor(dt, TensorShape({1, 2, 2, c})),
                   ToTensor({1, 2, 2, c}, dy)});
  ASSERT_TRUE(dx.ok()) << dx.status();
  std::vector<T> want(x.size(), T(0));
  for (int64_t row = 0; row < 4; row += 2) {
    for (int64_t col = 0; col < 4; col += 2) {
      for (int64_t ch = 0; ch < c; ++ch) {
        want[(row * 4 + col) * c + ch] = dy[((row / 2) * 2 + col / 2) * c + ch];
      }
    }
  }
  ExpectSame(dx->at(0), want);
}

}  // namespace
}  // namespace weft
