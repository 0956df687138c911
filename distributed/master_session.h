// MasterSession: one client session on the master, the distributed
// counterpart of runtime/local_session.h. It holds the client's graph, and
// per Run signature a plan (distributed/run_plan.h) whose partitions are
// registered once on their tasks; each step then runs every task's
// partition concurrently under one step id.
//
//   MasterSessionOptions o;  o.handle = ...; o.devices = ...; o.workers = ...;
//   WEFT_ASSIGN_OR_RETURN(auto session, MasterSession::Create(o, graph_def));
//   WEFT_RETURN_IF_ERROR(session->Run(run_step_request, &run_step_response));
//   session->Close();
//
// A step: a random step id (the top 7 bits clear, as TensorFlow's); feeds
// are checked against the graph here, then sent with RunGraph to the client
// task, which holds the client-terminated _Recvs and _Sends; every other
// task runs its partition at the same time and pulls what it needs from
// its peers (RecvTensor). The first task that fails, or the step's
// deadline (RunOptions.timeout_in_ms, else ConfigProto.
// operation_timeout_in_ms), aborts the step on every task (CleanupGraph),
// and the error names the task; derived errors (ABORTED, CANCELLED from
// other tasks' aborts) give way to the cause. After every step, failed or
// not, CleanupGraph drops the step's state on every task.
//
// A task that restarts loses the session's graphs and state; the step that
// finds out fails, naming it, and the session then re-registers on the new
// process, so the next step runs (the task's variables must be initialised
// again, as after any restart).
//
// Extend adds nodes (runtime/session_graph.h); plans already registered
// stay valid, since an extension cannot change the nodes they hold.
// Callables (MakeCallable) are named Run signatures.
//
// Thread safety: thread-safe; steps run concurrently. Close cancels running
// steps, waits for them, and deletes the worker sessions; afterwards every
// call is ABORTED naming the session. The options' pointers must outlive
// the session.
#ifndef WEFT_DISTRIBUTED_MASTER_SESSION_H_
#define WEFT_DISTRIBUTED_MASTER_SESSION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distributed/worker_interface.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "proto/config.pb.h"
#include "proto/master.pb.h"
#include "runtime/client_graph.h"
#include "runtime/core/cancellation.h"
#include "runtime/session_graph.h"

namespace weft {

class ThreadPool;

struct MasterSessionOptions {
  std::string handle;  // also the worker sessions' handle
  tensorflow::ConfigProto config;
  // The session's tasks ("/job:J/replica:R/task:T") and their devices, the
  // client device's task first (its devices are "local" in ListDevices).
  std::vector<std::string> tasks;
  std::vector<tensorflow::DeviceAttributes> devices;
  std::string client_device;  // where feeds enter and fetches leave
  WorkerCache* workers = nullptr;  // required
  // The cache of a propagated cluster (ConfigProto.cluster_def), kept as
  // long as the session; null otherwise.
  std::shared_ptr<WorkerCache> owned_workers;
  // That cluster: every CreateWorkerSession carries it in its server_def,
  // with the task's job and index in it. Empty: the server's own cluster.
  tensorflow::ClusterDef cluster_def;
  const OpRegistry* ops = nullptr;  // null: the global registries
  const KernelRegistry* kernels = nullptr;
  // Bounds each control call to a task (CreateWorkerSession, RegisterGraph,
  // CleanupGraph, DeleteWorkerSession); a task that does not answer in
  // time is named in the error.
  absl::Duration call_timeout = absl::Seconds(60);
  // How long a failed or aborted step, and CloseSession, wait for the
  // tasks to confirm (their RunGraph ending, DeleteWorkerSession) before
  // giving up on those that do not answer, naming them: a task that is
  // paused or cut off must not hold the error back from the client. Its
  // state goes when it answers again (the abort was sent) or when idle.
  absl::Duration abort_wait = absl::Seconds(5);
};

class MasterSession {
 public:
  // Validates the graph and creates a worker session on every task. On
  // error nothing is left on any task that answered.
  static absl::StatusOr<std::unique_ptr<MasterSession>> Create(
      MasterSessionOptions options, const tensorflow::GraphDef& graph);
  ~MasterSession();  // Close()
  MasterSession(const MasterSession&) = delete;
  MasterSession& operator=(const MasterSession&) = delete;

