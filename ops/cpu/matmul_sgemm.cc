#include "ops/cpu/matmul_sgemm.h"

#include <algorithm>
#include <cstring>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "runtime/status.h"
#include "runtime/thread_pool.h"

namespace weft {

#if defined(__AVX512F__)

namespace {

constexpr int64_t kRows = 12;        // rows of a C tile (A sliver height)
constexpr int64_t kCols = 32;        // columns of a C tile (B sliver width)
constexpr int64_t kDepth = 256;      // depth block; A slivers are [256][12]
constexpr int64_t kColBlock = 16;    // B slivers per L2-sized column block
constexpr double kMinParallelFlops = 4e6;

// C[12, 32] = (or +=) Ap * Bp over `depth` steps. Ap is [depth][12] (the 12
// values of step p side by side), Bp is [depth][32], 64-byte aligned.
inline void Kernel(int64_t depth, const float* ap, const float* bp, float* c,
                   int64_t ldc, bool accumulate) {
  __m512 lo[kRows], hi[kRows];
#pragma GCC unroll 12
  for (int r = 0; r < kRows; ++r) {
    lo[r] = _mm512_setzero_ps();
    hi[r] = _mm512_setzero_ps();
    // The C tile is read and written after the loop: start fetching it now
    // so the loop hides the miss.
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_ET0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 16), _MM_HINT_ET0);
  }
  for (int64_t p = 0; p < depth; ++p) {
    const __m512 b0 = _mm512_load_ps(bp);
    const __m512 b1 = _mm512_load_ps(bp + 16);
    _mm_prefetch(reinterpret_cast<const char*>(bp + 8 * kCols), _MM_HINT_T0);
#pragma GCC unroll 12
    for (int r = 0; r < kRows; ++r) {
      const __m512 a = _mm512_set1_ps(ap[r]);
      lo[r] = _mm512_fmadd_ps(a, b0, lo[r]);
      hi[r] = _mm512_fmadd_ps(a, b1, hi[r]);
    }
    ap += kRows;
    bp += kCols;
  }
#pragma GCC unroll 12
  for (int r = 0; r < kRows; ++r) {
    float* row = c + r * ldc;
    if (accumulate) {
      lo[r] = _mm512_add_ps(lo[r], _mm512_loadu_ps(row));
      hi[r] = _mm512_add_ps(hi[r], _mm512_loadu_ps(row + 16));
    }
    _mm512_storeu_ps(row, lo[r]);
    _mm512_storeu_ps(row + 16, hi[r]);
  }
}

// A tile at the bottom or right edge: only rows x cols of it are real.
void EdgeKernel(int64_t depth, const float* ap, const float* bp, float* c,
                int64_t ldc, bool accumulate, int64_t rows, int64_t cols) {
  alignas(64) float tile[kRows * kCols];
  Kernel(depth, ap, bp, tile, kCols, false);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) {
      const float v = tile[r * kCols + j];
      c[r * ldc + j] = accumulate ? c[r * ldc + j] + v : v;
    }
  }
}

// Rows [i0, i0 + 12) x depth [p0, p0 + depth) of op(A) into out[depth][12];
// rows past m are zero.
void PackA(const float* a, bool ta, int64_t m, int64_t k, int64_t i0,
           int64_t p0, int64_t depth, float* out) {
  const int64_t rows = std::min(kRows, m - i0);
  if (!ta) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = a + (i0 + r) * k + p0;
      for (int64_t p = 0; p < depth; ++p) out[p * kRows + r] = src[p];
    }
  } else {  // a is stored [k, m]: each step's rows are contiguous
    for (int64_t p = 0; p < depth; ++p) {
      std::memcpy(out + p * kRows, a + (p0 + p) * m + i0, rows * sizeof(float));
    }
  }
  for (int64_t r = rows; r < kRows; ++r) {
    for (int64_t p = 0; p < depth; ++p) out[p * kRows + r] = 0;
  }
}

// Depth [p0, p0 + depth) x columns [j0, j0 + 32) of op(B) into
// out[depth][32]; columns past n are zero.
void PackB(const float* b, bool tb, int64_t k, int64_t n, int64_t p0,
           int64_t depth, int64_t j0, float* out) {
  const int64_t cols = std::min(kCols, n - j0);
  if (!tb && cols == kCols) {  // the common case: two vector copies a row
    for (int64_t p = 0; p < depth; ++p) {
      const float* src = b + (p0 + p) * n + j0;
      _mm512_store_ps(out + p * kCols, _mm512_loadu_ps(src));
      _mm512_store_ps(out + p * kCols + 16, _mm512_loadu_ps(src + 16));
    }
  } else if (!tb) {
    for (int64_t p = 0; p < depth; ++p) {
      const float* src = b + (p0 + p) * n + j0;
      float* dst = out + p * kCols;
      std::memcpy(dst, src, cols * sizeof(float));
      std::memset(dst + cols, 0, (kCols - cols) * sizeof(float));
    }
  } else {  // b is stored [n, k]
    for (int64_t j = 0; j < kCols; ++j) {
      if (j < cols) {
        const float* src = b + (j0 + j) * k + p0;
        for (int64_t p = 0; p < depth; ++p) out[p * kCols + j] = src[p];
      } else {
        for (int64_t p = 0; p < depth; ++p) out[p * kCols + j] = 0;
      }
    }
  }
}

