// BatchMatMulV2, Cumsum/Cumprod, ClipByValue, DivNoNan, ReciprocalGrad and
// UnsortedSegmentSum, against reference loops.
#include <cmath>
#include <string>
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

// x: [bx..., m, k] (or [.., k, m] with adj_x), y likewise; batch dims of
// equal rank, broadcast where 1.
Tensor RefBatchMatMul(const Tensor& x, const Tensor& y, bool adj_x, bool adj_y) {
  const int r = x.dims();
  const int64_t m = x.dim_size(adj_x ? r - 1 : r - 2);
  const int64_t k = x.dim_size(adj_x ? r - 2 : r - 1);
  const int64_t n = y.dim_size(adj_y ? r - 2 : r - 1);
  std::vector<int64_t> dims;
  for (int d = 0; d < r - 2; ++d) dims.push_back(std::max(x.dim_size(d), y.dim_size(d)));
  int64_t batches = 1;
  for (int64_t d : dims) batches *= d;
  dims.push_back(m);
  dims.push_back(n);
  Tensor out(DT_FLOAT, TensorShape(dims));
  for (int64_t b = 0; b < batches; ++b) {
    int64_t xb = 0, yb = 0, rem = b;
    int64_t xs = 1, ys = 1;
    for (int d = r - 3; d >= 0; --d) {
      const int64_t i = rem % dims[d];
      rem /= dims[d];
      xb += (x.dim_size(d) == 1 ? 0 : i) * xs;
      yb += (y.dim_size(d) == 1 ? 0 : i) * ys;
      xs *= x.dim_size(d);
      ys *= y.dim_size(d);
    }
    const float* xp = x.data<float>() + xb * m * k;
    const float* yp = y.data<float>() + yb * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) {
          s += double{adj_x ? xp[p * m + i] : xp[i * k + p]} *
               (adj_y ? yp[j * k + p] : yp[p * n + j]);
        }
        out.data<float>()[(b * m + i) * n + j] = static_cast<float>(s);
      }
    }
  }
  return out;
}

