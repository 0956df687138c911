// Worker: the WorkerService of one task, in-process. It holds the task's
// registered graphs per session and runs their steps on the task's devices
// with the same engine a local session uses (runtime/executable_graph.h),
// exchanging tensors with other tasks through a StepRendezvous per step.
//
//   WorkerOptions options;
//   options.task = "/job:worker/replica:0/task:1";
//   options.devices = device_mgr.get();       // named under options.task
//   options.workers = &cache;                 // reaches the other tasks
//   Worker worker(options);
//   worker.RegisterGraphAsync(&req, &resp, done);   // then RunGraph, ...
//
// Sessions: CreateWorkerSession makes one per master session handle; a
// request with create_worker_session_called=false (or an empty handle) uses
// the task's legacy session, which always exists. A session whose
// server_def names a cluster (ClusterSpec propagation) runs as the task the
// server_def names in it: its graphs' device names, rendezvous keys and
// step statistics use that name, and its steps reach their peers through
// a cache over that cluster (WorkerOptions.session_workers), while the
// devices underneath are this task's. Graphs and their
// stateful kernels belong to a session; variables live in the devices'
// resource managers, shared by every session of the task (TensorFlow's
// default, which between-graph replication relies on), and CleanupAll
// clears them by container.
//
// RunGraph feeds `send` (each named by the rendezvous key of a
// client-terminated _Recv) into the step's rendezvous, runs every
// partition, and returns the values of `recv_key` (client-terminated
// _Sends). Errors name this task; with store_errors_in_response_body they
// come back in the response and the call itself succeeds, as TensorFlow's
// masters expect. CleanupGraph aborts and forgets a step's rendezvous and
// cancels the step if it still runs here, so a step blocked on a dead peer,
// or one the master gave up on, ends at once; a RunGraph or RecvTensor for
// a step already cleaned up is ABORTED.
//
// Collective kernels (ops/collective_ops.cc) meet their peers through the
// worker's CollectiveRendezvous: instance i is the step rendezvous of step
// id kCollectiveStepBase + i, above every id a master makes, so a peer's
// RecvTensor for it reaches the same table as any other step's.
//
// Thread safety: thread-safe; steps run concurrently. The options' pointers
// must outlive the worker. Destroying the worker waits for its running
// steps (it aborts them first).
#ifndef WEFT_DISTRIBUTED_WORKER_H_
#define WEFT_DISTRIBUTED_WORKER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distributed/cluster_spec.h"
#include "distributed/step_rendezvous.h"
#include "distributed/worker_interface.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/device.h"
#include "runtime/core/thread_pool.h"

namespace weft {

struct WorkerOptions {
  std::string task;                   // "/job:J/replica:R/task:T"
  const DeviceMgr* devices = nullptr;  // required; named under `task`
  const OpRegistry* ops = nullptr;     // null: the global registries
  const KernelRegistry* kernels = nullptr;
  // Starts each RunGraph's step, and runs expensive kernels and the
  // partitions of a step; null runs them on the caller's thread (then
  // RunGraph returns only once the step waits or ends: tests only).
  ThreadPool* inter_op_pool = nullptr;
  WorkerCache* workers = nullptr;      // required: the cluster's tasks
  // Makes the cache of a session whose server_def names a cluster:
  // `cluster` that cluster, `task` this worker's name in it (which the
  // cache must reach in-process). Null: such sessions are UNIMPLEMENTED.
  std::function<absl::StatusOr<std::shared_ptr<WorkerCache>>(
      const ClusterSpec& cluster, const std::string& task)>
      session_workers;
  // How long peers' and abandoned steps' rendezvous live
  // (step_rendezvous.h); a server calls CollectExpired periodically.
  StepRendezvousLimits step_limits;
  // What peers may make the worker hold: worker sessions, and graphs
  // registered over all sessions (more are RESOURCE_EXHAUSTED); and how
  // long a session, or a graph of the legacy session, may go unused
  // before CollectExpired drops it (infinite: never).
  int max_sessions = 1024;
  int max_graphs = 16384;
  // Partial runs' steps that may run here at once, waiting between the
  // calls that feed and fetch them (more are RESOURCE_EXHAUSTED).
  int max_partial_steps = 1024;
  absl::Duration idle_ttl = absl::Hours(1);
};

class Worker final : public WorkerInterface {
 public:
  explicit Worker(const WorkerOptions& options);
  ~Worker() override;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void GetStatusAsync(const tensorflow::GetStatusRequest* request,
                      tensorflow::GetStatusResponse* response,
                      Done done) override;
  void CreateWorkerSessionAsync(
      const tensorflow::CreateWorkerSessionRequest* request,
      tensorflow::CreateWorkerSessionResponse* response, Done done) override;
  void DeleteWorkerSessionAsync(
      const tensorflow::DeleteWorkerSessionRequest* request,
      tensorflow::DeleteWorkerSessionResponse* response, Done done) override;
  void RegisterGraphAsync(const tensorflow::RegisterGraphRequest* request,
                          tensorflow::RegisterGraphResponse* response,
                          Done done) override;
  void DeregisterGraphAsync(const tensorflow::DeregisterGraphRequest* request,
                            tensorflow::DeregisterGraphResponse* response,
                            Done done) override;
  void RunGraphAsync(const tensorflow::RunGraphRequest* request,
                     tensorflow::RunGraphResponse* response,
                     Done done) override;
  void CleanupGraphAsync(const tensorflow::CleanupGraphRequest* request,
                         tensorflow::CleanupGraphResponse* response,
                         Done done) override;
  void CleanupAllAsync(const tensorflow::CleanupAllRequest* request,
                       tensorflow::CleanupAllResponse* response,
                       Done done) override;
  void RecvTensorAsync(const tensorflow::RecvTensorRequest* request,
                       tensorflow::RecvTensorResponse* response,
                       Done done) override;
  void RecvTensorValueAsync(const tensorflow::RecvTensorRequest* request,
                            RecvTensorResult* result, Done done) override;

