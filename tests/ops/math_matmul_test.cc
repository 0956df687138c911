// MatMul: every transpose combination and dtype against a naive triple
// loop, sizes that take the threaded path, empty operands, shape errors.
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::Random;
using testing_util::RunOk;
using testing_util::RunStatus;

NodeBuilder MatMul(DataType dt, bool ta = false, bool tb = false) {
  return NodeBuilder("mm", "MatMul")
      .Attr("T", dt)
      .Attr("transpose_a", ta)
      .Attr("transpose_b", tb);
}

// op(a) * op(b), accumulated in double (or int64 for integers), and per
// element the sum of the terms' magnitudes, sum over p of |a_ip * b_pj|.
template <typename T>
std::pair<Tensor, std::vector<double>> Reference(const Tensor& a, const Tensor& b,
                                                 bool ta, bool tb) {
  const int64_t m = a.dim_size(ta ? 1 : 0), k = a.dim_size(ta ? 0 : 1);
  const int64_t n = b.dim_size(tb ? 0 : 1);
  using Acc = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
  Tensor out(DataTypeToEnum<T>::value, TensorShape({m, n}));
  std::vector<double> magnitude(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      Acc sum = 0;
      double abs_sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const T av = ta ? a.data<T>()[p * m + i] : a.data<T>()[i * k + p];
        const T bv = tb ? b.data<T>()[j * k + p] : b.data<T>()[p * n + j];
        sum += static_cast<Acc>(av) * static_cast<Acc>(bv);
        abs_sum += std::fabs(static_cast<double>(av) * static_cast<double>(bv));
      }
      out.data<T>()[i * n + j] = static_cast<T>(sum);
      magnitude[i * n + j] = abs_sum;
    }
  }
  return {out, magnitude};
}

// Integers exactly; floating point within tol * sum |a_ip * b_pj| of the
// exact product: rounding errors grow with the terms, not with the result,
// which cancellation can make small (and each GEMM, with or without FMA,
// in any summation order, must stay within that bound).
template <typename T>
void Check(int64_t m, int64_t n, int64_t k, double tol, uint32_t seed) {
  const DataType dt = DataTypeToEnum<T>::value;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(::testing::Message() << m << "x" << k << " * " << k << "x"
                                        << n << " ta=" << ta << " tb=" << tb);
      const Tensor a = Random<T>(ta ? std::vector<int64_t>{k, m}
                                    : std::vector<int64_t>{m, k},
                                 -3, 3, seed);
      const Tensor b = Random<T>(tb ? std::vector<int64_t>{n, k}
                                    : std::vector<int64_t>{k, n},
                                 -3, 3, seed + 1);
      const Tensor got = RunOk(MatMul(dt, ta, tb), {a, b});
      const std::pair<Tensor, std::vector<double>> ref = Reference<T>(a, b, ta, tb);
      const Tensor& want = ref.first;
      const std::vector<double>& magnitude = ref.second;
      ASSERT_EQ(got.shape(), want.shape());
      int failures = 0;
      for (int64_t i = 0; i < got.NumElements() && failures < 5; ++i) {
        const double g = static_cast<double>(got.data<T>()[i]);
        const double w = static_cast<double>(want.data<T>()[i]);
        if (std::is_integral_v<T> ? g != w : !(std::fabs(g - w) <= tol * magnitude[i])) {
          ADD_FAILURE() << "element " << i << ": " << g << ", want " << w
                        << " (terms' magnitude " << magnitude[i] << ")";
          ++failures;
        }
      }
    }
  }
}

template <typename T>
class MatMulTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(MatMulTest, Types);

TYPED_TEST(MatMulTest, SmallShapes) {
  using T = TypeParam;
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  Check<T>(1, 1, 1, tol, 1);
  Check<T>(2, 3, 4, tol, 2);
  Check<T>(1, 17, 9, tol, 3);   // a row vector
  Check<T>(13, 1, 7, tol, 4);   // a column vector
  Check<T>(5, 4, 3, tol, 5);
  Check<T>(33, 65, 17, tol, 6);
}

// Above the single-thread threshold: the output is cut into panels.
TYPED_TEST(MatMulTest, LargeShapesUseThreads) {
  using T = TypeParam;
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  Check<T>(150, 140, 130, tol, 7);   // rows split
  Check<T>(40, 300, 200, tol, 8);    // columns split
}

