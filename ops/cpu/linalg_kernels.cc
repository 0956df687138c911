// The LU-based linear algebra kernels and the triangular solve, float,
// double, complex64 and complex128 (an adjoint conjugates), batched over leading dims with one matrix per unit of work on the
// intra-op pool:
// - MatrixInverse, MatrixSolve: Eigen's PartialPivLU of the matrix (or its
//   adjoint); an exactly zero pivot is TensorFlow's "not invertible" error.
// - MatrixDeterminant, LogMatrixDeterminant: sign and log|det| from the LU
//   diagonal and the permutation's parity, det = sign * exp(log|det|), as
//   TensorFlow computes them (a 0x0 matrix has determinant 1; a zero pivot
//   gives sign 0 and log|det| -inf).
// - MatrixTriangularSolve: Eigen's triangular solve on the lower or upper
//   triangle (or its adjoint), the batch dims broadcast.
// Also the checks and shapes of linalg_kernels.h.
#include "ops/cpu/linalg_kernels.h"

#include <Eigen/LU>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/registration.h"

namespace weft {
namespace linalg {

absl::Status CheckMatrices(const Tensor& t, int index) {
  if (t.dims() >= 2) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("Input tensor ", index, " must have rank >= 2, got ", t.dims()));
}

absl::Status CheckSquare(const Tensor& t, int index, const char* name,
                         const char* message) {
  absl::Status s = CheckMatrices(t, index);
  if (!s.ok() || Rows(t) == Cols(t)) return s;
  return absl::InvalidArgumentError(absl::StrCat(
      message, " (", name, " has shape ", t.shape().DebugString(), ")"));
}

absl::StatusOr<TensorShape> BatchShapeWith(const Tensor& t,
                                           std::initializer_list<int64_t> tail) {
  std::vector<int64_t> dims(t.shape().dim_sizes().begin(),
                            t.shape().dim_sizes().end() - 2);
  dims.insert(dims.end(), tail);
  return TensorShape::Build(dims);
}

absl::Status CheckSameBatch(const Tensor& a, const Tensor& b) {
  bool same = a.dims() == b.dims();
  for (int i = 0; same && i < a.dims() - 2; ++i) same = a.dim_size(i) == b.dim_size(i);
  if (same) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "All input tensors must have the same outer dimensions (matrix has shape ",
      a.shape().DebugString(), ", rhs ", b.shape().DebugString(), ")"));
}

}  // namespace linalg

namespace {

using linalg::ConstMatrixMap;
using linalg::Matrix;
using linalg::MatrixOf;

template <typename T>
using LU = Eigen::PartialPivLU<Matrix<T>>;

// The LU of `a` (or of its adjoint); `message` unless every pivot is
// nonzero.
template <typename T>
absl::Status Factor(const ConstMatrixMap<T>& a, bool adjoint, const char* message,
                    LU<T>* lu) {
  if (adjoint) {
    lu->compute(a.adjoint());
  } else {
    lu->compute(a);
  }
  using Real = typename Eigen::NumTraits<T>::Real;
  const Real min_pivot = lu->matrixLU().diagonal().cwiseAbs().minCoeff();
  if (!(min_pivot > Real(0))) return absl::InvalidArgumentError(message);
  return absl::OkStatus();
}

// MatrixInverse and MatrixSolve: an LU of the matrix or of its adjoint.
class AdjointOpBase : public OpKernel {
 public:
  explicit AdjointOpBase(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("adjoint", &adjoint_));
    set_expensive(true);
  }

 protected:
  bool adjoint_ = false;
};

template <typename T>
class MatrixInverseOp : public AdjointOpBase {
 public:
  using AdjointOpBase::AdjointOpBase;

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES_OK(c, linalg::CheckSquare(in, 0, "input", "Input matrix must be square."));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    if (out->NumElements() == 0) return;
    const int64_t n = linalg::Rows(in);
    OP_REQUIRES_OK(c, linalg::ForEachMatrix(
                          c, in.NumElements() / (n * n), linalg::CubicCost(n, n),
                          [&](int64_t i) {
                            LU<T> lu;
                            absl::Status s = Factor<T>(MatrixOf<T>(in, i, n, n), adjoint_,
                                                       "Input is not invertible.", &lu);
                            if (s.ok()) MatrixOf<T>(out, i, n, n) = lu.inverse();
                            return s;
                          }));
  }
};

