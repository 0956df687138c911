#include "runtime/core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <pthread.h>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>
#include <unsupported/Eigen/CXX11/ThreadPool>

namespace weft {
namespace {

// A thread started before Eigen's pool exists, waiting for the function the
// pool will give it. Eigen starts its threads in its constructor through
// Environment::CreateThread, which cannot fail: std::thread throws there,
// and the unwinding would then wait forever in the threads already started
// (a worker exits only once every worker is idle). Starting the threads
// first with pthread_create turns a refusal into a Status before Eigen sees
// anything, and a failed Create releases and joins the threads it started.
class WaitingThread {
 public:
  WaitingThread() = default;
  WaitingThread(const WaitingThread&) = delete;
  WaitingThread& operator=(const WaitingThread&) = delete;

  // Starts the thread; returns pthread_create's error number (0 on success).
  int Start(const std::string& name) {
    const int rc = pthread_create(&thread_, nullptr, &WaitingThread::Main, this);
    if (rc == 0) {
      started_ = true;
      // Linux allows 15 bytes; the name is for debuggers and top -H.
      pthread_setname_np(thread_, name.substr(0, 15).c_str());
    }
    return rc;
  }
  // Runs `fn` on the thread (an empty `fn` lets it end). Once per thread.
  void Give(std::function<void()> fn) {
    absl::MutexLock lock(&mu_);
    fn_ = std::move(fn);
    given_ = true;
  }
  void Join() {
    if (started_) pthread_join(thread_, nullptr);
    started_ = false;
  }

 private:
  static void* Main(void* arg) {
    auto* self = static_cast<WaitingThread*>(arg);
    std::function<void()> fn;
    {
      absl::MutexLock lock(&self->mu_);
      self->mu_.Await(absl::Condition(&self->given_));
      fn = std::move(self->fn_);
    }
    if (fn) fn();
    return nullptr;
  }

  pthread_t thread_{};
  bool started_ = false;
  absl::Mutex mu_;
  bool given_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void()> fn_ ABSL_GUARDED_BY(mu_);
};

// The started threads of one pool, handed to Eigen in order.
struct WaitingThreads {
  std::vector<std::unique_ptr<WaitingThread>> threads;
  std::atomic<size_t> next{0};
};

// Eigen's Environment over WaitingThreads (the interface of Eigen's
// StlThreadEnvironment): CreateThread hands over a thread already running.
struct StartedThreadEnvironment {
  struct Task {
    std::function<void()> f;
  };
  class EnvThread {
   public:
    explicit EnvThread(WaitingThread* thread) : thread_(thread) {}
    ~EnvThread() { thread_->Join(); }  // Eigen joins by destroying
    void OnCancel() {}

   private:
    WaitingThread* const thread_;
  };

  // Eigen asks for exactly as many threads as were started.
  EnvThread* CreateThread(std::function<void()> f) {
    WaitingThread* thread = threads->threads[threads->next++].get();
    thread->Give(std::move(f));
    return new EnvThread(thread);
  }
  Task CreateTask(std::function<void()> f) { return Task{std::move(f)}; }
  void ExecuteTask(const Task& t) { t.f(); }

  std::shared_ptr<WaitingThreads> threads;
};

}  // namespace

struct ThreadPool::Impl {
  Impl(int n, std::shared_ptr<WaitingThreads> threads)
      : pool(n, /*allow_spinning=*/false,
             StartedThreadEnvironment{std::move(threads)}),
        device(&pool, n) {}
  Eigen::ThreadPoolTempl<StartedThreadEnvironment> pool;
  Eigen::ThreadPoolDevice device;
};

absl::StatusOr<std::unique_ptr<ThreadPool>> ThreadPool::Create(
    std::string name, int num_threads) {
  const int n = num_threads > 0 ? num_threads : 1;
  auto threads = std::make_shared<WaitingThreads>();
  threads->threads.reserve(n);
  for (int i = 0; i < n; ++i) {
    auto thread = std::make_unique<WaitingThread>();
    const int rc = thread->Start(name);
    if (rc != 0) {
      for (auto& started : threads->threads) {
        started->Give(nullptr);
        started->Join();
      }
      return absl::ResourceExhaustedError(absl::StrCat(
          "cannot start thread ", i + 1, " of ", n, " of thread pool '", name,
          "': ", std::strerror(rc),
          " (the process or memory limits, ulimit -u and -v, allow no more "
          "threads); ask for fewer"));
    }
    threads->threads.push_back(std::move(thread));
  }
  return std::unique_ptr<ThreadPool>(new ThreadPool(
      std::move(name), std::make_unique<Impl>(n, std::move(threads))));
}

ThreadPool::ThreadPool(std::string name, std::unique_ptr<Impl> impl)
    : name_(std::move(name)), impl_(std::move(impl)) {}

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
