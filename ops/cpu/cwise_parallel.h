// Sharding a kernel's loop over the device's intra-op thread pool.
//
//   ParallelRange(c, rows, /*cost_per_unit=*/cols * 4, [&](int64_t b, int64_t e) {
//     for (int64_t r = b; r < e; ++r) ...;
//   });
//
// Small loops run inline on the calling thread: handing a few microseconds
// of work to the pool costs more than it saves, and a graph full of scalar
// ops must not pay for threads at all.
#ifndef WEFT_OPS_CPU_CWISE_PARALLEL_H_
#define WEFT_OPS_CPU_CWISE_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "ops/framework/op_kernel.h"

namespace weft {

// Below this many cost units (about CPU cycles) in total, run inline.
inline constexpr int64_t kParallelMinCost = int64_t{1} << 16;

// Calls fn(begin, end) over disjoint ranges covering [0, n); returns when
// all calls are done. cost_per_unit is roughly the cycles one unit takes.
// The ranges are chunks, about four per thread, that the caller and the
// pool threads claim as they go: when the pool is busy with other kernels
// the caller does more of the work instead of waiting for a thread.
template <typename Fn>
void ParallelRange(OpKernelContext* c, int64_t n, int64_t cost_per_unit,
                   Fn&& fn) {
  if (n <= 0) return;
  ThreadPool* pool = c->intra_op_pool();
  cost_per_unit = std::max<int64_t>(cost_per_unit, 1);
  if (n == 1 || pool == nullptr || pool->NumThreads() <= 1 ||
      n < (kParallelMinCost + cost_per_unit - 1) / cost_per_unit) {
    fn(int64_t{0}, n);
    return;
  }
  const int workers = pool->NumThreads();
  // A chunk is worth a claim (an atomic add) only above a few thousand
  // cycles.
  const int64_t min_chunk = (kParallelMinCost / 16 + cost_per_unit - 1) / cost_per_unit;
  const int64_t chunk =
      std::max(min_chunk, (n + 4 * workers - 1) / (4 * workers));
  std::atomic<int64_t> next{0};
  pool->RunWorkers(workers, [&](int) {
    for (int64_t b = next.fetch_add(chunk, std::memory_order_relaxed); b < n;
         b = next.fetch_add(chunk, std::memory_order_relaxed)) {
      fn(b, std::min(n, b + chunk));
    }
  });
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_CWISE_PARALLEL_H_