// sign and log|det| of the n x n matrix `a`, as TensorFlow finds them.
template <typename T>
void SignLogDet(const ConstMatrixMap<T>& a, T* sign, T* log_abs_det) {
  *sign = T(1);
  *log_abs_det = T(0);
  if (a.rows() == 0) return;
  LU<T> lu(a);
  *sign = static_cast<T>(lu.permutationP().determinant());
  for (int64_t i = 0; i < a.rows(); ++i) {
    const T d = lu.matrixLU()(i, i);
    const T abs_d = T(std::abs(d));
    *log_abs_det += std::log(abs_d);
    *sign *= abs_d == T(0) ? T(0) : d / abs_d;
  }
}

// Both determinant ops: allocates `num_outputs` outputs of the batch shape
// and calls write(outputs, i, sign, log|det|) for each matrix i.
template <typename T, typename Out>
void Determinants(OpKernelContext* c, int num_outputs, Out&& write) {
  const Tensor& in = c->input(0);
  OP_REQUIRES_OK(c, linalg::CheckSquare(in, 0, "input", "Input matrix must be square."));
  absl::StatusOr<TensorShape> shape = linalg::BatchShapeWith(in, {});
  OP_REQUIRES_OK(c, shape.status());
  Tensor* outs[2] = {nullptr, nullptr};
  for (int o = 0; o < num_outputs; ++o) {
    OP_REQUIRES_OK(c, c->allocate_output(o, *shape, &outs[o]));
  }
  const int64_t n = linalg::Rows(in);
  ParallelRange(c, shape->num_elements(), linalg::CubicCost(n, n),
                [&](int64_t begin, int64_t end) {
                  for (int64_t i = begin; i < end; ++i) {
                    T sign, log_abs_det;
                    SignLogDet<T>(MatrixOf<T>(in, i, n, n), &sign, &log_abs_det);
                    write(outs, i, sign, log_abs_det);
                  }
                });
}

template <typename T>
class MatrixDeterminantOp : public OpKernel {
 public:
  explicit MatrixDeterminantOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(true);
  }
  void Compute(OpKernelContext* c) override {
    Determinants<T>(c, 1, [](Tensor** outs, int64_t i, T sign, T log_abs_det) {
      outs[0]->data<T>()[i] = sign * std::exp(log_abs_det);
    });
  }
};

template <typename T>
class LogMatrixDeterminantOp : public OpKernel {
 public:
  explicit LogMatrixDeterminantOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(true);
  }
  void Compute(OpKernelContext* c) override {
    Determinants<T>(c, 2, [](Tensor** outs, int64_t i, T sign, T log_abs_det) {
      outs[0]->data<T>()[i] = sign;
      outs[1]->data<T>()[i] = log_abs_det;
    });
  }
};

template <typename T>
class MatrixSolveOp : public AdjointOpBase {
 public:
  using AdjointOpBase::AdjointOpBase;

  void Compute(OpKernelContext* c) override {
    const Tensor& a = c->input(0);
    const Tensor& b = c->input(1);
    OP_REQUIRES_OK(c, linalg::CheckSquare(a, 0, "matrix",
                                          "First input (lhs) must be a square matrix."));
    OP_REQUIRES_OK(c, linalg::CheckMatrices(b, 1));
    OP_REQUIRES_OK(c, linalg::CheckSameBatch(a, b));
    const int64_t n = linalg::Rows(a), k = linalg::Cols(b);
    OP_REQUIRES(c, linalg::Rows(b) == n,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input matrix and rhs are incompatible (matrix has shape ",
                    a.shape().DebugString(), ", rhs ", b.shape().DebugString(), ")")));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, b.shape(), &out));
    if (out->NumElements() == 0) return;
    OP_REQUIRES_OK(c, linalg::ForEachMatrix(
                          c, b.NumElements() / (n * k), linalg::CubicCost(n, k),
                          [&](int64_t i) {
                            LU<T> lu;
                            absl::Status s = Factor<T>(MatrixOf<T>(a, i, n, n), adjoint_,
                                                       "Input matrix is not invertible.", &lu);
                            if (s.ok()) MatrixOf<T>(out, i, n, k) = lu.solve(MatrixOf<T>(b, i, n, k));
                            return s;
                          }));
  }
};

// For each matrix of the broadcast batch `dims` (batch dims only), the
// index of the matrix of a and of b it reads (dims of 1 broadcast).
void BatchIndices(const Tensor& a, const Tensor& b, const std::vector<int64_t>& dims,
                  std::vector<int64_t>* a_index, std::vector<int64_t>* b_index) {
  const int r = static_cast<int>(dims.size());
  const int ra = a.dims() - 2, rb = b.dims() - 2;
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  a_index->assign(count, 0);
  b_index->assign(count, 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, ia = 0, ib = 0, sa = 1, sb = 1;
    for (int i = r - 1; i >= 0; --i) {
      const int64_t idx = rest % dims[i];
      rest /= dims[i];
      const int64_t da = i >= r - ra ? a.dim_size(i - (r - ra)) : 1;
      const int64_t db = i >= r - rb ? b.dim_size(i - (r - rb)) : 1;
      if (da != 1) ia += idx * sa;
      if (db != 1) ib += idx * sb;
      sa *= da;
      sb *= db;
    }
    (*a_index)[flat] = ia;
    (*b_index)[flat] = ib;
  }
}