  const std::string& handle() const { return options_.handle; }

  // ABORTED when current_graph_version is not this session's version.
  absl::Status Extend(const tensorflow::ExtendSessionRequest& request,
                      tensorflow::ExtendSessionResponse* response);
  // `cancel` (may be null): cancelling it (the client went away, or its
  // call's deadline passed) aborts the step on every task at once, and the
  // step ends CANCELLED.
  absl::Status Run(const tensorflow::RunStepRequest& request,
                   tensorflow::RunStepResponse* response,
                   CancellationManager* cancel = nullptr);
  // Run without holding a thread while the step runs: a step whose Run
  // signature is registered and that has no deadline starts on the calling
  // thread, and `done` runs on the thread of the last task's answer, before
  // the step's CleanupGraph goes out. What must wait (the signature's first
  // step registers it; a deadline is watched; a failed step is aborted)
  // runs on `pool`. `self` is this session, kept alive until `done` has
  // run; `request` and `response` must outlive that.
  static void RunAsync(std::shared_ptr<MasterSession> self,
                       const tensorflow::RunStepRequest& request,
                       tensorflow::RunStepResponse* response, ThreadPool* pool,
                       std::function<void(absl::Status)> done,
                       std::shared_ptr<CancellationManager> cancel = nullptr);
  // Starts a partial run: one step of the request's signature, running on
  // every task, fed and fetched by later Runs with its handle (each feed
  // and fetch once, in any order); the Run that fetches the last of the
  // fetches waits for the step to end everywhere. A failed or timed-out
  // call aborts the partial run. Closing the session aborts those left.
  absl::Status PartialRunSetup(const tensorflow::PartialRunSetupRequest& request,
                               tensorflow::PartialRunSetupResponse* response);
  absl::Status MakeCallable(const tensorflow::MakeCallableRequest& request,
                            tensorflow::MakeCallableResponse* response);
  // `cancel` (may be null): as for Run.
  absl::Status RunCallable(const tensorflow::RunCallableRequest& request,
                           tensorflow::RunCallableResponse* response,
                           CancellationManager* cancel = nullptr);
  absl::Status ReleaseCallable(const tensorflow::ReleaseCallableRequest& request);
  void ListDevices(tensorflow::ListDevicesResponse* response) const;
  // Idempotent. Errors of tasks that could not delete their session are
  // returned, but the session is closed regardless.
  absl::Status Close();

  // Prepared Run signatures (for tests).
  int num_registered_plans() const;

 private:
  struct Plan;  // one Run signature, registered on its tasks
  struct Step;  // one step's RunGraph calls
  struct PartialRun;  // a partial run's step and what is left of it
  // One call of a partial run (Run with partial_run_handle).
  absl::Status RunPartial(const tensorflow::RunStepRequest& request,
                          tensorflow::RunStepResponse* response);
  // RunGraph calls of a partial run's step on `tasks` (the client task's
  // carrying `sends` and `recv_keys`), waiting until `deadline`.
  absl::Status CallPartial(const PartialRun& run, const std::vector<std::string>& tasks,
                           bool last,
                           std::vector<std::pair<std::string, const tensorflow::TensorProto*>> sends,
                           const std::vector<std::string>& recv_keys, absl::Time deadline,
                           std::vector<tensorflow::TensorProto>* fetched);

