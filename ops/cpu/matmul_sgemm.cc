// Compiled once per ISA (simd_target.h): weft::avx512::Sgemm and
// weft::avx2::Sgemm, and in the baseline compilation weft::Sgemm, which
// calls the one for the CPU (cpu_isa.h).
#include "ops/cpu/matmul_sgemm.h"

#include "ops/cpu/simd_target.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/core/cpu_isa.h"
#include "runtime/core/status.h"
#include "runtime/core/thread_pool.h"

namespace weft {
WEFT_SIMD_DECLARE(decltype(::weft::Sgemm), Sgemm)
}  // namespace weft

#if defined(WEFT_SIMD_HAS_ISA)

WEFT_SIMD_BEGIN
#include "ops/cpu/sgemm_kernel.h"

namespace weft {
namespace WEFT_SIMD_NS {
namespace {

// The kernels for the ISA of this compilation, and its block sizes.
using Isa = simd::TargetIsa;
using K = sgemm_internal::Kernels<Isa>;
constexpr int64_t kRows = K::kRows;        // rows of a C tile (A sliver)
constexpr int64_t kCols = K::kCols;        // columns of a C tile (B sliver)
constexpr int64_t kDepth = K::kDepth;      // depth block (steps a sliver)
constexpr int64_t kColBlock = Isa::kColBlock;  // B slivers an L2 block
constexpr int64_t kASliverFloats = K::kASliverFloats;
constexpr double kMinParallelFlops = 4e6;
// Products of at most this many rows, on one thread, read B in place
// (RunShort) instead of packing it.
constexpr int64_t kShortRows = 32;
// B slivers per column panel: a packed panel is shared by the workers and
// should stay in L3.
constexpr int64_t kPanelSlivers = Isa::kPanelSlivers;
// A slivers per row block (its packed A stays in L2 beside a column block
// of B); each row block reads the panel's B once.
constexpr int64_t kMaxBlockSlivers = Isa::kMaxBlockSlivers;
// Compute tasks wanted per worker and panel.
constexpr int64_t kTasksPerWorker = 4;
// A pack task packs this many depth steps of every sliver in the panel
// (row-major B: it reads whole rows, which the prefetchers follow) or, for
// a transposed B, this many whole slivers (it reads whole rows of B^T).
constexpr int64_t kPackSteps = 16;
constexpr int64_t kPackSlivers = Isa::kPackSlivers;

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
    K::PackB(q.b, q.tb, q.k, q.n, p0 + step_lo, step_hi - step_lo, js * kCols,
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
    K::PackA<Layout>(q.a, q.m, q.k, s * kRows, p0, depth,
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
          K::Kernel<Layout>(depth, as, bs, c, q.n, accumulate);
        } else {
          K::EdgeKernel<Layout>(depth, as, bs, c, q.n, accumulate, rows, cols);
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

// A short A times a row-major B whose columns are whole slivers, on one
// thread: A is packed into bands of equal height (16 rows: two of 8, not
// 12 + 4) and B is read in place, each sliver's columns staying in L1 while
// every band passes over them. For an RNN step's [16, 128] x [128, 512] this
// takes the MatMul from 14.5 us to 10.5 us (weft run --op-timing on a Keras
// LSTM, AVX-512, one core): packing B, and the 4-row tile of 12 + 4, cost
// about as much as the product.
template <typename Layout>
absl::Status RunShort(OpKernelContext* c, const Problem& q) {
  const int64_t bands = (q.m + kRows - 1) / kRows;
  const int64_t band_rows = (q.m + bands - 1) / bands;
  Tensor scratch;
  WEFT_RETURN_IF_ERROR(c->allocate_temp(
      DT_FLOAT, TensorShape({bands * kASliverFloats}), &scratch));
  float* ap = scratch.data<float>();
  for (int64_t p0 = 0; p0 < q.k; p0 += kDepth) {
    const int64_t depth = std::min(kDepth, q.k - p0);
    for (int64_t band = 0; band < bands; ++band) {
      K::PackA<Layout>(q.a, q.m, q.k, band * band_rows, p0, depth,
                       ap + band * kASliverFloats);
    }
    for (int64_t j0 = 0; j0 < q.n; j0 += kCols) {
      for (int64_t band = 0; band < bands; ++band) {
        const int64_t i0 = band * band_rows;
        K::DirectKernel<Layout>(depth, ap + band * kASliverFloats,
                                q.b + p0 * q.n + j0, q.n, q.c + i0 * q.n + j0,
                                q.n, p0 > 0, std::min(band_rows, q.m - i0));
      }
    }
  }
  return absl::OkStatus();
}

template <typename Layout>
absl::Status Run(OpKernelContext* c, const Problem& q) {
  ThreadPool* pool = c->intra_op_pool();
  const int64_t workers =
      2.0 * q.m * q.n * q.k < kMinParallelFlops ? 1 : pool->NumThreads();
  if (workers == 1 && !q.tb && q.m <= kShortRows && q.n % kCols == 0) {
    return RunShort<Layout>(c, q);
  }
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

absl::Status Sgemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                   int64_t m, int64_t n, int64_t k, const float* a,
                   const float* b, float* out) {
  const Problem q{transpose_b, m, n, k, a, b, out};
  return transpose_a ? Run<K::StepLayout>(c, q) : Run<K::RowLayout>(c, q);
}

}  // namespace WEFT_SIMD_NS
}  // namespace weft
WEFT_SIMD_END

#else  // the baseline compilation: the dispatcher

namespace weft {

bool SgemmAvailable() {
  return simd::ActiveCpuIsa() != simd::CpuIsa::kBaseline;
}

absl::Status Sgemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                   int64_t m, int64_t n, int64_t k, const float* a,
                   const float* b, float* out) {
  if (auto* f = WEFT_SIMD_CHOOSE(Sgemm)) {
    return f(c, transpose_a, transpose_b, m, n, k, a, b, out);
  }
  return absl::UnimplementedError(
      "Sgemm needs AVX-512 or AVX2 + FMA, which this CPU lacks or "
      "WEFT_MAX_CPU_ISA turned off (see SgemmAvailable)");
}

}  // namespace weft

#endif
