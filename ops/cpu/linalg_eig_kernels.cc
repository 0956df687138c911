// SelfAdjointEigV2 and Svd, float, double, complex64 and complex128 (whose
// eigen and singular values are real, returned with a zero imaginary part,
// as TensorFlow's), one matrix per unit of work
// on the intra-op pool:
// - SelfAdjointEigV2: Eigen::SelfAdjointEigenSolver on the lower triangle,
//   eigenvalues ascending, eigenvectors as columns; TensorFlow's error where
//   it does not converge (NaN input).
// - Svd: Eigen::BDCSVD (Jacobi for small matrices), singular values
//   descending, U and V thin or full; a matrix with a NaN or inf gives NaN
//   throughout. A 0-row or 0-column matrix has full U, V the identity.
// Without vectors, TensorFlow's v (and u) outputs are placeholder scalars;
// these are 0 here.
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ops/cpu/linalg_kernels.h"

namespace weft {
namespace {

using linalg::MatrixOf;

template <typename T>
using ColMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

// Allocates output `index` as a placeholder scalar 0.
absl::Status PlaceholderScalar(OpKernelContext* c, int index, Tensor** out) {
  absl::Status s = c->allocate_output(index, TensorShape(), out);
  if (s.ok()) std::memset((*out)->raw_data(), 0, (*out)->TotalBytes());
  return s;
}

template <typename T>
class SelfAdjointEigV2Op : public OpKernel {
 public:
  explicit SelfAdjointEigV2Op(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("compute_v", &compute_v_));
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES_OK(c, linalg::CheckSquare(in, 0, "input", "Input matrix must be square."));
    const int64_t n = linalg::Rows(in);
    absl::StatusOr<TensorShape> e_shape = linalg::BatchShapeWith(in, {n});
    OP_REQUIRES_OK(c, e_shape.status());
    Tensor *e, *v;
    OP_REQUIRES_OK(c, c->allocate_output(0, *e_shape, &e));
    if (compute_v_) {
      OP_REQUIRES_OK(c, c->allocate_output(1, in.shape(), &v));
    } else {
      OP_REQUIRES_OK(c, PlaceholderScalar(c, 1, &v));
    }
    if (e->NumElements() == 0) return;
    const auto options = compute_v_ ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly;
    OP_REQUIRES_OK(c, linalg::ForEachMatrix(
                          c, e->NumElements() / n, linalg::CubicCost(n, n) * 4,
                          [&](int64_t i) {
                            Eigen::SelfAdjointEigenSolver<ColMatrix<T>> eig(
                                MatrixOf<T>(in, i, n, n), options);
                            if (eig.info() != Eigen::Success) {
                              return absl::InvalidArgumentError(
                                  "Self-adjoint eigen decomposition was not successful. "
                                  "The input might not be valid.");
                            }
                            MatrixOf<T>(e, i, 1, n) =
                                eig.eigenvalues().transpose().template cast<T>();
                            if (compute_v_) MatrixOf<T>(v, i, n, n) = eig.eigenvectors();
                            return absl::OkStatus();
                          }));
  }

 private:
  bool compute_v_ = true;
};

template <typename T>
class SvdOp : public OpKernel {
 public:
  explicit SvdOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("compute_uv", &compute_uv_);
    if (s.ok()) s = c->GetAttr("full_matrices", &full_);
    c->SetStatus(s);
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES_OK(c, linalg::CheckMatrices(in, 0));
    const int64_t m = linalg::Rows(in), n = linalg::Cols(in), p = std::min(m, n);
    const int64_t u_cols = full_ ? m : p, v_cols = full_ ? n : p;
    absl::StatusOr<TensorShape> s_shape = linalg::BatchShapeWith(in, {p});
    OP_REQUIRES_OK(c, s_shape.status());
    Tensor *s, *u, *v;
    OP_REQUIRES_OK(c, c->allocate_output(0, *s_shape, &s));
    if (!compute_uv_) {
      OP_REQUIRES_OK(c, PlaceholderScalar(c, 1, &u));
      OP_REQUIRES_OK(c, PlaceholderScalar(c, 2, &v));
    } else {
      absl::StatusOr<TensorShape> u_shape = linalg::BatchShapeWith(in, {m, u_cols});
      OP_REQUIRES_OK(c, u_shape.status());
      absl::StatusOr<TensorShape> v_shape = linalg::BatchShapeWith(in, {n, v_cols});
      OP_REQUIRES_OK(c, v_shape.status());
      OP_REQUIRES_OK(c, c->allocate_output(1, *u_shape, &u));
      OP_REQUIRES_OK(c, c->allocate_output(2, *v_shape, &v));
      if (p == 0) {  // no singular values: full U and V are identities
        FillIdentity(c, u, m);
        FillIdentity(c, v, n);
      }
    }
    if (s->NumElements() == 0) return;
    const int opts = !compute_uv_ ? 0
                     : full_      ? Eigen::ComputeFullU | Eigen::ComputeFullV
                                  : Eigen::ComputeThinU | Eigen::ComputeThinV;
    ParallelRange(c, s->NumElements() / p, linalg::CubicCost(m, n) * 8,
                  [&](int64_t begin, int64_t end) {
                    for (int64_t i = begin; i < end; ++i) {
                      const auto a = MatrixOf<T>(in, i, m, n);
                      auto s_out = MatrixOf<T>(s, i, 1, p);
                      if (!a.allFinite()) {
                        using Real = typename Eigen::NumTraits<T>::Real;
                        const T kNaN(std::numeric_limits<Real>::quiet_NaN());
                        s_out.setConstant(kNaN);
                        if (compute_uv_) {
                          MatrixOf<T>(u, i, m, u_cols).setConstant(kNaN);
                          MatrixOf<T>(v, i, n, v_cols).setConstant(kNaN);
                        }
                        continue;
                      }
                      Eigen::BDCSVD<ColMatrix<T>> svd(a, opts);
                      s_out = svd.singularValues().transpose().template cast<T>();
                      if (compute_uv_) {
                        MatrixOf<T>(u, i, m, u_cols) = svd.matrixU();
                        MatrixOf<T>(v, i, n, v_cols) = svd.matrixV();
                      }
                    }
                  });
  }

 private:
  // Each d x d matrix of `t` (d > 0) is the identity.
  static void FillIdentity(OpKernelContext* c, Tensor* t, int64_t d) {
    if (t->NumElements() == 0) return;
    ParallelRange(c, t->NumElements() / (d * d), d * d, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) MatrixOf<T>(t, i, d, d).setIdentity();
    });
  }

  bool compute_uv_ = true;
  bool full_ = false;
};

}  // namespace

void RegisterLinalgEigKernels(KernelRegistry* r) {
  linalg::RegisterFloatAndComplex<SelfAdjointEigV2Op>(r, "SelfAdjointEigV2");
  linalg::RegisterFloatAndComplex<SvdOp>(r, "Svd");
}

}  // namespace weft