  // Aborts and forgets the step rendezvous that expired at `now`: peers'
  // RecvTensor calls for steps that never started here, and steps that
  // ended here and were never cleaned up (WorkerOptions.step_limits); and
  // drops the worker sessions, and the legacy session's graphs, that no
  // call has used for idle_ttl (steps still running keep their graphs).
  void CollectExpired(absl::Time now);
  // Registered graphs over every session.
  int NumGraphs() const;
  // Aborts every step in flight (their RunGraph calls end with the abort);
  // how a server shutting down lets its calls finish.
  void AbortAllSteps();
  // Waits up to `max` until the peers have pulled everything this task's
  // collectives sent (a task that has finished its last all-reduce may hold
  // what its successor still needs). False if some remains at `max`.
  bool WaitForCollectivesClaimed(absl::Duration max);

  const std::string& task() const { return options_.task; }
  // Steps whose rendezvous the task holds (for tests).
  int num_step_rendezvous() const { return steps_.size(); }
  int num_unclaimed_step_rendezvous() const { return steps_.unclaimed(); }

 private:
  struct Session;
  struct RegisteredGraph;
  class Collectives;
  // A partial run's step (RunGraphRequest.is_partial): it runs on between
  // the calls that feed and fetch it; the last call waits for its end.
  struct PartialStep {
    std::shared_ptr<StepRendezvous> rendezvous;
    absl::Mutex mu;
    bool ended ABSL_GUARDED_BY(mu) = false;
    absl::Status status ABSL_GUARDED_BY(mu);
    std::function<void()> on_end ABSL_GUARDED_BY(mu);  // the last call
    void End(absl::Status s);
  };

  // Whether `task` is this task's name in a propagated cluster of one of
  // its sessions.
  bool IsSessionTask(absl::string_view task) const;
  // The session a request names; ABORTED naming the handle if unknown.
  absl::StatusOr<std::shared_ptr<Session>> FindSession(
      const std::string& handle, bool create_worker_session_called);
  absl::Status RegisterGraph(const tensorflow::RegisterGraphRequest& request,
                             tensorflow::RegisterGraphResponse* response);
  void RunGraph(const tensorflow::RunGraphRequest* request,
                tensorflow::RunGraphResponse* response, Done done);
  // A partial run's call: its feeds (unless `sent`) into the step, its
  // fetches as they come, and for the last call the step's end.
  void ContinuePartial(std::shared_ptr<PartialStep> step,
                       const tensorflow::RunGraphRequest* request,
                       tensorflow::RunGraphResponse* response, Done done, bool sent);
  // What RecvTensor answers: the tensor a _Send of this task makes in the
  // step, once it is there.
  void RecvLocal(const tensorflow::RecvTensorRequest& request,
                 std::function<void(absl::Status, const Tensor&, bool)> done);

  const WorkerOptions options_;
  StepRendezvousTable steps_;
  const std::unique_ptr<Collectives> collectives_;

  mutable absl::Mutex mu_;
  std::shared_ptr<Session> legacy_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<Session>> sessions_
      ABSL_GUARDED_BY(mu_);
  // Graph handles are this process's random tag and a count: a handle
  // issued by an earlier process of the task (which counted from 1 too)
  // never names a graph of this one, so a master's late DeregisterGraph
  // for it, sent while it learns of the restart, drops nothing here.
  const uint64_t graph_tag_;
  int64_t next_graph_id_ ABSL_GUARDED_BY(mu_) = 1;
  int running_steps_ ABSL_GUARDED_BY(mu_) = 0;
  // The cancellation of each running RunGraph, by step id: CleanupGraph
  // cancels them. Held here until the RunGraph ends.
  absl::flat_hash_map<int64_t, std::vector<std::shared_ptr<CancellationManager>>>
      cancel_ ABSL_GUARDED_BY(mu_);
  // The partial runs whose steps run here, by step id (at most
  // WorkerOptions::max_partial_steps).
  absl::flat_hash_map<int64_t, std::shared_ptr<PartialStep>> partial_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_WORKER_H_