// Shapes around the float kernel's tiles (12 x 32 output tiles on AVX-512,
// 6 x 16 on AVX2; depth blocks of 256): partial tiles, several depth
// blocks, one row or column.
TYPED_TEST(MatMulTest, TileEdgesAndDepthBlocks) {
  using T = TypeParam;
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  Check<T>(13, 33, 257, tol, 9);
  Check<T>(11, 31, 255, tol, 10);
  Check<T>(24, 64, 512, tol, 11);
  Check<T>(50, 70, 600, tol, 12);
  Check<T>(1, 100, 300, tol, 13);
  Check<T>(100, 1, 300, tol, 14);
  Check<T>(121, 95, 777, tol, 15);  // threaded, 4 depth blocks
}

// The float kernel's schedule (matmul_sgemm.cc): B is packed one panel
// (256 deep, up to 4096 wide) at a time into two buffers that the threads
// share, A one row block (up to 96 rows) at a time; a short A is cut by
// columns instead. Shapes that take each path, with ragged edges.
TEST(MatMulTest, FloatSeveralColumnPanels) {
  Check<float>(14, 4200, 300, 1e-5, 16);  // 2 column panels x 2 depth blocks
}

TEST(MatMulTest, FloatShortAIsCutByColumns) {
  Check<float>(5, 700, 600, 1e-5, 17);   // m < 12: one row block
  Check<float>(30, 900, 260, 1e-5, 18);  // 3 (or 5) row slivers, 2 blocks
}

TEST(MatMulTest, FloatShallowAndDeep) {
  Check<float>(300, 290, 100, 1e-5, 19);  // k < 256, threaded
  Check<float>(40, 70, 1287, 1e-5, 20);   // 6 depth blocks: buffers reused
}

// Up to 32 rows of A on one thread, B's columns whole slivers: B is read in
// place (RunShort), A packed in bands of equal height.
TEST(MatMulTest, FloatShortAReadsBInPlace) {
  Check<float>(16, 512, 128, 1e-5, 22);  // an RNN step: two bands of 8
  Check<float>(32, 96, 300, 1e-5, 23);   // 3 bands (6 on AVX2), 2 depth blocks
  Check<float>(7, 64, 5, 1e-5, 24);      // one band, shallow
  Check<float>(25, 32, 40, 1e-5, 25);    // bands of 9, 9, 7 (five of 5 on AVX2)
}

TEST(MatMulTest, FloatRaggedBlocks) {
  // Row blocks, column blocks and depth blocks all partial.
  Check<float>(197, 561, 515, 1e-5, 21);
}

TEST(MatMulTest, KnownValues) {
  // [[1,2],[3,4]] * [[5,6],[7,8]] = [[19,22],[43,50]].
  const Tensor a = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  const Tensor b = MakeTensor<float>({2, 2}, {5, 6, 7, 8});
  ExpectTensorEqual(RunOk(MatMul(DT_FLOAT), {a, b}),
                    MakeTensor<float>({2, 2}, {19, 22, 43, 50}));
  // a^T * b = [[26,30],[38,44]].
  ExpectTensorEqual(RunOk(MatMul(DT_FLOAT, true, false), {a, b}),
                    MakeTensor<float>({2, 2}, {26, 30, 38, 44}));
}

TEST(MatMulTest, EmptyOperands) {
  // k == 0 gives zeros (TensorFlow 2.21: [[0,0],[0,0]]).
  ExpectTensorEqual(RunOk(MatMul(DT_FLOAT), {Tensor(DT_FLOAT, TensorShape({2, 0})),
                                             Tensor(DT_FLOAT, TensorShape({0, 2}))}),
                    MakeTensor<float>({2, 2}, {0, 0, 0, 0}));
  EXPECT_EQ(RunOk(MatMul(DT_FLOAT), {Tensor(DT_FLOAT, TensorShape({0, 3})),
                                     Random<float>({3, 4}, 0, 1)})
                .shape(),
            TensorShape({0, 4}));
}

TEST(MatMulTest, ShapeErrors) {
  absl::Status s = RunStatus(MatMul(DT_FLOAT), {Random<float>({2, 3}, 0, 1),
                                                Random<float>({4, 5}, 0, 1)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  // TensorFlow 2.21's words.
  EXPECT_NE(s.message().find("Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]"),
            std::string::npos)
      << s;
  s = RunStatus(MatMul(DT_FLOAT), {Random<float>({2, 3, 1}, 0, 1),
                                   Random<float>({3, 5}, 0, 1)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("In[0] is not a matrix"), std::string::npos) << s;
  s = RunStatus(MatMul(DT_FLOAT), {Random<float>({2, 3}, 0, 1),
                                   Random<float>({3}, 0, 1)});
  EXPECT_NE(s.message().find("In[1] is not a matrix"), std::string::npos) << s;
}

}  // namespace
}  // namespace weft
