// A fixed pool of worker threads (Eigen's non-blocking, work-stealing pool).
//
//   WEFT_ASSIGN_OR_RETURN(std::unique_ptr<ThreadPool> pool,
//                         ThreadPool::Create("inter_op", 4));
//   pool->Schedule([] { ... });
//   pool->ParallelFor(n, /*cost_per_unit=*/100, [&](int64_t b, int64_t e) {...});
//
// Thread-safe. The destructor waits for scheduled work to finish.
#ifndef WEFT_RUNTIME_CORE_THREAD_POOL_H_
#define WEFT_RUNTIME_CORE_THREAD_POOL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace Eigen {
class ThreadPoolInterface;
struct ThreadPoolDevice;
}  // namespace Eigen

namespace weft {

class ThreadPool {
 public:
  // Starts `num_threads` threads (at least one), named after `name`. When
  // the system refuses one (a process or memory limit: ulimit -u, -v), the
  // result is RESOURCE_EXHAUSTED naming the pool and the count, and no
  // thread of the pool is left running.
  static absl::StatusOr<std::unique_ptr<ThreadPool>> Create(std::string name,
                                                            int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Schedule(std::function<void()> fn);
  int NumThreads() const;
  // Index of the calling thread in this pool, or -1 for outside threads.
  int CurrentThreadId() const;
  // Runs fn over disjoint ranges covering [0, n) on the calling thread and
  // the pool (through RunWorkers: chunks claimed as the threads go, so a
  // busy pool never holds the caller up); returns when all are done.
  // cost_per_unit (roughly cycles) sizes the chunks: about four per thread
  // (so one unit each when n is at most four times the threads), none under
  // a few thousand cycles.
  void ParallelFor(int64_t n, int64_t cost_per_unit,
                   const std::function<void(int64_t, int64_t)>& fn);

  // Runs worker(0) on the calling thread and worker(1) .. worker(n - 1) on
  // pool threads, but only on those that start before worker(0) returns:
  // the others are skipped. Returns how many workers ran (at least 1).
  // For work the workers claim as they go (an atomic counter over chunks),
  // so whoever runs does all of it: when the pool is busy with other
  // kernels the caller does the work itself instead of waiting for a
  // thread to free up, as ParallelFor's fixed shards would.
  int RunWorkers(int n, const std::function<void(int worker)>& worker);

  // For Eigen expressions: evaluate with `.device(pool.eigen_device())`.
  const Eigen::ThreadPoolDevice& eigen_device() const;
  const std::string& name() const { return name_; }

 private:
  struct Impl;
  ThreadPool(std::string name, std::unique_ptr<Impl> impl);

  std::string name_;
  std::unique_ptr<Impl> impl_;
};

// Threads to use when a count is 0 ("pick for me"): the number of cores.
int DefaultThreadCount();

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_THREAD_POOL_H_
