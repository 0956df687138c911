// Two in-process workers, /job:worker/replica:0/task:0 and task:1 (one CPU
// each), that reach each other through an InProcessWorkerCache; and Call(),
// which runs one of their async methods with a bounded wait.
#ifndef WEFT_TESTS_DISTRIBUTED_TWO_WORKERS_H_
#define WEFT_TESTS_DISTRIBUTED_TWO_WORKERS_H_

#include <memory>
#include <string>

#include "absl/synchronization/notification.h"
#include "distributed/in_process_worker_cache.h"
#include "distributed/worker.h"
#include "gtest/gtest.h"

namespace weft {
namespace testing {

inline constexpr absl::Duration kCallWait = absl::Seconds(20);

template <typename Method, typename Req, typename Resp>
absl::Status Call(WorkerInterface* w, Method method, const Req& req,
                  Resp* resp) {
  absl::Notification done;
  absl::Status status;
  (w->*method)(&req, resp, [&](absl::Status s) {
    status = s;
    done.Notify();
  });
  if (!done.WaitForNotificationWithTimeout(kCallWait)) {
    ADD_FAILURE() << "the call did not finish within " << kCallWait;
    // `done` still refers to this frame: wait for it rather than return.
    done.WaitForNotification();
  }
  return status;
}

class TwoWorkersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int t = 0; t < 2; ++t) {
      LocalDeviceOptions d;
      d.job = "worker";
      d.task = t;
      devices_[t] = DeviceMgr::NewLocal(d).value();
      WorkerOptions w = worker_options_;
      w.task = "/job:worker/replica:0/task:" + std::to_string(t);
      w.devices = devices_[t].get();
      w.workers = &cache_;
      pools_[t] = ThreadPool::Create("worker" + std::to_string(t), 4).value();
      w.inter_op_pool = pools_[t].get();
      w.ops = ops_;
      w.kernels = kernels_;
      workers_[t] = std::make_unique<Worker>(w);
      cache_.Add(w.task, workers_[t].get());
    }
  }

  std::string dev(int t) const {
    return devices_[t]->default_device()->name();
  }
  uint64_t inc(int t) const {
    return devices_[t]->default_device()->attributes().incarnation();
  }

  // Registries for the workers (null: the global ones); a derived fixture
  // sets them in its constructor.
  const OpRegistry* ops_ = nullptr;
  const KernelRegistry* kernels_ = nullptr;
  // What a derived fixture sets of the workers' options before SetUp
  // (limits, collection); SetUp fills in the rest.
  WorkerOptions worker_options_;
  std::unique_ptr<DeviceMgr> devices_[2];
  std::unique_ptr<ThreadPool> pools_[2];
  InProcessWorkerCache cache_;
  std::unique_ptr<Worker> workers_[2];
};

}  // namespace testing
}  // namespace weft

#endif  // WEFT_TESTS_DISTRIBUTED_TWO_WORKERS_H_
