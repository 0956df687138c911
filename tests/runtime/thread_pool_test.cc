// ThreadPool::RunWorkers: the work gets done whether or not pool threads
// join, a busy pool never makes the caller wait, and workers that start
// late are skipped.
#include "runtime/core/thread_pool.h"

#include <atomic>
#include <functional>
#include <set>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

// Every chunk of [0, chunks) once, claimed through a counter as
// RunWorkers' callers do; returns how many times each chunk ran.
std::vector<int> ClaimAll(ThreadPool& pool, int workers, int chunks,
                          int* ran) {
  std::vector<std::atomic<int>> done(chunks);
  std::atomic<int> next{0};
  *ran = pool.RunWorkers(workers, [&](int) {
    for (int c = next++; c < chunks; c = next++) ++done[c];
  });
  std::vector<int> counts;
  for (auto& d : done) counts.push_back(d.load());
  return counts;
}

TEST(ThreadPoolTest, RunWorkersDoesAllTheWorkOnce) {
  std::unique_ptr<ThreadPool> owned = ThreadPool::Create("test", 3).value();
  ThreadPool& pool = *owned;
  for (int workers : {1, 2, 4, 8}) {
    int ran = 0;
    const std::vector<int> counts = ClaimAll(pool, workers, 1000, &ran);
    EXPECT_EQ(counts, std::vector<int>(1000, 1)) << workers << " workers";
    EXPECT_GE(ran, 1);
    EXPECT_LE(ran, workers);
  }
}

TEST(ThreadPoolTest, ParallelForCoversEveryUnitOnce) {
  std::unique_ptr<ThreadPool> owned = ThreadPool::Create("test", 2).value();
  ThreadPool& pool = *owned;
  for (int64_t n : {1, 2, 7, 100, 100000}) {
    for (int64_t cost : {int64_t{1}, int64_t{1000}, int64_t{1} << 30}) {
      std::vector<std::atomic<int>> hits(n);
      pool.ParallelFor(n, cost, [&](int64_t b, int64_t e) {
        ASSERT_LE(0, b);
        ASSERT_LT(b, e);
        ASSERT_LE(e, n);
        for (int64_t i = b; i < e; ++i) ++hits[i];
      });
      int64_t wrong = 0;
      for (auto& h : hits) wrong += h.load() != 1;
      EXPECT_EQ(wrong, 0) << "n=" << n << " cost=" << cost;
    }
  }
}

TEST(ThreadPoolTest, IdlePoolThreadsJoin) {
  std::unique_ptr<ThreadPool> owned = ThreadPool::Create("test", 2).value();
  ThreadPool& pool = *owned;
  // The caller's worker waits (bounded) for a pool worker to show up, so
  // the count shows that idle threads do join.
  absl::Notification joined;
  std::set<int> ids;
  absl::Mutex mu;
  const int ran = pool.RunWorkers(2, [&](int id) {
    {
      absl::MutexLock lock(&mu);
      ids.insert(id);
    }
    if (id == 0) {
      EXPECT_TRUE(joined.WaitForNotificationWithTimeout(absl::Seconds(30)))
          << "no pool thread started a worker";
    } else {
      joined.Notify();
    }
  });
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(ids, (std::set<int>{0, 1}));
}

TEST(ThreadPoolTest, BusyPoolLeavesTheWorkToTheCaller) {
  std::unique_ptr<ThreadPool> owned = ThreadPool::Create("test", 1).value();
  ThreadPool& pool = *owned;
  absl::Notification release, blocking;
  pool.Schedule([&] {
    blocking.Notify();
    release.WaitForNotification();
  });
  blocking.WaitForNotification();
  // The only pool thread is blocked: RunWorkers must return without it,
  // the caller having claimed every chunk.
  std::atomic<int> next{0}, done{0}, pool_calls{0};
  const std::function<void(int)> worker = [&](int id) {
    if (id > 0) ++pool_calls;
    for (int c = next++; c < 100; c = next++) ++done;
  };
  EXPECT_EQ(pool.RunWorkers(4, worker), 1);
  EXPECT_EQ(done, 100);
  // Once free, the pool runs the skipped workers' closures, which must not
  // call the worker (in real use it is gone by then).
  release.Notify();
  absl::Notification drained;
  pool.Schedule([&] { drained.Notify(); });
  EXPECT_TRUE(drained.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(pool_calls, 0);
}

}  // namespace
}  // namespace weft
