#include "ops/cpu/matmul_sgemm.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

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
// B slivers per column panel: a packed panel (kDepth x 4096 floats, 4 MiB)
// is shared by the workers and should stay in L3.
constexpr int64_t kPanelSlivers = 128;
// A slivers per row block (its packed A, 13 KiB a sliver, stays in L2
// beside a column block of B); each row block reads the panel's B once.
constexpr int64_t kMaxBlockSlivers = 8;
// Compute tasks wanted per worker and panel.
constexpr int64_t kTasksPerWorker = 4;
// A pack task packs this many depth steps of every sliver in the panel
// (row-major B: it reads whole rows, which the prefetchers follow) or, for
// a transposed B, this many whole slivers (it reads whole rows of B^T).
constexpr int64_t kPackSteps = 16;
constexpr int64_t kPackSlivers = 4;

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

// C[R, 32] = (or +=) Ap * Bp over `depth` steps, for the first R (of 12)
// rows of the A sliver. Bp is [depth][32] and 64-byte aligned; Ap is laid
// out as Layout says.
template <typename Layout, int R = kRows>
inline void Kernel(int64_t depth, const float* ap, const float* bp, float* c,
                   int64_t ldc, bool accumulate) {
  __m512 lo[R], hi[R];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    lo[r] = _mm512_setzero_ps();
    hi[r] = _mm512_setzero_ps();
    // The C tile is read and written after the loop: start fetching it into
    // L2 now, so the loop hides a miss to memory.
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_T1);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 16), _MM_HINT_T1);
  }
  auto steps = [&](int64_t count) {
    for (int64_t p = 0; p < count; ++p) {
      const __m512 b0 = _mm512_load_ps(bp);
      const __m512 b1 = _mm512_load_ps(bp + 16);
      _mm_prefetch(reinterpret_cast<const char*>(bp + 8 * kCols), _MM_HINT_T0);
#pragma GCC unroll 12
      for (int r = 0; r < R; ++r) {
        const __m512 a = _mm512_set1_ps(ap[r * Layout::kRow]);
        lo[r] = _mm512_fmadd_ps(a, b0, lo[r]);
        hi[r] = _mm512_fmadd_ps(a, b1, hi[r]);
      }
      ap += Layout::kStep;
      bp += kCols;
    }
  };
  // Then into L1 near the end: fetched at the start, the lines would have
  // been pushed out of L1 by the slivers streaming through it.
  const int64_t tail = std::min<int64_t>(depth, 32);
  steps(depth - tail);
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc), _MM_HINT_ET0);
    _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + 16), _MM_HINT_ET0);
  }
  steps(tail);
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
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
// Short tiles run a kernel of just their rows (an m of 64 leaves a 4-row
// tile per 12-row band: computing all 12 would triple its cost).
template <typename Layout, int R>
void ShortKernel(int64_t depth, const float* ap, const float* bp, float* c,
                 int64_t ldc, bool accumulate, int64_t cols) {
  if (cols == kCols) {
    Kernel<Layout, R>(depth, ap, bp, c, ldc, accumulate);
    return;
  }
  alignas(64) float tile[R * kCols];
  Kernel<Layout, R>(depth, ap, bp, tile, kCols, false);
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t j = 0; j < cols; ++j) {
      const float v = tile[r * kCols + j];
      c[r * ldc + j] = accumulate ? c[r * ldc + j] + v : v;
    }
  }
}

template <typename Layout, int... Rs>
void EdgeKernelFor(std::integer_sequence<int, Rs...>, int64_t depth,
                   const float* ap, const float* bp, float* c, int64_t ldc,
                   bool accumulate, int64_t rows, int64_t cols) {
  // Calls ShortKernel<Layout, rows>: Rs are 1 .. 12.
  ((rows == Rs + 1
        ? ShortKernel<Layout, Rs + 1>(depth, ap, bp, c, ldc, accumulate, cols)
        : void()),
   ...);
}

template <typename Layout>
void EdgeKernel(int64_t depth, const float* ap, const float* bp, float* c,
                int64_t ldc, bool accumulate, int64_t rows, int64_t cols) {
  EdgeKernelFor<Layout>(std::make_integer_sequence<int, kRows>(), depth, ap,
                        bp, c, ldc, accumulate, rows, cols);
}