template <typename T>
class MatrixTriangularSolveOp : public OpKernel {
 public:
  explicit MatrixTriangularSolveOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("lower", &lower_);
    if (s.ok()) s = c->GetAttr("adjoint", &adjoint_);
    c->SetStatus(s);
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& a = c->input(0);
    const Tensor& b = c->input(1);
    OP_REQUIRES_OK(c, linalg::CheckMatrices(a, 0));
    OP_REQUIRES_OK(c, linalg::CheckMatrices(b, 1));
    const int64_t n = linalg::Rows(a), k = linalg::Cols(b);
    OP_REQUIRES(c, n == linalg::Cols(a),
                absl::InvalidArgumentError(absl::StrCat(
                    "In[0] matrices in the last dimensions must be square (",
                    linalg::Cols(a), " =/= ", n, "): matrix has shape ",
                    a.shape().DebugString())));
    OP_REQUIRES(c, n == linalg::Rows(b),
                absl::InvalidArgumentError(absl::StrCat(
                    "In[0] mismatch In[1] shape: ", n, " vs. ", linalg::Rows(b), ": ",
                    a.shape().DebugString(), " ", b.shape().DebugString())));
    // The broadcast batch dims; the output's size bounds the index tables.
    std::vector<int64_t> dims;
    const int ra = a.dims() - 2, rb = b.dims() - 2, r = std::max(ra, rb);
    for (int i = 0; i < r; ++i) {
      const int64_t x = i >= r - ra ? a.dim_size(i - (r - ra)) : 1;
      const int64_t y = i >= r - rb ? b.dim_size(i - (r - rb)) : 1;
      OP_REQUIRES(c, x == y || x == 1 || y == 1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "In[0] and In[1] must have compatible batch dimensions: ",
                      a.shape().DebugString(), " vs. ", b.shape().DebugString())));
      dims.push_back(x == 1 ? y : x);
    }
    std::vector<int64_t> out_dims = dims;
    out_dims.push_back(n);
    out_dims.push_back(k);
    absl::StatusOr<TensorShape> shape = TensorShape::Build(out_dims);
    OP_REQUIRES_OK(c, shape.status());
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    std::vector<int64_t> a_index, b_index;
    BatchIndices(a, b, dims, &a_index, &b_index);
    ParallelRange(c, static_cast<int64_t>(a_index.size()), n * n * k,
                  [&](int64_t begin, int64_t end) {
                    for (int64_t i = begin; i < end; ++i) {
                      Solve(MatrixOf<T>(a, a_index[i], n, n), MatrixOf<T>(b, b_index[i], n, k),
                            MatrixOf<T>(out, i, n, k));
                    }
                  });
  }

 private:
  void Solve(const ConstMatrixMap<T>& a, const ConstMatrixMap<T>& b,
             linalg::MatrixMap<T> x) const {
    x = b;
    if (lower_ && !adjoint_) {
      a.template triangularView<Eigen::Lower>().solveInPlace(x);
    } else if (lower_) {
      a.adjoint().template triangularView<Eigen::Upper>().solveInPlace(x);
    } else if (!adjoint_) {
      a.template triangularView<Eigen::Upper>().solveInPlace(x);
    } else {
      a.adjoint().template triangularView<Eigen::Lower>().solveInPlace(x);
    }
  }

  bool lower_ = true;
  bool adjoint_ = false;
};

}  // namespace

void RegisterLinalgKernels(KernelRegistry* r) {
  linalg::RegisterFloatAndComplex<MatrixInverseOp>(r, "MatrixInverse");
  linalg::RegisterFloatAndComplex<MatrixDeterminantOp>(r, "MatrixDeterminant");
  linalg::RegisterFloatAndComplex<LogMatrixDeterminantOp>(r, "LogMatrixDeterminant");
  linalg::RegisterFloatAndComplex<MatrixSolveOp>(r, "MatrixSolve");
  linalg::RegisterFloatAndComplex<MatrixTriangularSolveOp>(r, "MatrixTriangularSolve");
  RegisterLinalgDecompKernels(r);
}

}  // namespace weft
