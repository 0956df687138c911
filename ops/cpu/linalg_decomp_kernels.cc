// The factorisation kernels, float, double and complex (CholeskyGrad real
// only), one matrix per unit of work
// on the intra-op pool (Eigen's decompositions, column-major copies):
// - Cholesky: Eigen::LLT of the lower triangle. Where it fails (not
//   positive definite, NaN) the matrix's lower triangle is NaN, as
//   TensorFlow 2.21 fills it (it logs instead of failing the step); the
//   upper triangle is 0 either way.
// - CholeskyGrad: for A = L L^T and the lower triangle G of dL,
//   dA = sym(L^-T Phi(L^T G) L^-1), Phi keeping the lower triangle with the
//   diagonal halved and sym(X) = (X + X^T) / 2: the result of TensorFlow's
//   blocked algorithm, here with two triangular solves.
// - Qr: Eigen::HouseholderQR; Q is the first P columns of the product of
//   reflectors (P = min(M, N), or M with full_matrices), R the upper
//   triangle of its first P rows.
// - MatrixSolveLs: fast, the regularised normal equations by LLT (A^T A +
//   l2 I when M >= N, else A^T (A A^T + l2 I)^-1 B), with TensorFlow's error
//   when LLT fails; otherwise Eigen's complete orthogonal decomposition, the
//   minimum-norm solution (l2 unused, as in TensorFlow).
// The symmetric eigensolver and the SVD are in linalg_eig_kernels.cc.
#include <Eigen/Cholesky>
#include <Eigen/QR>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ops/cpu/linalg_kernels.h"

namespace weft {
namespace {

using linalg::ConstMatrixMap;
using linalg::MatrixOf;

template <typename T>
using ColMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

template <typename T>
class CholeskyOp : public OpKernel {
 public:
  explicit CholeskyOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(true); }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES_OK(c, linalg::CheckSquare(in, 0, "input", "Input matrix must be square."));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    if (out->NumElements() == 0) return;
    const int64_t n = linalg::Rows(in);
    ParallelRange(c, in.NumElements() / (n * n), linalg::CubicCost(n, n) / 3,
                  [&](int64_t begin, int64_t end) {
                    for (int64_t i = begin; i < end; ++i) {
                      Eigen::LLT<ColMatrix<T>, Eigen::Lower> llt(MatrixOf<T>(in, i, n, n));
                      auto o = MatrixOf<T>(out, i, n, n);
                      if (llt.info() == Eigen::Success) {
                        o = llt.matrixL();
                      } else {
                        o.setZero();
                        using Real = typename Eigen::NumTraits<T>::Real;
                        o.template triangularView<Eigen::Lower>().setConstant(
                            T(std::numeric_limits<Real>::quiet_NaN()));
                      }
                    }
                  });
  }
};

template <typename T>
class CholeskyGradOp : public OpKernel {
 public:
  explicit CholeskyGradOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(true); }

  void Compute(OpKernelContext* c) override {
    const Tensor& l = c->input(0);
    const Tensor& g = c->input(1);
    constexpr char kSquare[] = "Inputs must be a square matrices.";
    OP_REQUIRES_OK(c, linalg::CheckSquare(l, 0, "l", kSquare));
    OP_REQUIRES_OK(c, linalg::CheckSquare(g, 1, "grad", kSquare));
    OP_REQUIRES(c, l.shape() == g.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Inputs (L and grad) must have the same shape: ",
                    l.shape().DebugString(), " vs. ", g.shape().DebugString())));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, l.shape(), &out));
    if (out->NumElements() == 0) return;
    const int64_t n = linalg::Rows(l);
    ParallelRange(c, l.NumElements() / (n * n), linalg::CubicCost(n, n),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t i = begin; i < end; ++i) {
                      Grad(MatrixOf<T>(l, i, n, n), MatrixOf<T>(g, i, n, n),
                           MatrixOf<T>(out, i, n, n));
                    }
                  });
  }

 private:
  static void Grad(const ConstMatrixMap<T>& l_in, const ConstMatrixMap<T>& g_in,
                   linalg::MatrixMap<T> out) {
    const ColMatrix<T> l = l_in.template triangularView<Eigen::Lower>();
    const ColMatrix<T> g = g_in.template triangularView<Eigen::Lower>();
    ColMatrix<T> phi = (l.transpose() * g).template triangularView<Eigen::Lower>();
    phi.diagonal() *= T(0.5);
    const auto lt = l.transpose().template triangularView<Eigen::Upper>();
    lt.solveInPlace(phi);                 // L^-T Phi
    ColMatrix<T> st = phi.transpose();    // (L^-T Phi L^-1)^T = L^-T (L^-T Phi)^T
    lt.solveInPlace(st);
    out = (st + st.transpose()) * T(0.5);
  }
};

