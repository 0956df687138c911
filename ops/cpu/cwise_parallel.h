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
#include <cstdint>
#include <utility>

#include "ops/framework/op_kernel.h"

namespace weft {

// Below this many cost units (about CPU cycles) in total, run inline.
inline constexpr int64_t kParallelMinCost = int64_t{1} << 16;

// Calls fn(begin, end) over disjoint ranges covering [0, n); returns when
// all calls are done. cost_per_unit is roughly the cycles one unit takes.
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
  pool->ParallelFor(n, cost_per_unit, std::forward<Fn>(fn));
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_CWISE_PARALLEL_H_
