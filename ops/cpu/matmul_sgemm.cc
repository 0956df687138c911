#include "ops/cpu/matmul_sgemm.h"

#include <algorithm>
#include <atomic>
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
constexpr int64_t kDepth = 256;      // depth block (steps per packed sliver)
constexpr int64_t kColBlock = 16;    // B slivers per L2-sized column block
constexpr double kMinParallelFlops = 4e6;
// A packed B larger than this (about one core's L2) is written with
// streaming stores.
constexpr int64_t kStreamBytes = int64_t{4} << 20;
// Row bands handed to the workers: up to this many per worker, each of at
// least this many A slivers (smaller bands re-read B from L3 too often).
constexpr int64_t kBandsPerWorker = 4;
constexpr int64_t kMinBandSlivers = 8;
// A band's packed A (13 KiB a sliver) should stay in L2 beside a column
// block of B.
constexpr int64_t kMaxBandSlivers = 32;

// How a packed A sliver is laid out. Row-major A packs by copying rows
// ([12][kARowStride]: the kernel broadcasts from 12 row streams); transposed
// A packs by copying its stored rows ([depth][12]). Either way no transpose
// is needed, and both strides are compile-time constants, so the kernel's
// broadcasts are loads at a fixed displacement from one pointer.
constexpr int64_t kARowStride = kDepth + 16;  // the pad avoids 4 KiB aliasing
struct RowLayout {
  static constexpr int64_t kStep = 1, kRow = kARowStride;
};
struct StepLayout {
  static constexpr int64_t kStep = kRows, kRow = 1;
};
constexpr int64_t kASliverFloats = kRows * kARowStride;  // fits both layouts

// C[12, 32] = (or +=) Ap * Bp over `depth` steps. Bp is [depth][32] and
// 64-byte aligned; Ap is laid out as Layout says.
template <typename Layout>
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
      const __m512 a = _mm512_set1_ps(ap[r * Layout::kRow]);
      lo[r] = _mm512_fmadd_ps(a, b0, lo[r]);
      hi[r] = _mm512_fmadd_ps(a, b1, hi[r]);
    }
    ap += Layout::kStep;
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
template <typename Layout>
void EdgeKernel(int64_t depth, const float* ap, const float* bp, float* c,
                int64_t ldc, bool accumulate, int64_t rows, int64_t cols) {
  alignas(64) float tile[kRows * kCols];
  Kernel<Layout>(depth, ap, bp, tile, kCols, false);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) {
      const float v = tile[r * kCols + j];
      c[r * ldc + j] = accumulate ? c[r * ldc + j] + v : v;
    }
  }
}

// Rows [i0, i0 + 12) x depth [p0, p0 + depth) of op(A) into `out`, in
// RowLayout when A is row-major and StepLayout when it is transposed; rows
// past m are zero.
void PackA(const float* a, bool ta, int64_t m, int64_t k, int64_t i0,
           int64_t p0, int64_t depth, float* out) {
  const int64_t rows = std::min(kRows, m - i0);
  if (!ta) {
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(out + r * kARowStride, a + (i0 + r) * k + p0,
                  depth * sizeof(float));
    }
    for (int64_t r = rows; r < kRows; ++r) {
      std::memset(out + r * kARowStride, 0, depth * sizeof(float));
    }
  } else {  // a is stored [k, m]: each step's rows are contiguous
    for (int64_t p = 0; p < depth; ++p) {
      float* dst = out + p * kRows;
      std::memcpy(dst, a + (p0 + p) * m + i0, rows * sizeof(float));
      std::memset(dst + rows, 0, (kRows - rows) * sizeof(float));
    }
  }
}

// Transposes the 16 x 16 block whose rows start at src[i * ld] into
// dst[i * ldd] (dst row i = source column i), in registers.
void Transpose16x16(const float* src, int64_t ld, float* dst, int64_t ldd) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * ld);
  // Interleave pairs of rows, then pairs of pairs: 4 x 4 blocks transposed
  // inside each 128-bit lane.
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  // Then move the 128-bit lanes across vectors, in two rounds.
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xDD);
    t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xDD);
  }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
  }
  for (int i = 0; i < 16; ++i) _mm512_storeu_ps(dst + i * ldd, r[i]);
}