struct Problem {
  bool ta, tb;
  int64_t m, n, k;
  const float* a;
  const float* b;
  float* c;
};

// One task: C rows of A slivers [s_lo, s_hi) x every column. Per depth
// block it packs its A slivers into `ap` (sized for one block, so they stay
// in cache) and runs the micro-kernel over every tile, reading B from the
// shared pre-packed copy `bp_all` ([block][sliver][kDepth][32]).
void RunTask(const Problem& q, int64_t s_lo, int64_t s_hi, int64_t col_slivers,
             const float* bp_all, float* ap) {
  const int64_t blocks = (q.k + kDepth - 1) / kDepth;
  for (int64_t d = 0; d < blocks; ++d) {
    const int64_t p0 = d * kDepth, depth = std::min(kDepth, q.k - p0);
    const bool accumulate = d > 0;
    const float* bp = bp_all + d * col_slivers * kCols * kDepth;
    for (int64_t s = s_lo; s < s_hi; ++s) {
      PackA(q.a, q.ta, q.m, q.k, s * kRows, p0, depth,
            ap + (s - s_lo) * kRows * kDepth);
    }
    // Column blocks of B stay in L2 while every A sliver passes over them.
    for (int64_t jb = 0; jb < col_slivers; jb += kColBlock) {
      const int64_t jb_hi = std::min(col_slivers, jb + kColBlock);
      for (int64_t s = s_lo; s < s_hi; ++s) {
        const int64_t i0 = s * kRows, rows = std::min(kRows, q.m - i0);
        const float* as = ap + (s - s_lo) * kRows * kDepth;
        for (int64_t js = jb; js < jb_hi; ++js) {
          const int64_t j0 = js * kCols, cols = std::min(kCols, q.n - j0);
          const float* bs = bp + js * kCols * kDepth;
          float* c = q.c + i0 * q.n + j0;
          if (rows == kRows && cols == kCols) {
            Kernel(depth, as, bs, c, q.n, accumulate);
          } else {
            EdgeKernel(depth, as, bs, c, q.n, accumulate, rows, cols);
          }
        }
      }
    }
  }
}

}  // namespace

bool SgemmAvailable() { return true; }

absl::Status Sgemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                   int64_t m, int64_t n, int64_t k, const float* a,
                   const float* b, float* out) {
  const Problem q{transpose_a, transpose_b, m, n, k, a, b, out};
  const int64_t row_slivers = (m + kRows - 1) / kRows;
  const int64_t col_slivers = (n + kCols - 1) / kCols;
  const int64_t blocks = (k + kDepth - 1) / kDepth;
  ThreadPool* pool = c->intra_op_pool();
  const int64_t threads =
      2.0 * m * n * k < kMinParallelFlops ? 1 : pool->NumThreads();
  // One task per pool thread, each owning a band of C rows. B is packed once,
  // up front and in parallel, and shared: packing it per task would copy all
  // of B once per thread.
  const int64_t tasks = std::max<int64_t>(1, std::min(threads, row_slivers));
  const int64_t rows_per_task = (row_slivers + tasks - 1) / tasks;
  const int64_t a_floats = rows_per_task * kRows * kDepth;
  const int64_t b_floats = blocks * col_slivers * kCols * kDepth;
  Tensor scratch;
  WEFT_RETURN_IF_ERROR(c->allocate_temp(
      DT_FLOAT, TensorShape({b_floats + tasks * a_floats}), &scratch));
  float* bp_all = scratch.data<float>();  // 64-byte aligned
  float* a_buffers = bp_all + b_floats;
  auto pack_b = [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      const int64_t d = i / col_slivers, js = i % col_slivers;
      const int64_t p0 = d * kDepth;
      PackB(b, transpose_b, k, n, p0, std::min(kDepth, k - p0), js * kCols,
            bp_all + i * kCols * kDepth);
    }
  };
  auto run = [&](int64_t t) {
    const int64_t s_lo = t * rows_per_task;
    RunTask(q, s_lo, std::min(row_slivers, s_lo + rows_per_task), col_slivers,
            bp_all, a_buffers + t * a_floats);
  };
  if (tasks == 1) {
    pack_b(0, blocks * col_slivers);
    run(0);
  } else {
    pool->ParallelFor(blocks * col_slivers, kCols * kDepth * 2, pack_b);
    // A cost this high gives every task its own thread.
    pool->ParallelFor(tasks, int64_t{1} << 30, [&](int64_t first, int64_t last) {
      for (int64_t t = first; t < last; ++t) run(t);
    });
  }
  return absl::OkStatus();
}

#else  // no AVX-512: MatMul uses Eigen's GEMM

bool SgemmAvailable() { return false; }

absl::Status Sgemm(OpKernelContext*, bool, bool, int64_t, int64_t, int64_t,
                   const float*, const float*, float*) {
  return absl::UnimplementedError("Sgemm needs AVX-512 (see SgemmAvailable)");
}

#endif

}  // namespace weft
