// Eigen GEMM sharded over the intra-op pool; included only by
// matmul_gemm_float.cc and matmul_gemm_double.cc.
//
// Eigen 3.4 threads its GEMM only through OpenMP, so the output is cut into
// row (or column) panels here, one single-threaded Eigen GEMM per panel, one
// panel per pool thread. Small products run on the calling thread.
#ifndef WEFT_OPS_CPU_MATMUL_EIGEN_GEMM_H_
#define WEFT_OPS_CPU_MATMUL_EIGEN_GEMM_H_

#include <algorithm>
#include <cstdint>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop

#include "ops/framework/op_kernel.h"
#include "runtime/core/thread_pool.h"

namespace weft {
namespace matmul_internal {

template <typename T>
using RowMajorMatrix =
    Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ColMajorMatrix =
    Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

// Below this many multiply-adds a product runs on one thread.
inline constexpr int64_t kMinParallelMacs = int64_t{1} << 21;
// Panels narrower than this waste the micro-kernel's register tiles.
inline constexpr int64_t kMinPanel = 48;

// c = a * b, with `a` [m, k] and `b` [k, n] already oriented.
template <typename A, typename B, typename T>
void ShardedGemm(OpKernelContext* ctx, const A& a, const B& b, T* out) {
  const int64_t m = a.rows(), k = a.cols(), n = b.cols();
  Eigen::Map<RowMajorMatrix<T>> c(out, m, n);
  // Eigen's parallelFor runs one block on the caller when there are no more
  // blocks than pool threads, so this many panels keep every thread busy.
  ThreadPool* pool = ctx->intra_op_pool();
  const bool by_cols = n > m;
  const int64_t extent = by_cols ? n : m;
  const int64_t panels = std::min<int64_t>(
      pool->NumThreads(), std::max<int64_t>(1, extent / kMinPanel));
  if (m * n * k < kMinParallelMacs || panels <= 1) {
    c.noalias() = a * b;
    return;
  }
  // Panel edges on multiples of 16 keep the micro-kernel's tiles whole.
  auto edge = [&](int64_t q) {
    return q == panels ? extent : extent * q / panels / 16 * 16;
  };
  // One unit per panel; the cost is high enough that each gets a thread.
  pool->ParallelFor(panels, int64_t{1} << 30, [&](int64_t first, int64_t last) {
    for (int64_t p = first; p < last; ++p) {
      const int64_t begin = edge(p), len = edge(p + 1) - begin;
      if (by_cols) {
        c.middleCols(begin, len).noalias() = a * b.middleCols(begin, len);
      } else {
        c.middleRows(begin, len).noalias() = a.middleRows(begin, len) * b;
      }
    }
  });
}

template <typename T>
void EigenGemm(OpKernelContext* ctx, bool transpose_a, bool transpose_b,
               int64_t m, int64_t n, int64_t k, const T* a, const T* b,
               T* out) {
  // A row-major [r, c] buffer read column-major is its transpose.
  using RowMap = Eigen::Map<const RowMajorMatrix<T>>;
  using ColMap = Eigen::Map<const ColMajorMatrix<T>>;
  if (!transpose_a && !transpose_b) {
    ShardedGemm(ctx, RowMap(a, m, k), RowMap(b, k, n), out);
  } else if (!transpose_a) {
    ShardedGemm(ctx, RowMap(a, m, k), ColMap(b, k, n), out);
  } else if (!transpose_b) {
    ShardedGemm(ctx, ColMap(a, m, k), RowMap(b, k, n), out);
  } else {
    ShardedGemm(ctx, ColMap(a, m, k), ColMap(b, k, n), out);
  }
}

}  // namespace matmul_internal
}  // namespace weft

#endif  // WEFT_OPS_CPU_MATMUL_EIGEN_GEMM_H_