// Rows [i0, i0 + 12) x depth [p0, p0 + depth) of op(A) into `out`, laid
// out as Layout says; rows past m are zero. RowLayout is for a row-major A
// (copy each row's depth range), StepLayout for a transposed A (copy each
// step's 12 contiguous values).
template <typename Layout>
void PackA(const float* a, int64_t m, int64_t k, int64_t i0, int64_t p0,
           int64_t depth, float* out);

template <>
void PackA<RowLayout>(const float* a, int64_t m, int64_t k, int64_t i0,
                      int64_t p0, int64_t depth, float* out) {
  const int64_t rows = std::min(kRows, m - i0);
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(out + r * kARowStride, a + (i0 + r) * k + p0,
                depth * sizeof(float));
  }
  for (int64_t r = rows; r < kRows; ++r) {
    std::memset(out + r * kARowStride, 0, depth * sizeof(float));
  }
}

template <>
void PackA<StepLayout>(const float* a, int64_t m, int64_t, int64_t i0,
                       int64_t p0, int64_t depth, float* out) {
  const int64_t rows = std::min(kRows, m - i0);
  for (int64_t p = 0; p < depth; ++p) {  // a is stored [k, m]
    float* dst = out + p * kRows;
    std::memcpy(dst, a + (p0 + p) * m + i0, rows * sizeof(float));
    std::memset(dst + rows, 0, (kRows - rows) * sizeof(float));
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
  bool tb;
  int64_t m, n, k;
  const float* a;
  const float* b;
  float* c;
};

// How the product is cut up. The depth is cut into blocks of kDepth and the
// columns into panels of up to kPanelSlivers B slivers; a (column panel,
// depth block) pair is a "panel" of work, taken in order (depth innermost).
// Each panel is a list of tasks: first pack tasks, which pack part of its B
// (16 steps of every sliver, or a few whole slivers of a transposed B) into
// one of two shared buffers, then compute tasks, which each pack a block of
// A's rows for that depth block and multiply it with one chunk of the
// panel's columns.
struct Schedule {
  int64_t row_slivers, col_slivers, depth_blocks;
  int64_t panel_slivers;                 // B slivers in a (full) panel
  int64_t panels;                        // column panels x depth blocks
  int64_t block_slivers, row_blocks;     // A slivers in a row block
  int64_t chunk_slivers, chunks;         // B slivers in a column chunk
  int64_t pack_tasks, compute_tasks;     // per panel
  int64_t tasks() const { return panels * (pack_tasks + compute_tasks); }
};

Schedule MakeSchedule(int64_t m, int64_t n, int64_t k, bool tb,
                      int64_t workers) {
  Schedule s;
  s.row_slivers = (m + kRows - 1) / kRows;
  s.col_slivers = (n + kCols - 1) / kCols;
  s.depth_blocks = (k + kDepth - 1) / kDepth;
  s.panel_slivers = std::min(s.col_slivers, kPanelSlivers);
  s.panels = (s.col_slivers + s.panel_slivers - 1) / s.panel_slivers *
             s.depth_blocks;
  // A few compute tasks a worker per panel, so that a worker that starts
  // late or shares its core takes fewer of them; but row blocks no smaller
  // than needed for that, since each re-reads the panel's B from L3.
  const int64_t want = workers == 1 ? 1 : kTasksPerWorker * workers;
  s.block_slivers = std::clamp<int64_t>((s.row_slivers + want - 1) / want, 1,
                                        kMaxBlockSlivers);
  s.row_blocks = (s.row_slivers + s.block_slivers - 1) / s.block_slivers;
  // Too few row blocks (a short A): cut the columns too.
  const int64_t chunks = std::clamp<int64_t>(
      (want + s.row_blocks - 1) / s.row_blocks, 1, s.panel_slivers);
  s.chunk_slivers = (s.panel_slivers + chunks - 1) / chunks;
  s.chunks = (s.panel_slivers + s.chunk_slivers - 1) / s.chunk_slivers;
  s.pack_tasks = tb ? (s.panel_slivers + kPackSlivers - 1) / kPackSlivers
                    : (std::min(k, kDepth) + kPackSteps - 1) / kPackSteps;
  s.compute_tasks = s.row_blocks * s.chunks;
  return s;
}

// What the workers share. Tasks are claimed in order from `next`, and a
// task only ever waits for tasks claimed before it, whose workers are
// running: so any number of workers (one included) finishes, whenever each
// starts. Panel P uses B buffer P % 2; the counters per buffer only grow.
struct Progress {
  explicit Progress(int64_t tiles) : tile_panels(tiles) {}
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> packed[2] = {0, 0};    // pack tasks done
  std::atomic<int64_t> computed[2] = {0, 0};  // compute tasks done
  // Per (row block, chunk): panels done, so that depth block d + 1 adds to
  // C only after d has written it.
  std::vector<std::atomic<int64_t>> tile_panels;
};

// Waits until v >= target. The wait is normally a fraction of one task
// (a few microseconds), so it spins first; a longer one means the task it
// waits for was preempted (a busy machine), and then the waiter sleeps in
// short steps rather than spin or yield, which would take time from that
// task if the two share a core.
void WaitFor(const std::atomic<int64_t>& v, int64_t target) {
  for (int spins = 0; v.load(std::memory_order_acquire) < target; ++spins) {
    if (spins < 2000) {
      _mm_pause();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

// Pack task i of the panel of B slivers [js_first, js_end) x the depth
// block at p0, into `bp`.
void PackTask(const Problem& q, int64_t i, int64_t p0, int64_t js_first,
              int64_t js_end, float* bp) {
  const int64_t depth = std::min(kDepth, q.k - p0);
  int64_t js_lo = js_first, js_hi = js_end, step_lo = 0, step_hi = depth;
  if (q.tb) {
    js_lo = js_first + i * kPackSlivers;
    js_hi = std::min(js_end, js_lo + kPackSlivers);
  } else {
    step_lo = i * kPackSteps;
    step_hi = std::min(depth, step_lo + kPackSteps);
  }
  for (int64_t js = js_lo; js < js_hi && step_lo < step_hi; ++js) {
    PackB(q.b, q.tb, q.k, q.n, p0 + step_lo, step_hi - step_lo, js * kCols,
          bp + (js - js_first) * kCols * kDepth + step_lo * kCols);
  }
}

// Rows of A slivers [s_lo, s_hi) x B slivers [js_lo, js_hi) of C, for the
// depth block at p0. `bp` is the panel's packed B, whose first sliver is
// js_first; `ap` holds the packed A block.
template <typename Layout>
void ComputeBlock(const Problem& q, int64_t s_lo, int64_t s_hi, int64_t js_lo,
                  int64_t js_hi, int64_t js_first, int64_t p0,
                  const float* bp, float* ap) {
  const int64_t depth = std::min(kDepth, q.k - p0);
  const bool accumulate = p0 > 0;
  for (int64_t s = s_lo; s < s_hi; ++s) {
    PackA<Layout>(q.a, q.m, q.k, s * kRows, p0, depth,
                  ap + (s - s_lo) * kASliverFloats);
  }
  // Column blocks of B stay in L2 while every A sliver passes over them.
  for (int64_t jb = js_lo; jb < js_hi; jb += kColBlock) {
    const int64_t jb_hi = std::min(js_hi, jb + kColBlock);
    for (int64_t s = s_lo; s < s_hi; ++s) {
      const int64_t i0 = s * kRows, rows = std::min(kRows, q.m - i0);
      const float* as = ap + (s - s_lo) * kASliverFloats;
      for (int64_t js = jb; js < jb_hi; ++js) {
        const int64_t j0 = js * kCols, cols = std::min(kCols, q.n - j0);
        const float* bs = bp + (js - js_first) * kCols * kDepth;
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

// One worker: claims and runs tasks until none are left. `bp` are the two
// B panel buffers, `ap` this worker's A block buffer.
template <typename Layout>
void Work(const Problem& q, const Schedule& s, Progress& pr,
          float* const bp[2], float* ap) {
  const int64_t per_panel = s.pack_tasks + s.compute_tasks;
  const int64_t total = s.tasks();
  for (int64_t t = pr.next.fetch_add(1, std::memory_order_relaxed); t < total;
       t = pr.next.fetch_add(1, std::memory_order_relaxed)) {
    const int64_t panel = t / per_panel, i = t % per_panel;
    const int64_t buf = panel % 2, use = panel / 2;
    const int64_t p0 = panel % s.depth_blocks * kDepth;
    const int64_t js_first = panel / s.depth_blocks * s.panel_slivers;
    const int64_t js_end = std::min(s.col_slivers, js_first + s.panel_slivers);
    if (i < s.pack_tasks) {
      // The buffer's previous panel must be done with it.
      WaitFor(pr.computed[buf], use * s.compute_tasks);
      PackTask(q, i, p0, js_first, js_end, bp[buf]);
      pr.packed[buf].fetch_add(1, std::memory_order_release);
    } else {
      const int64_t u = i - s.pack_tasks;
      const int64_t r = u / s.chunks, ch = u % s.chunks;
      WaitFor(pr.packed[buf], (use + 1) * s.pack_tasks);
      WaitFor(pr.tile_panels[u], panel);
      const int64_t s_lo = r * s.block_slivers;
      const int64_t s_hi = std::min(s.row_slivers, s_lo + s.block_slivers);
      const int64_t js_lo = js_first + ch * s.chunk_slivers;
      const int64_t js_hi = std::min(js_end, js_lo + s.chunk_slivers);
      if (js_lo < js_hi) {  // the last column panel may be narrower
        ComputeBlock<Layout>(q, s_lo, s_hi, js_lo, js_hi, js_first, p0,
                             bp[buf], ap);
      }
      pr.tile_panels[u].store(panel + 1, std::memory_order_release);
      pr.computed[buf].fetch_add(1, std::memory_order_release);
    }
  }
}

template <typename Layout>
absl::Status Run(OpKernelContext* c, const Problem& q) {
  ThreadPool* pool = c->intra_op_pool();
  const int64_t workers =
      2.0 * q.m * q.n * q.k < kMinParallelFlops ? 1 : pool->NumThreads();
  const Schedule s = MakeSchedule(q.m, q.n, q.k, q.tb, workers);
  const int64_t b_floats = s.panel_slivers * kCols * kDepth;
  const int64_t a_floats = s.block_slivers * kASliverFloats;
  const int64_t b_buffers = s.panels > 1 ? 2 : 1;
  Tensor scratch;
  WEFT_RETURN_IF_ERROR(c->allocate_temp(
      DT_FLOAT, TensorShape({b_buffers * b_floats + workers * a_floats}),
      &scratch));
  float* base = scratch.data<float>();  // 64-byte aligned, as are the parts
  float* const bp[2] = {base, base + (b_buffers - 1) * b_floats};
  float* a_buffers = base + b_buffers * b_floats;
  Progress progress(s.compute_tasks);
  // Workers whose pool thread is busy with another kernel when this one is
  // done are skipped: a task only waits on tasks a running worker took.
  pool->RunWorkers(static_cast<int>(workers), [&](int w) {
    Work<Layout>(q, s, progress, bp, a_buffers + w * a_floats);
  });
  return absl::OkStatus();
}

}  // namespace

bool SgemmAvailable() { return true; }

absl::Status Sgemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                   int64_t m, int64_t n, int64_t k, const float* a,
                   const float* b, float* out) {
  const Problem q{transpose_b, m, n, k, a, b, out};
  return transpose_a ? Run<StepLayout>(c, q) : Run<RowLayout>(c, q);
}

#else  // no AVX-512: MatMul uses Eigen's GEMM

bool SgemmAvailable() { return false; }

absl::Status Sgemm(OpKernelContext*, bool, bool, int64_t, int64_t, int64_t,
                   const float*, const float*, float*) {
  return absl::UnimplementedError("Sgemm needs AVX-512 (see SgemmAvailable)");
}

#endif

}  // namespace weft
