#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>
#include <unsupported/Eigen/CXX11/ThreadPool>

namespace weft {

struct ThreadPool::Impl {
  explicit Impl(int n) : pool(n, /*allow_spinning=*/false), device(&pool, n) {}
  Eigen::ThreadPool pool;
  Eigen::ThreadPoolDevice device;
};

ThreadPool::ThreadPool(std::string name, int num_threads)
    : name_(std::move(name)),
      impl_(std::make_unique<Impl>(num_threads > 0 ? num_threads : 1)) {}

ThreadPool::~ThreadPool() = default;

void ThreadPool::Schedule(std::function<void()> fn) {
  impl_->pool.Schedule(std::move(fn));
}

int ThreadPool::NumThreads() const { return impl_->pool.NumThreads(); }

int ThreadPool::CurrentThreadId() const {
  return impl_->pool.CurrentThreadId();
}

void ThreadPool::ParallelFor(
    int64_t n, int64_t cost_per_unit,
    const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  // Chunks of at least a few thousand cycles (a claim is an atomic add),
  // about four per worker so that a late or shared thread takes fewer.
  constexpr double kMinChunkCost = 4096;
  const int workers = NumThreads();
  const double cost = std::max<double>(1, static_cast<double>(cost_per_unit));
  const int64_t min_chunk =
      static_cast<int64_t>(std::ceil(kMinChunkCost / cost));
  const int64_t chunk = std::max<int64_t>(
      min_chunk, (n + 4 * int64_t{workers} - 1) / (4 * int64_t{workers}));
  const int64_t chunks = (n + chunk - 1) / chunk;
  if (chunks == 1 || workers == 1) {
    fn(0, n);
    return;
  }
  std::atomic<int64_t> next{0};
  RunWorkers(static_cast<int>(std::min<int64_t>(workers, chunks)), [&](int) {
    for (int64_t b = next.fetch_add(chunk, std::memory_order_relaxed); b < n;
         b = next.fetch_add(chunk, std::memory_order_relaxed)) {
      fn(b, std::min(n, b + chunk));
    }
  });
}

namespace {

// One pool worker of RunWorkers: it runs only if it claims its slot before
// the caller closes the slots.
struct WorkerSlots {
  absl::Mutex mu;
  bool closed ABSL_GUARDED_BY(mu) = false;
  int started ABSL_GUARDED_BY(mu) = 0;
  int running ABSL_GUARDED_BY(mu) = 0;
};

}  // namespace

int ThreadPool::RunWorkers(int n, const std::function<void(int worker)>& worker) {
  if (n <= 1) {
    worker(0);
    return 1;
  }
  // Shared with the scheduled closures, which may run after this returns
  // (and then do nothing).
  auto slots = std::make_shared<WorkerSlots>();
  for (int w = 1; w < n; ++w) {
    impl_->pool.Schedule([slots, &worker] {
      int id = 0;
      {
        absl::MutexLock lock(&slots->mu);
        if (slots->closed) return;
        id = ++slots->started;
        ++slots->running;
      }
      worker(id);
      absl::MutexLock lock(&slots->mu);
      --slots->running;
    });
  }
  worker(0);
  absl::MutexLock lock(&slots->mu);
  slots->closed = true;
  // Workers that started may still hold `worker`: wait for them.
  slots->mu.Await(absl::Condition(
      +[](int* running) { return *running == 0; }, &slots->running));
  return slots->started + 1;
}

const Eigen::ThreadPoolDevice& ThreadPool::eigen_device() const {
  return impl_->device;
}

int DefaultThreadCount() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace weft
