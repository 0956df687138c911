// The parts of Worker (worker.h) that its implementation files share: the
// private RegisteredGraph and Session, and the helpers of a step's answers.
// The class is implemented over files with one job each: worker.cc
// (sessions, graphs, collectives, expiry), worker_run.cc (RunGraph, partial
// steps, cleanup) and worker_recv.cc (RecvTensor, local receives). Only
// those files include this header.
#ifndef WEFT_DISTRIBUTED_WORKER_PARTS_H_
#define WEFT_DISTRIBUTED_WORKER_PARTS_H_

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "distributed/remote_function.h"
#include "distributed/worker.h"
#include "distributed/task_name.h"
#include "graph/graph_def_loader.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/collective.h"
#include "runtime/core/device_name.h"
#include "runtime/core/resource_mgr.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/executable_graph.h"
#include "runtime/function_runtime.h"
#include "runtime/executor_observer.h"
#include "runtime/kernel_cache.h"

namespace weft {

struct Worker::RegisteredGraph {
  // Declared first, destroyed last: an isolated session's resources, and
  // the executors' stateful kernels.
  std::shared_ptr<absl::flat_hash_map<const Device*, std::unique_ptr<ResourceMgr>>>
      resources;
  std::shared_ptr<KernelCache> kernels;
  // The graph's library functions, for kernels that call them per element
  // (tf.data); null when it has none. Outlives `exec`.
  std::shared_ptr<FunctionRuntime> functions;
  std::unique_ptr<ExecutableGraph> exec;
};

struct Worker::Session {
  std::string handle;  // "" for the legacy session
  // Stateful kernels shared by the session's graphs (as a local session
  // shares them across Run signatures).
  std::shared_ptr<KernelCache> kernels = std::make_shared<KernelCache>();
  // An isolated session's own resources (variables, queues, ...), one
  // manager per device, made at CreateWorkerSession; empty: the devices',
  // shared with every other session. Graphs hold the managers through
  // `resources` (shared), so a step outliving its session keeps them.
  std::shared_ptr<absl::flat_hash_map<const Device*, std::unique_ptr<ResourceMgr>>>
      resources;
  absl::Mutex mu;
  struct Graph {
    std::shared_ptr<const RegisteredGraph> graph;
    absl::Time last_used;  // registered, or last run
  };
  absl::flat_hash_map<std::string, Graph> graphs ABSL_GUARDED_BY(mu);
  absl::Time last_used ABSL_GUARDED_BY(mu) = absl::Now();
  // A propagated cluster (server_def.cluster): this task's name in it and
  // the cache reaching its tasks; empty and null otherwise.
  std::string task;
  std::shared_ptr<WorkerCache> workers;
};

class Worker::Collectives final : public CollectiveRendezvous {
 public:
  // The most instances in use at once is bounded by the step table.
  static constexpr int64_t kMaxInstance = (int64_t{1} << 59) - 1;

  Collectives(StepRendezvousTable* steps, std::string task)
      : steps_(steps), task_(std::move(task)) {}

  absl::StatusOr<std::shared_ptr<Rendezvous>> Instance(
      int64_t instance) override {
    if (instance < 0 || instance > kMaxInstance) {
      return absl::InvalidArgumentError(absl::StrCat(
          "collective instance ", instance, " on task ", task_,
          " is outside [0, ", kMaxInstance, "]"));
    }
    WEFT_ASSIGN_OR_RETURN(std::shared_ptr<StepRendezvous> rv,
                          steps_->FindOrCreate(kCollectiveStepBase + instance,
                                                      StepUse::kCollective));
    return std::shared_ptr<Rendezvous>(std::move(rv));
  }
  void Release(int64_t instance) override {
    if (instance >= 0 && instance <= kMaxInstance) {
      steps_->Cleanup(kCollectiveStepBase + instance);
    }
  }
  const std::string& task() const override { return task_; }

 private:
  StepRendezvousTable* const steps_;
  const std::string task_;
};

namespace worker_internal {

// Where a failure happened, for the master's error: "task T: ...".
absl::Status OnTask(const std::string& task, const absl::Status& s);

// Fills the response body with an error, as masters that set
// store_errors_in_response_body expect, and reports success for the call.
template <typename Response>
absl::Status MaybeStoreError(bool in_body, const absl::Status& s,
                             Response* response) {
  if (!in_body || s.ok()) return s;
  response->set_status_code(static_cast<tensorflow::error::Code>(s.code()));
  response->set_status_error_message(std::string(s.message()));
  return absl::OkStatus();
}

// Puts a RunGraph's feeds (`send`) into the step's rendezvous, as tensors
// of `allocator`; the error names the feed.
absl::Status SendFeeds(const tensorflow::RunGraphRequest& request,
                       Allocator* allocator, StepRendezvous* rendezvous);

// How receiving a fetch under `key` ended (`s`, `is_dead`), as RunGraph
// reports it: a dead value (an untaken branch) is INVALID_ARGUMENT.
absl::Status FetchStatus(const absl::Status& s, bool is_dead, const std::string& key);

}  // namespace worker_internal
}  // namespace weft

#endif  // WEFT_DISTRIBUTED_WORKER_PARTS_H_
