// What the linear algebra kernels share (ops/linalg_ops.cc): Eigen views of
// one matrix of a batch [..., M, N], the input checks in TensorFlow's words,
// output shapes built without overflow, and a loop over the matrices of a
// batch on the intra-op pool that keeps the first error. The kernels are in
// linalg_kernels.cc (LU and triangular solves), linalg_decomp_kernels.cc
// (Cholesky, QR, least squares) and linalg_eig_kernels.cc (eigen and
// singular values), each registered for float, double, complex64 and
// complex128 (CholeskyGrad: float and double, as TensorFlow). For complex
// matrices an adjoint is the conjugate transpose.
#ifndef WEFT_OPS_CPU_LINALG_KERNELS_H_
#define WEFT_OPS_CPU_LINALG_KERNELS_H_

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/tensor.h"

namespace weft {

// Cholesky, CholeskyGrad, Qr, MatrixSolveLs (linalg_decomp_kernels.cc);
// RegisterLinalgKernels calls it.
void RegisterLinalgDecompKernels(KernelRegistry* r);
// SelfAdjointEigV2, Svd (linalg_eig_kernels.cc); RegisterLinalgDecompKernels
// calls it.
void RegisterLinalgEigKernels(KernelRegistry* r);

namespace linalg {

template <typename T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using MatrixMap = Eigen::Map<Matrix<T>>;
template <typename T>
using ConstMatrixMap = Eigen::Map<const Matrix<T>>;

inline int64_t Rows(const Tensor& t) { return t.dim_size(t.dims() - 2); }
inline int64_t Cols(const Tensor& t) { return t.dim_size(t.dims() - 1); }

// Matrix i of the batch `t` (rows x cols each).
template <typename T>
ConstMatrixMap<T> MatrixOf(const Tensor& t, int64_t i, int64_t rows, int64_t cols) {
  return ConstMatrixMap<T>(t.data<T>() + i * rows * cols, rows, cols);
}
template <typename T>
MatrixMap<T> MatrixOf(Tensor* t, int64_t i, int64_t rows, int64_t cols) {
  return MatrixMap<T>(t->data<T>() + i * rows * cols, rows, cols);
}

// "Input tensor <index> must have rank >= 2, got <rank>" (TensorFlow's).
absl::Status CheckMatrices(const Tensor& t, int index);
// CheckMatrices, then `message` (TensorFlow's words for the op) unless the
// matrices are square; the error names input `name` and its shape.
absl::Status CheckSquare(const Tensor& t, int index, const char* name,
                         const char* message);
// t's batch dims followed by `tail`; INVALID_ARGUMENT if the element count
// overflows.
absl::StatusOr<TensorShape> BatchShapeWith(const Tensor& t,
                                           std::initializer_list<int64_t> tail);
// INVALID_ARGUMENT unless a and b have the same batch dims (TensorFlow's
// "All input tensors must have the same outer dimensions.").
absl::Status CheckSameBatch(const Tensor& a, const Tensor& b);

// About the cycles one n x n decomposition takes, clamped for the pool.
inline int64_t CubicCost(int64_t m, int64_t n) {
  const int64_t s = std::min<int64_t>(std::max(m, n), 1 << 20);
  return std::min<int64_t>(s * s * std::min<int64_t>(s, 1 << 10), int64_t{1} << 40);
}

// Calls fn(i) for each matrix i in [0, count) over the intra-op pool; a
// matrix whose fn fails stops its shard, and the first error is returned.
template <typename Fn>
absl::Status ForEachMatrix(OpKernelContext* c, int64_t count, int64_t cost, Fn&& fn) {
  absl::Mutex mu;
  absl::Status first;
  ParallelRange(c, count, cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      absl::Status s = fn(i);
      if (!s.ok()) {
        absl::MutexLock lock(&mu);
        if (first.ok()) first = s;
        return;
      }
    }
  });
  return first;
}

// Registers kernel K<float> and K<double> for `op`.
template <template <typename> class K>
void RegisterFloatDouble(KernelRegistry* r, const char* op) {
  r->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT),
              MakeKernel<K<float>>);
  r->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_DOUBLE),
              MakeKernel<K<double>>);
}

// K<float>, K<double>, K<Complex64> and K<Complex128> for `op`.
template <template <typename> class K>
void RegisterFloatAndComplex(KernelRegistry* r, const char* op) {
  RegisterFloatDouble<K>(r, op);
  r->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_COMPLEX64),
              MakeKernel<K<Complex64>>);
  r->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_COMPLEX128),
              MakeKernel<K<Complex128>>);
}

}  // namespace linalg
}  // namespace weft

#endif  // WEFT_OPS_CPU_LINALG_KERNELS_H_