  explicit MasterSession(MasterSessionOptions options);
  absl::StatusOr<std::shared_ptr<const Plan>> GetOrRegister(
      const std::shared_ptr<const SessionGraph>& graph,
      const RunSignature& signature);
  absl::StatusOr<std::shared_ptr<const Plan>> Register(
      const SessionGraph& graph, const RunSignature& signature);
  // Drops `plan`'s graphs from its tasks but those in `skip`; errors only
  // logged.
  void Deregister(const Plan& plan, const std::vector<std::string>& skip = {});
  // The step's timeout (RunOptions, else the session's config); 0: none.
  int64_t StepTimeoutMs(const tensorflow::RunOptions& options) const;
  // A step's RunGraph calls, not started, and the step marked running.
  absl::StatusOr<std::shared_ptr<Step>> PrepareStep(
      const Plan& plan, const std::vector<const tensorflow::TensorProto*>& feeds,
      const tensorflow::RunOptions& options, CancellationManager* cancel);
  // Once the calls have all answered (`all_done`) or not (one failed, or
  // the deadline passed: the step is aborted everywhere, waiting up to
  // abort_wait): the step's status and fetched values. With `cleanup`
  // false a step that ended everywhere is left for the caller to clean up.
  absl::Status EndStep(const Plan& plan, const Step& step, bool all_done,
                       bool cleanup, const tensorflow::RunOptions& options,
                       std::vector<tensorflow::TensorProto>* fetched,
                       tensorflow::RunMetadata* metadata);
  // One step: `feeds[i]` is the value of signature feed i; fetched values
  // go to `fetched[j]` for signature fetch j.
  absl::Status RunStep(const Plan& plan,
                       const std::vector<const tensorflow::TensorProto*>& feeds,
                       const tensorflow::RunOptions& options,
                       std::vector<tensorflow::TensorProto>* fetched,
                       tensorflow::RunMetadata* metadata,
                       CancellationManager* cancel);
  // Creates the session's worker session on `tasks` (idempotent on a task
  // that has it), waiting at most call_timeout; the error names the tasks.
  absl::Status CreateWorkerSessions(const std::vector<std::string>& tasks);
  // Aborts (or, after the step, cleans up) `step_id` on every task of the
  // session, or only on the tasks of `plan` when it is given (a step that
  // ended everywhere left state only where it ran).
  void CleanupStep(int64_t step_id, absl::Time wait_until,
                   const Plan* plan = nullptr);
  // After a failed step: the tasks that answer GetStatus with devices of
  // other incarnations than the session knows have restarted. Adopts their
  // new devices, creates the worker session there again and drops every
  // plan, so that the next step registers its partitions anew; returns the
  // tasks that restarted.
  std::vector<std::string> RecoverRestartedTasks();
  // The plan of a Run signature (registered first when `may_register`;
  // otherwise null when it has none yet) and the feeds in its order,
  // checked (a feed without a value is not). `feed_order` (optional): for
  // each of the plan's feeds, its position in `feeds`.
  absl::StatusOr<std::shared_ptr<const Plan>> PlanFor(
      const std::vector<std::pair<std::string, const tensorflow::TensorProto*>>& feeds,
      const std::vector<std::string>& fetches,
      const std::vector<std::string>& targets, bool may_register,
      std::vector<const tensorflow::TensorProto*>* values,
      std::vector<size_t>* feed_order = nullptr);
  // A failed step's status, naming the tasks that restarted since the
  // session began (it re-registers there); blocks on GetStatus calls.
  absl::Status AfterFailedStep(absl::Status s);
  // Named feeds to signature order, checked; the common half of Run and
  // RunCallable.
  absl::Status RunNamed(
      const std::vector<std::pair<std::string, const tensorflow::TensorProto*>>& feeds,
      const std::vector<std::string>& fetches,
      const std::vector<std::string>& targets,
      const tensorflow::RunOptions& options,
      std::vector<tensorflow::TensorProto>* fetched,
      tensorflow::RunMetadata* metadata, CancellationManager* cancel = nullptr);

  const MasterSessionOptions options_;

  mutable absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<const SessionGraph> graph_ ABSL_GUARDED_BY(mu_);
  int64_t graph_version_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, std::shared_ptr<const Plan>> plans_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int64_t, tensorflow::CallableOptions> callables_
      ABSL_GUARDED_BY(mu_);
  int64_t next_callable_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_set<int64_t> running_ ABSL_GUARDED_BY(mu_);  // step ids
  absl::flat_hash_map<std::string, std::shared_ptr<PartialRun>> partial_runs_
      ABSL_GUARDED_BY(mu_);
  // The cluster's devices as last seen: options_.devices, updated when a
  // task restarts (RecoverRestartedTasks).
  std::vector<tensorflow::DeviceAttributes> devices_ ABSL_GUARDED_BY(mu_);
};

// `devices` as ListDevices answers: those of `local_task` ("/job:J/replica:R/
// task:T") are local, the rest remote.
void FillListDevicesResponse(
    const std::vector<tensorflow::DeviceAttributes>& devices,
    const std::string& local_task, tensorflow::ListDevicesResponse* response);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_MASTER_SESSION_H_