TEST(BatchMatMulTest, BroadcastAndAdjoints) {
  struct Case {
    std::vector<int64_t> x, y;
    bool adj_x, adj_y;
  };
  for (const Case& c : std::vector<Case>{
           {{3, 4, 5}, {3, 5, 2}, false, false},
           {{2, 1, 5, 4}, {1, 3, 5, 6}, true, false},
           {{2, 3, 4}, {1, 6, 4}, false, true},
           {{2, 4, 3}, {2, 6, 4}, true, true},
           {{4, 64, 96}, {4, 96, 80}, false, false},  // the Gemm path
           {{64, 8, 8}, {64, 8, 8}, false, true},     // many small products
       }) {
    const Tensor x = Random<float>(c.x, -1, 1, 1);
    const Tensor y = Random<float>(c.y, -1, 1, 2);
    const Tensor got = RunOk(
        Node("BatchMatMulV2", DT_FLOAT).Attr("adj_x", c.adj_x).Attr("adj_y", c.adj_y), {x, y});
    ExpectTensorNear(got, RefBatchMatMul(x, y, c.adj_x, c.adj_y), 1e-4);
  }
  const absl::Status s = RunStatus(Node("BatchMatMulV2", DT_FLOAT),
                                   {Random<float>({2, 3, 4}, 0, 1), Random<float>({3, 4, 2}, 0, 1)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

// Scans x [outer, len, inner] along len.
Tensor RefScan(const Tensor& x, int axis, bool prod, bool exclusive, bool reverse) {
  Tensor out(DT_FLOAT, x.shape());
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.dim_size(d);
  for (int d = axis + 1; d < x.dims(); ++d) inner *= x.dim_size(d);
  const int64_t len = x.dim_size(axis);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double acc = prod ? 1 : 0;
      for (int64_t s = 0; s < len; ++s) {
        const int64_t l = reverse ? len - 1 - s : s;
        const int64_t at = (o * len + l) * inner + i;
        const double v = x.data<float>()[at];
        if (!exclusive) acc = prod ? acc * v : acc + v;
        out.data<float>()[at] = static_cast<float>(acc);
        if (exclusive) acc = prod ? acc * v : acc + v;
      }
    }
  }
  return out;
}

TEST(ScanTest, CumsumAndCumprodAllModes) {
  const Tensor x = Random<float>({3, 7, 5}, 0.5, 1.5);
  for (const char* op : {"Cumsum", "Cumprod"}) {
    for (int axis : {0, 1, 2, -1}) {
      for (bool exclusive : {false, true}) {
        for (bool reverse : {false, true}) {
          const Tensor got = RunOk(
              Node(op, DT_FLOAT).Attr("exclusive", exclusive).Attr("reverse", reverse),
              {x, Scalar<int32_t>(axis)});
          ExpectTensorNear(got,
                           RefScan(x, axis < 0 ? axis + 3 : axis, op[3] == 'p', exclusive, reverse),
                           1e-5);
        }
      }
    }
  }
  ExpectTensorEqual(RunOk(Node("Cumsum", DT_INT64), {MakeTensor<int64_t>({4}, {1, 2, 3, 4}),
                                                     Scalar<int64_t>(0)}),
                    MakeTensor<int64_t>({4}, {1, 3, 6, 10}));
  const absl::Status s = RunStatus(Node("Cumsum", DT_FLOAT), {x, Scalar<int32_t>(3)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(ClipByValueTest, ScalarAndTensorBounds) {
  const Tensor x = MakeTensor<float>({2, 3}, {-2, -0.5, 0, 0.5, 1, 3});
  ExpectTensorEqual(RunOk(Node("ClipByValue", DT_FLOAT), {x, Scalar(-1.0f), Scalar(0.7f)}),
                    MakeTensor<float>({2, 3}, {-1, -0.5, 0, 0.5, 0.7f, 0.7f}));
  ExpectTensorEqual(RunOk(Node("ClipByValue", DT_FLOAT),
                          {x, MakeTensor<float>({2, 3}, {0, 0, 0, 1, 1, 1}), Scalar(2.0f)}),
                    MakeTensor<float>({2, 3}, {0, 0, 0, 1, 1, 2}));
  ExpectTensorEqual(RunOk(Node("ClipByValue", DT_INT32),
                          {MakeTensor<int32_t>({3}, {-5, 1, 9}), Scalar(0), Scalar(4)}),
                    MakeTensor<int32_t>({3}, {0, 1, 4}));
  const absl::Status s = RunStatus(Node("ClipByValue", DT_FLOAT),
                                   {x, MakeTensor<float>({2}, {0, 0}), Scalar(1.0f)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(DivNoNanTest, ZeroDivisorGivesZero) {
  ExpectTensorEqual(RunOk(Node("DivNoNan", DT_FLOAT), {MakeTensor<float>({2, 2}, {1, 0, 3, 4}),
                                                       MakeTensor<float>({2}, {0, 2})}),
                    MakeTensor<float>({2, 2}, {0, 0, 0, 2}));
}

TEST(ReciprocalGradTest, MinusDyTimesYSquared) {
  ExpectTensorNear(RunOk(Node("ReciprocalGrad", DT_FLOAT),
                         {MakeTensor<float>({3}, {0.5f, -2, 4}), MakeTensor<float>({3}, {1, 2, -1})}),
                   MakeTensor<float>({3}, {-0.25f, -8, 16}), 1e-6);
}

TEST(UnsortedSegmentSumTest, SumsRowsDropsNegativeIds) {
  const Tensor data = MakeTensor<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  ExpectTensorEqual(
      RunOk(Node("UnsortedSegmentSum", DT_FLOAT).Attr("Tindices", DT_INT32),
            {data, MakeTensor<int32_t>({4}, {2, 0, 2, -1}), Scalar<int32_t>(3)}),
      MakeTensor<float>({3, 2}, {3, 4, 0, 0, 6, 8}));
  // Multi-dim ids and a sharded large case against a loop.
  const Tensor big = Random<float>({50, 20, 30}, -1, 1);
  Tensor ids(DT_INT64, TensorShape({50, 20}));
  for (int64_t i = 0; i < 1000; ++i) ids.data<int64_t>()[i] = (i * 37) % 101;
  Tensor want(DT_FLOAT, TensorShape({101, 30}));
  std::fill_n(want.data<float>(), want.NumElements(), 0.0f);
  for (int64_t i = 0; i < 1000; ++i) {
    for (int j = 0; j < 30; ++j) {
      want.data<float>()[ids.data<int64_t>()[i] * 30 + j] += big.data<float>()[i * 30 + j];
    }
  }
  ExpectTensorNear(RunOk(Node("UnsortedSegmentSum", DT_FLOAT).Attr("Tindices", DT_INT64),
                         {big, ids, Scalar<int64_t>(101)}),
                   want, 1e-5);
  const absl::Status s =
      RunStatus(Node("UnsortedSegmentSum", DT_FLOAT).Attr("Tindices", DT_INT32),
                {data, MakeTensor<int32_t>({4}, {0, 1, 5, 0}), Scalar<int32_t>(3)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find("5"), std::string::npos) << s;
}

// Add on strings concatenates, broadcasting as the numeric Add does;
// shapes that do not broadcast are an error naming both.
TEST(StringAddTest, ConcatenatesWithBroadcasting) {
  auto strings = [](std::vector<int64_t> dims, std::vector<std::string> v) {
    Tensor t(DT_STRING, TensorShape(dims));
    for (size_t i = 0; i < v.size(); ++i) t.data<std::string>()[i] = v[i];
    return t;
  };
  KernelRunner add(NodeBuilder("add", "Add").Attr("T", DT_STRING).Build());
  absl::StatusOr<std::vector<Tensor>> out =
      add.Run({strings({2, 1}, {"a/", "b/"}), strings({2}, {"x", "yy"})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->at(0).shape(), TensorShape({2, 2}));
  const std::string* o = out->at(0).data<std::string>();
  EXPECT_EQ(o[0], "a/x");
  EXPECT_EQ(o[1], "a/yy");
  EXPECT_EQ(o[2], "b/x");
  EXPECT_EQ(o[3], "b/yy");
  absl::Status s = add.Run({strings({2}, {"a", "b"}), strings({3}, {"x", "y", "z"})}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find("Incompatible shapes: [2] vs. [3]"), std::string::npos) << s;
}

}  // namespace
}  // namespace weft
