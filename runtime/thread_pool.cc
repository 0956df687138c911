#include "runtime/thread_pool.h"

#include <thread>

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
  impl_->device.parallelFor(
      n, Eigen::TensorOpCost(0, 0, static_cast<double>(cost_per_unit)),
      [&fn](Eigen::Index begin, Eigen::Index end) { fn(begin, end); });
}

const Eigen::ThreadPoolDevice& ThreadPool::eigen_device() const {
  return impl_->device;
}

int DefaultThreadCount() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace weft
