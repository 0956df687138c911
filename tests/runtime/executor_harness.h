// Harness: loads, prunes and instantiates a graph of test ops (see
// executor_test_ops.h) and runs it with feeds; for the executor's tests.
#ifndef WEFT_TESTS_RUNTIME_EXECUTOR_HARNESS_H_
#define WEFT_TESTS_RUNTIME_EXECUTOR_HARNESS_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph_def_loader.h"
#include "graph/prune.h"
#include "ops/framework/call_frame.h"
#include "runtime/core/device.h"
#include "runtime/executor.h"
#include "runtime/core/thread_pool.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace testing {

// Loads, prunes and instantiates a graph of test ops; runs it with feeds.
class Harness {
 public:
  Harness(const tensorflow::GraphDef& def, std::vector<std::string> feeds,
          std::vector<std::string> fetches, std::vector<std::string> targets,
          bool use_pool = false)
      : devices_(DeviceMgr::NewLocal({}).value()), num_fetches_(fetches.size()) {
    if (use_pool) pool_ = ThreadPool::Create("test_inter_op", 2).value();
    auto graph = ConvertGraphDefToGraph(def, TestOps());
    if (!graph.ok()) {
      status_ = graph.status();
      return;
    }
    auto pruned = PruneGraph(**graph, feeds, fetches, targets);
    if (!pruned.ok()) {
      status_ = pruned.status();
      return;
    }
    ExecutorOptions opts;
    opts.device = devices_->default_device();
    opts.kernels = &TestKernels();
    opts.inter_op_pool = pool_.get();
    auto exec = Executor::Create(opts, **pruned);
    if (!exec.ok()) {
      status_ = exec.status();
      return;
    }
    executor_ = *std::move(exec);
  }

  const absl::Status& status() const { return status_; }
  Executor* executor() { return executor_.get(); }
  Device* device() { return devices_->default_device(); }

  absl::StatusOr<std::vector<Tensor>> Run(
      std::vector<Tensor> feeds = {}, CancellationManager* cm = nullptr,
      ExecutorObserver* observer = nullptr) {
    if (!status_.ok()) return status_;
    SimpleCallFrame frame(std::move(feeds), static_cast<int>(num_fetches_));
    CancellationManager local_cm;
    Executor::StepArgs args;
    args.step_id = ++step_;
    args.call_frame = &frame;
    args.cancellation = cm != nullptr ? cm : &local_cm;
    args.observer = observer;
    absl::Status s = executor_->Run(args);
    if (!s.ok()) return s;
    std::vector<Tensor> out;
    absl::Status t = frame.TakeRetvals(&out);
    if (!t.ok()) return t;
    return out;
  }

 private:
  std::unique_ptr<DeviceMgr> devices_;
  std::unique_ptr<ThreadPool> pool_;
  size_t num_fetches_;
  absl::Status status_;
  std::unique_ptr<Executor> executor_;
  std::atomic<int64_t> step_{0};
};

}  // namespace testing
}  // namespace weft

#endif  // WEFT_TESTS_RUNTIME_EXECUTOR_HARNESS_H_