template <typename T>
class QrOp : public OpKernel {
 public:
  explicit QrOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("full_matrices", &full_));
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES_OK(c, linalg::CheckMatrices(in, 0));
    const int64_t m = linalg::Rows(in), n = linalg::Cols(in);
    const int64_t p = full_ ? m : std::min(m, n);
    absl::StatusOr<TensorShape> q_shape = linalg::BatchShapeWith(in, {m, p});
    OP_REQUIRES_OK(c, q_shape.status());
    absl::StatusOr<TensorShape> r_shape = linalg::BatchShapeWith(in, {p, n});
    OP_REQUIRES_OK(c, r_shape.status());
    Tensor *q, *r;
    OP_REQUIRES_OK(c, c->allocate_output(0, *q_shape, &q));
    OP_REQUIRES_OK(c, c->allocate_output(1, *r_shape, &r));
    // m * p > 0 whenever p * n > 0; the other case has Q = I and no R.
    if (q->NumElements() == 0) return;
    const int64_t count = q->NumElements() / (m * p);
    ParallelRange(c, count, linalg::CubicCost(m, n), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        auto q_out = MatrixOf<T>(q, i, m, p);
        if (n == 0) {
          q_out.setIdentity();
          continue;
        }
        Eigen::HouseholderQR<ColMatrix<T>> qr(MatrixOf<T>(in, i, m, n));
        q_out = qr.householderQ() * ColMatrix<T>::Identity(m, p);
        MatrixOf<T>(r, i, p, n) =
            qr.matrixQR().topRows(p).template triangularView<Eigen::Upper>();
      }
    });
  }

 private:
  bool full_ = false;
};

template <typename T>
class MatrixSolveLsOp : public OpKernel {
 public:
  explicit MatrixSolveLsOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("fast", &fast_));
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& a = c->input(0);
    const Tensor& b = c->input(1);
    const Tensor& l2 = c->input(2);
    OP_REQUIRES_OK(c, linalg::CheckMatrices(a, 0));
    OP_REQUIRES_OK(c, linalg::CheckMatrices(b, 1));
    OP_REQUIRES(c, l2.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "l2_regularizer must be scalar, got shape ", l2.shape().DebugString())));
    OP_REQUIRES_OK(c, linalg::CheckSameBatch(a, b));
    const int64_t m = linalg::Rows(a), n = linalg::Cols(a), k = linalg::Cols(b);
    OP_REQUIRES(c, linalg::Rows(b) == m,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input matrix and rhs are incompatible (matrix has shape ",
                    a.shape().DebugString(), ", rhs ", b.shape().DebugString(), ")")));
    absl::StatusOr<TensorShape> shape = linalg::BatchShapeWith(a, {n, k});
    OP_REQUIRES_OK(c, shape.status());
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, *shape, &out));
    if (out->NumElements() == 0) return;
    const T lambda = static_cast<T>(l2.data<double>()[0]);
    OP_REQUIRES_OK(c, linalg::ForEachMatrix(
                          c, out->NumElements() / (n * k), linalg::CubicCost(m, n),
                          [&](int64_t i) {
                            return Solve(MatrixOf<T>(a, i, m, n), MatrixOf<T>(b, i, m, k),
                                         lambda, MatrixOf<T>(out, i, n, k));
                          }));
  }

 private:
  absl::Status Solve(const ConstMatrixMap<T>& a, const ConstMatrixMap<T>& b, T lambda,
                     linalg::MatrixMap<T> x) const {
    if (a.rows() == 0) {  // no equations: the minimum-norm solution
      x.setZero();
      return absl::OkStatus();
    }
    if (!fast_) {
      x = ColMatrix<T>(a).completeOrthogonalDecomposition().solve(ColMatrix<T>(b));
      return absl::OkStatus();
    }
    const bool tall = a.rows() >= a.cols();
    ColMatrix<T> gram = tall ? ColMatrix<T>(a.adjoint() * a) : ColMatrix<T>(a * a.adjoint());
    gram.diagonal().array() += lambda;
    Eigen::LLT<ColMatrix<T>> llt(gram);
    if (llt.info() != Eigen::Success) {
      return absl::InvalidArgumentError(
          "Input matrix was rank deficient or ill-conditioned. Try setting "
          "fast=False or provide a larger l2_regularizer > 0.");
    }
    if (tall) {
      x = llt.solve(a.adjoint() * b);
    } else {
      x = a.adjoint() * llt.solve(b);
    }
    return absl::OkStatus();
  }

  bool fast_ = true;
};

}  // namespace

void RegisterLinalgDecompKernels(KernelRegistry* r) {
  linalg::RegisterFloatAndComplex<CholeskyOp>(r, "Cholesky");
  linalg::RegisterFloatDouble<CholeskyGradOp>(r, "CholeskyGrad");
  linalg::RegisterFloatAndComplex<QrOp>(r, "Qr");
  linalg::RegisterFloatAndComplex<MatrixSolveLsOp>(r, "MatrixSolveLs");
  RegisterLinalgEigKernels(r);
}

}  // namespace weft