// Depth [p0, p0 + depth) x columns [j0, j0 + 32) of op(B) into
// out[depth][32]; columns past n are zero. With `stream` the copy bypasses
// the caches: a packed B larger than them would only evict useful lines.
void PackB(const float* b, bool tb, int64_t k, int64_t n, int64_t p0,
           int64_t depth, int64_t j0, bool stream, float* out) {
  const int64_t cols = std::min(kCols, n - j0);
  if (!tb && cols == kCols) {  // the common case: two vector copies a row
    for (int64_t p = 0; p < depth; ++p) {
      const float* src = b + (p0 + p) * n + j0;
      const __m512 v0 = _mm512_loadu_ps(src), v1 = _mm512_loadu_ps(src + 16);
      if (stream) {
        _mm512_stream_ps(out + p * kCols, v0);
        _mm512_stream_ps(out + p * kCols + 16, v1);
      } else {
        _mm512_store_ps(out + p * kCols, v0);
        _mm512_store_ps(out + p * kCols + 16, v1);
      }
    }
  } else if (tb && cols == kCols) {  // b is stored [n, k]: 16 x 16 transposes
    const int64_t whole = depth - depth % 16;
    for (int64_t half = 0; half < kCols; half += 16) {
      const float* src = b + (j0 + half) * k + p0;
      for (int64_t p = 0; p < whole; p += 16) {
        Transpose16x16(src + p, k, out + p * kCols + half, kCols);
      }
      for (int64_t j = 0; j < 16; ++j) {
        for (int64_t p = whole; p < depth; ++p) {
          out[p * kCols + half + j] = src[j * k + p];
        }
      }
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

// One band: C rows of A slivers [s_lo, s_hi) x every column. Per depth
// block it packs its A slivers into `ap` (sized for one block, so they stay
// in cache) and runs the micro-kernel over every tile, reading B from the
// shared pre-packed copy `bp_all` ([block][sliver][kDepth][32]).
template <typename Layout>
void RunBand(const Problem& q, int64_t s_lo, int64_t s_hi, int64_t col_slivers,
             const float* bp_all, float* ap) {
  const int64_t blocks = (q.k + kDepth - 1) / kDepth;
  for (int64_t d = 0; d < blocks; ++d) {
    const int64_t p0 = d * kDepth, depth = std::min(kDepth, q.k - p0);
    const bool accumulate = d > 0;
    const float* bp = bp_all + d * col_slivers * kCols * kDepth;
    for (int64_t s = s_lo; s < s_hi; ++s) {
      PackA(q.a, q.ta, q.m, q.k, s * kRows, p0, depth,
            ap + (s - s_lo) * kASliverFloats);
    }
    // Column blocks of B stay in L2 while every A sliver passes over them.
    for (int64_t jb = 0; jb < col_slivers; jb += kColBlock) {
      const int64_t jb_hi = std::min(col_slivers, jb + kColBlock);
      for (int64_t s = s_lo; s < s_hi; ++s) {
        const int64_t i0 = s * kRows, rows = std::min(kRows, q.m - i0);
        const float* as = ap + (s - s_lo) * kASliverFloats;
        for (int64_t js = jb; js < jb_hi; ++js) {
          const int64_t j0 = js * kCols, cols = std::min(kCols, q.n - j0);
          const float* bs = bp + js * kCols * kDepth;
          float* c = q.c + i0 * q.n + j0;
          if (rows == kRows && cols == kCols) {
            Kernel<Layout>(depth, as, bs, c, q.n, accumulate);
          } else {
            EdgeKernel<Layout>(depth, as, bs, c, q.n, accumulate, rows, cols);
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
  // The C rows are cut into bands, a few per thread, that the workers take
  // in turn: a worker that starts late or shares its core with other work
  // takes fewer bands instead of holding up the whole product. B is packed
  // once, up front and in parallel, and shared: packing it per band would
  // copy all of B once per band.
  const int64_t workers = std::max<int64_t>(1, std::min(threads, row_slivers));
  // Whole rounds of bands (a multiple of the workers), as many as the
  // minimum band size allows, so the last round still splits evenly.
  const int64_t rounds = std::clamp<int64_t>(
      row_slivers / (kMinBandSlivers * workers), 1, kBandsPerWorker);
  const int64_t band_slivers = std::min(
      kMaxBandSlivers, (row_slivers + rounds * workers - 1) / (rounds * workers));
  const int64_t bands = (row_slivers + band_slivers - 1) / band_slivers;
  const int64_t a_floats = band_slivers * kASliverFloats;
  const int64_t b_floats = blocks * col_slivers * kCols * kDepth;
  Tensor scratch;
  WEFT_RETURN_IF_ERROR(c->allocate_temp(
      DT_FLOAT, TensorShape({b_floats + workers * a_floats}), &scratch));
  float* bp_all = scratch.data<float>();  // 64-byte aligned
  float* a_buffers = bp_all + b_floats;
  const bool stream = b_floats * sizeof(float) > kStreamBytes;
  auto pack_b = [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      const int64_t d = i / col_slivers, js = i % col_slivers;
      const int64_t p0 = d * kDepth;
      PackB(b, transpose_b, k, n, p0, std::min(kDepth, k - p0), js * kCols,
            stream, bp_all + i * kCols * kDepth);
    }
    // Streaming stores are weakly ordered: make them visible before the
    // pool's hand-off lets another thread read them.
    if (stream) _mm_sfence();
  };
  std::atomic<int64_t> next_band{0};
  auto work = [&](int64_t worker) {
    float* ap = a_buffers + worker * a_floats;
    for (int64_t band = next_band.fetch_add(1, std::memory_order_relaxed);
         band < bands;
         band = next_band.fetch_add(1, std::memory_order_relaxed)) {
      const int64_t s_lo = band * band_slivers;
      const int64_t s_hi = std::min(row_slivers, s_lo + band_slivers);
      if (transpose_a) {
        RunBand<StepLayout>(q, s_lo, s_hi, col_slivers, bp_all, ap);
      } else {
        RunBand<RowLayout>(q, s_lo, s_hi, col_slivers, bp_all, ap);
      }
    }
  };
  if (workers == 1) {
    pack_b(0, blocks * col_slivers);
    work(0);
  } else {
    pool->ParallelFor(blocks * col_slivers, kCols * kDepth * 2, pack_b);
    // A cost this high gives every worker its own thread.
    pool->ParallelFor(workers, int64_t{1} << 30, [&](int64_t first, int64_t last) {
      for (int64_t w = first; w < last; ++w) work(w);
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
