// The linear algebra kernels (ops/cpu/linalg_*.cc): small values worked by
// hand, empty batches and 0x0 matrices, and the errors TensorFlow gives for
// inputs a graph can get wrong (rank < 2, non-square, mismatched rows and
// batches, singular matrices), plus sizes whose outputs cannot exist
// (TensorFlow's values on larger inputs: tests/conformance/linalg_ops_test.py).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "tests/ops/array_test_util.h"

namespace weft {
namespace {

using testing_util::RunOk;
using testing_util::RunStatus;
using testing_util::Scalar;
constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

NodeBuilder Op(const char* op, DataType t = DT_FLOAT) {
  return std::move(NodeBuilder("n", op).Attr("T", t));
}

// A tensor of zero elements with the given (possibly huge) dims.
Tensor Empty(const std::vector<int64_t>& dims) {
  return MakeTensor<float>(dims, {});
}

TEST(LinalgTest, InverseAndSolve) {
  Tensor a = MakeTensor<double>({2, 2}, {4, 7, 2, 6});
  auto out = RunOk(Op("MatrixInverse", DT_DOUBLE), {a});
  ExpectTensorNear(out[0], MakeTensor<double>({2, 2}, {0.6, -0.7, -0.2, 0.4}), 1e-12);
  out = RunOk(Op("MatrixInverse", DT_DOUBLE).Attr("adjoint", true), {a});
  ExpectTensorNear(out[0], MakeTensor<double>({2, 2}, {0.6, -0.2, -0.7, 0.4}), 1e-12);
  Tensor b = MakeTensor<double>({2, 1}, {1, 2});
  out = RunOk(Op("MatrixSolve", DT_DOUBLE), {a, b});
  ExpectTensorNear(out[0], MakeTensor<double>({2, 1}, {-0.8, 0.6}), 1e-12);
  out = RunOk(Op("MatrixSolve", DT_DOUBLE).Attr("adjoint", true), {a, b});
  ExpectTensorNear(out[0], MakeTensor<double>({2, 1}, {0.2, 0.1}), 1e-12);
}

TEST(LinalgTest, Determinants) {
  Tensor a = MakeTensor<float>({2, 2, 2}, {4, 7, 2, 6, 0, 1, 1, 0});
  auto out = RunOk(Op("MatrixDeterminant"), {a});
  ExpectTensorNear(out[0], MakeTensor<float>({2}, {10, -1}), 1e-5);
  out = RunOk(Op("LogMatrixDeterminant"), {a});
  ExpectTensorNear(out[0], MakeTensor<float>({2}, {1, -1}), 0);
  ExpectTensorNear(out[1], MakeTensor<float>({2}, {std::log(10.0f), 0}), 1e-6);
  // Singular: sign 0, log|det| -inf; 0x0: determinant 1.
  out = RunOk(Op("LogMatrixDeterminant"), {MakeTensor<float>({2, 2}, {0, 0, 0, 0})});
  EXPECT_EQ(out[0].data<float>()[0], 0.0f);
  EXPECT_EQ(out[1].data<float>()[0], -INFINITY);
  out = RunOk(Op("MatrixDeterminant"), {Empty({3, 0, 0})});
  ExpectTensorNear(out[0], MakeTensor<float>({3}, {1, 1, 1}), 0);
}

TEST(LinalgTest, CholeskyAndTriangularSolve) {
  Tensor a = MakeTensor<double>({2, 2}, {4, 99, 2, 5});  // the upper 99 is unread
  auto out = RunOk(Op("Cholesky", DT_DOUBLE), {a});
  ExpectTensorNear(out[0], MakeTensor<double>({2, 2}, {2, 0, 1, 2}), 1e-12);
  // Not positive definite: NaN in the lower triangle, as TensorFlow 2.21.
  out = RunOk(Op("Cholesky", DT_DOUBLE), {MakeTensor<double>({2, 2}, {-1, 0, 0, -1})});
  EXPECT_TRUE(std::isnan(out[0].data<double>()[0]));
  EXPECT_TRUE(std::isnan(out[0].data<double>()[2]));
  EXPECT_EQ(out[0].data<double>()[1], 0.0);
  Tensor l = MakeTensor<double>({2, 2}, {2, 50, 1, 2});
  // rhs batch [3] broadcast against a single matrix.
  Tensor b = MakeTensor<double>({3, 2, 1}, {2, 5, 4, 4, 0, 2});
  out = RunOk(Op("MatrixTriangularSolve", DT_DOUBLE), {l, b});
  ExpectTensorNear(out[0], MakeTensor<double>({3, 2, 1}, {1, 2, 2, 1, 0, 1}), 1e-12);
  out = RunOk(Op("MatrixTriangularSolve", DT_DOUBLE).Attr("lower", false),
              {MakeTensor<double>({2, 2}, {2, 1, 7, 2}), MakeTensor<double>({2, 1}, {4, 2})});
  ExpectTensorNear(out[0], MakeTensor<double>({2, 1}, {1.5, 1}), 1e-12);
}

TEST(LinalgTest, EmptyBatchesAndMatrices) {
  for (const char* op : {"MatrixInverse", "Cholesky", "MatrixDeterminant"}) {
    SCOPED_TRACE(op);
    RunOk(Op(op), {Empty({0, 3, 3})});
    RunOk(Op(op), {Empty({2, 0, 0})});
  }
  auto out = RunOk(Op("Qr").Attr("full_matrices", true), {Empty({2, 3, 0})});
  ExpectTensorNear(out[0], MakeTensor<float>({2, 3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1,
                                                         1, 0, 0, 0, 1, 0, 0, 0, 1}), 0);
  out = RunOk(Op("Svd").Attr("full_matrices", true), {Empty({1, 0, 2})});
  EXPECT_EQ(out[0].shape().DebugString(), "[1,0]");
  ExpectTensorNear(out[2], MakeTensor<float>({1, 2, 2}, {1, 0, 0, 1}), 0);
  out = RunOk(Op("SelfAdjointEigV2").Attr("compute_v", false), {Empty({4, 0, 0})});
  EXPECT_EQ(out[0].shape().DebugString(), "[4,0]");
  EXPECT_EQ(out[1].shape().DebugString(), "[]");
  out = RunOk(Op("MatrixSolveLs"), {Empty({0, 2}), Empty({0, 1}), Scalar(0.0)});
  ExpectTensorNear(out[0], MakeTensor<float>({2, 1}, {0, 0}), 0);
}

TEST(LinalgTest, RankAndSquareErrors) {
  Tensor vec = MakeTensor<float>({3}, {1, 2, 3});
  Tensor rect = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  for (const char* op : {"MatrixInverse", "MatrixDeterminant", "LogMatrixDeterminant",
                         "Cholesky", "SelfAdjointEigV2", "Qr", "Svd"}) {
    SCOPED_TRACE(op);
    EXPECT_STATUS(RunStatus(Op(op), {vec}), kInvalid, "Input tensor 0 must have rank >= 2, got 1");
    if (std::string(op) != "Qr" && std::string(op) != "Svd") {
      EXPECT_STATUS(RunStatus(Op(op), {rect}), kInvalid,
                    "Input matrix must be square. (input has shape [2,3])");
    }
  }
  EXPECT_STATUS(RunStatus(Op("MatrixSolve"), {rect, rect}), kInvalid,
                "First input (lhs) must be a square matrix. (matrix has shape [2,3])");
  EXPECT_STATUS(RunStatus(Op("CholeskyGrad"), {rect, rect}), kInvalid,
                "Inputs must be a square matrices. (l has shape [2,3])");
  EXPECT_STATUS(RunStatus(Op("MatrixTriangularSolve"), {rect, rect}), kInvalid,
                "In[0] matrices in the last dimensions must be square (3 =/= 2)");
}

TEST(LinalgTest, IncompatibleInputs) {
  Tensor a = MakeTensor<float>({2, 2}, {1, 0, 0, 1});
  Tensor b3 = MakeTensor<float>({3, 1}, {1, 2, 3});
  EXPECT_STATUS(RunStatus(Op("MatrixSolve"), {a, b3}), kInvalid,
                "Input matrix and rhs are incompatible");
  EXPECT_STATUS(RunStatus(Op("MatrixSolveLs"), {a, b3, Scalar(0.0)}), kInvalid,
                "Input matrix and rhs are incompatible");
  EXPECT_STATUS(RunStatus(Op("MatrixTriangularSolve"), {a, b3}), kInvalid,
                "In[0] mismatch In[1] shape: 2 vs. 3");
  Tensor batch2 = MakeTensor<float>({2, 2, 2}, {1, 0, 0, 1, 1, 0, 0, 1});
  Tensor rhs3 = MakeTensor<float>({3, 2, 1}, {1, 2, 3, 4, 5, 6});
  EXPECT_STATUS(RunStatus(Op("MatrixSolve"), {batch2, rhs3}), kInvalid,
                "All input tensors must have the same outer dimensions");
  EXPECT_STATUS(RunStatus(Op("MatrixTriangularSolve"), {batch2, rhs3}), kInvalid,
                "In[0] and In[1] must have compatible batch dimensions: [2,2,2] vs. [3,2,1]");
  EXPECT_STATUS(RunStatus(Op("MatrixSolveLs"), {a, a, MakeTensor<double>({1}, {0})}), kInvalid,
                "l2_regularizer must be scalar");
  EXPECT_STATUS(RunStatus(Op("CholeskyGrad"), {a, batch2}), kInvalid,
                "Inputs (L and grad) must have the same shape");
}

TEST(LinalgTest, SingularMatrices) {
  Tensor s = MakeTensor<float>({2, 2, 2}, {1, 0, 0, 1, 1, 2, 2, 4});
  EXPECT_STATUS(RunStatus(Op("MatrixInverse"), {s}), kInvalid, "Input is not invertible.");
  EXPECT_STATUS(RunStatus(Op("MatrixSolve"), {s, s}), kInvalid,
                "Input matrix is not invertible.");
  EXPECT_STATUS(RunStatus(Op("MatrixSolveLs"), {MakeTensor<float>({3, 2}, {0, 0, 0, 0, 0, 0}),
                                                MakeTensor<float>({3, 1}, {1, 2, 3}), Scalar(0.0)}),
                kInvalid, "Input matrix was rank deficient or ill-conditioned.");
  EXPECT_STATUS(RunStatus(Op("SelfAdjointEigV2"), {MakeTensor<float>({2, 2}, {NAN, 0, 0, 1})}),
                kInvalid, "Self-adjoint eigen decomposition was not successful.");
}

TEST(LinalgTest, HugeDimsFailWithoutAllocating) {
  const int64_t big = int64_t{1} << 31;
  // Zero elements in, 2^62 out: refused, not attempted.
  EXPECT_FALSE(RunStatus(Op("Qr").Attr("full_matrices", true), {Empty({big, 0})}).ok());
  EXPECT_FALSE(RunStatus(Op("Svd").Attr("full_matrices", true), {Empty({0, big})}).ok());
  EXPECT_FALSE(RunStatus(Op("MatrixDeterminant"), {Empty({int64_t{1} << 62, 0, 0})}).ok());
  EXPECT_FALSE(
      RunStatus(Op("MatrixSolveLs"), {Empty({0, big}), Empty({0, big}), Scalar(0.0)}).ok());
  // Empty outputs of huge batches finish at once.
  RunOk(Op("MatrixInverse"), {Empty({big, big, 0, 0})});
  RunOk(Op("MatrixTriangularSolve"), {Empty({big, 1, 0, 0}), Empty({1, big, 0, 5})});
}

}  // namespace
}  // namespace weft
