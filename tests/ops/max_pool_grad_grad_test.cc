// MaxPoolGradGrad on CPU: ties go to the first maximum (as MaxPoolGrad's
// and TensorFlow's), many channels (the 16-lane path with a tail) and double
// (the scalar path) against a reference loop, the adjoint identity with
// MaxPoolGrad, and shape errors. The comparison with TensorFlow itself is in
// tests/conformance (op_max_pool_grad_grad).
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"

namespace weft {
namespace {

std::vector<int64_t> Window(int v) { return {1, v, v, 1}; }

tensorflow::NodeDef PoolNode(const char* op, DataType dt, int k, int s,
                             const char* padding) {
  NodeBuilder b("pool", op);
  b.Attr("T", dt).Attr("ksize", Window(k)).Attr("strides", Window(s))
      .Attr("padding", padding);
  return b.Build();
}

TEST(MaxPoolGradGradTest, TiesTakeTheFirstMaximum) {
  KernelRunner r(PoolNode("MaxPoolGradGrad", DT_FLOAT, 2, 2, "VALID"));
  auto y = r.Run({MakeTensor<float>({1, 2, 2, 1}, {5, 5, 5, 5}),
                  MakeTensor<float>({1, 1, 1, 1}, {5}),
                  MakeTensor<float>({1, 2, 2, 1}, {3, 4, 6, 7})});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectTensorEqual(y->at(0), MakeTensor<float>({1, 1, 1, 1}, {3}));
}

// A reference: for each output position and channel, grad at the first
// maximum of x over the (clipped) window.
std::vector<double> Reference(const std::vector<double>& x,
                              const std::vector<double>& g, int64_t n,
                              int64_t h, int64_t w, int64_t c, int64_t k,
                              int64_t s, int64_t pad_top, int64_t pad_left,
                              int64_t oh, int64_t ow) {
  std::vector<double> out;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t ch = 0; ch < c; ++ch) {
          int64_t arg = -1;
          for (int64_t r = i * s - pad_top; r < i * s - pad_top + k; ++r)
            for (int64_t q = j * s - pad_left; q < j * s - pad_left + k; ++q) {
              if (r < 0 || r >= h || q < 0 || q >= w) continue;
              const int64_t at = ((b * h + r) * w + q) * c + ch;
              if (arg < 0 || x[arg] < x[at]) arg = at;
            }
          out.push_back(arg < 0 ? 0.0 : g[arg]);
        }
  return out;
}

Tensor Fill(DataType dt, const TensorShape& shape, const std::vector<double>& v) {
  Tensor t(dt, shape);
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == DT_FLOAT) {
      t.data<float>()[i] = static_cast<float>(v[i]);
    } else {
      t.data<double>()[i] = v[i];
    }
  }
  return t;
}

double At(const Tensor& t, int64_t i) {
  return t.dtype() == DT_FLOAT ? t.data<float>()[i] : t.data<double>()[i];
}

// 37 channels (two full 16-lane blocks and a tail), overlapping 3x3 windows
// with stride 2, SAME (padding on both sides) and VALID (a dropped last
// column), ties within windows; float and double.
TEST(MaxPoolGradGradTest, ManyChannelsMatchReference) {
  const int64_t n = 2, h = 7, w = 6, c = 37, k = 3, s = 2;
  std::vector<double> x(n * h * w * c), g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<double>((i * 7919) % 23);
    g[i] = 0.25 * static_cast<double>(i % 11) - 1;
  }
  struct Geometry {
    const char* padding;
    int64_t oh, ow, pad_top, pad_left;
  };
  for (const Geometry& geo : {Geometry{"SAME", 4, 3, 1, 0},
                              Geometry{"VALID", 3, 2, 0, 0}}) {
    const std::vector<double> want = Reference(
        x, g, n, h, w, c, k, s, geo.pad_top, geo.pad_left, geo.oh, geo.ow);
    for (DataType dt : {DT_FLOAT, DT_DOUBLE}) {
      SCOPED_TRACE(std::string(geo.padding) + " " + DataTypeString(dt));
      KernelRunner r(PoolNode("MaxPoolGradGrad", dt, k, s, geo.padding));
      const TensorShape in_shape({n, h, w, c});
      Tensor y(dt, TensorShape({n, geo.oh, geo.ow, c}));  // only its shape is read
      auto out = r.Run({Fill(dt, in_shape, x), y, Fill(dt, in_shape, g)});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ(out->at(0).shape(), y.shape());
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(At(out->at(0), i), want[i]) << "at " << i;
      }
    }
  }
}

// MaxPoolGradGrad is MaxPoolGrad's transpose (for a fixed orig_input):
// <MaxPoolGradGrad(x, G), D> == <G, MaxPoolGrad(x, D)>, here with windows
// that overlap (3x3, stride 1) so MaxPoolGrad sums several gradients into
// one input.
TEST(MaxPoolGradGradTest, IsTheTransposeOfMaxPoolGrad) {
  const int64_t n = 1, h = 5, w = 6, c = 20;
  const TensorShape in_shape({n, h, w, c}), out_shape({n, h, w, c});  // SAME
  std::vector<double> x(in_shape.num_elements()), big(x.size()), small(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<double>((i * 104729) % 97) / 7.0;
    big[i] = static_cast<double>((i * 31) % 13) - 6;
    small[i] = static_cast<double>((i * 17) % 7) - 3;
  }
  const Tensor xt = Fill(DT_DOUBLE, in_shape, x);
  const Tensor orig_out(DT_DOUBLE, out_shape);
  KernelRunner gg(PoolNode("MaxPoolGradGrad", DT_DOUBLE, 3, 1, "SAME"));
  KernelRunner g(PoolNode("MaxPoolGrad", DT_DOUBLE, 3, 1, "SAME"));
  auto lhs = gg.Run({xt, orig_out, Fill(DT_DOUBLE, in_shape, big)});
  auto rhs = g.Run({xt, orig_out, Fill(DT_DOUBLE, out_shape, small)});
  ASSERT_TRUE(lhs.ok()) << lhs.status();
  ASSERT_TRUE(rhs.ok()) << rhs.status();
  double a = 0, b = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    a += At(lhs->at(0), i) * small[i];
    b += big[i] * At(rhs->at(0), i);
  }
  EXPECT_NE(a, 0.0);
  EXPECT_DOUBLE_EQ(a, b);
}

TEST(MaxPoolGradGradTest, ShapeErrorsNameTheInputs) {
  KernelRunner r(PoolNode("MaxPoolGradGrad", DT_FLOAT, 2, 2, "VALID"));
  const Tensor x(DT_FLOAT, TensorShape({1, 4, 4, 2}));
  auto bad_grad = r.Run({x, Tensor(DT_FLOAT, TensorShape({1, 2, 2, 2})),
                         Tensor(DT_FLOAT, TensorShape({1, 4, 4, 1}))});
  ASSERT_FALSE(bad_grad.ok());
  EXPECT_EQ(bad_grad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad_grad.status().message(), "grad [1,4,4,1]"))
      << bad_grad.status();
  auto bad_out = r.Run({x, Tensor(DT_FLOAT, TensorShape({1, 3, 2, 2})), x});
  ASSERT_FALSE(bad_out.ok());
  EXPECT_TRUE(absl::StrContains(bad_out.status().message(), "orig_output"))
      << bad_out.status();
}

}  // namespace
}  // namespace weft
