// Master: the MasterService of one task, in-process. It turns a client's
// CreateSession into a MasterSession (distributed/master_session.h) over
// the tasks of the cluster, and routes the session's calls to it.
//
//   MasterOptions options;
//   options.task = "/job:worker/replica:0/task:0";   // this server's task
//   options.cluster = spec;                          // every task
//   options.workers = &cache;                        // reaches them all
//   Master master(options);
//   master.CreateSession(request, &response);        // then RunStep, ...
//
// CreateSession asks every task of the cluster for its devices (GetStatus;
// ConfigProto.device_filters narrows the tasks and devices, this task is
// always one of them) and waits until each has answered: tasks start in
// any order, so a task that does not answer yet is asked again, and every
// `wait_log_interval` a line names the tasks still awaited, their
// addresses and their last error. After `wait_for_tasks` CreateSession
// fails with UNAVAILABLE naming them. Then it creates a worker
// session on each, under a new session handle (16 hex digits). The client
// device is this task's first device.
//
// Sessions a client abandons are closed once idle for `session_gc` (every
// call checks; a server also calls CollectIdleSessions on a timer). Reset
// clears the named resource containers (variables, queues) on every task
// of the cluster (or of request.device_filters) and closes every session.
// ClusterSpec propagation: a CreateSession whose ConfigProto.cluster_def
// names tasks runs that session over those tasks instead of the server's
// cluster (TensorFlow's semantics). This master is the task whose address
// is the request's target (or this server's own address); the session
// reaches the tasks through a cache of its own (session_workers), asks
// them for their devices, names the devices by the task the cluster_def
// gives them, and creates its worker sessions with that cluster and each
// task's name in it (CreateWorkerSessionRequest.server_def), so that a
// server may serve as /job:worker/task:1 in one session and as
// /job:local/task:0 in another. Such a session's state (variables,
// queues) is always its own, as with isolate_session_state.
//
// Partial runs (Session.partial_run_setup / partial_run): PartialRunSetup
// starts one step of the signature on every task and returns its handle;
// each RunStep with that handle feeds and fetches a part of it (each feed
// and fetch once); the call that fetches the last fetch waits for the step
// to end on every task (MasterSession::PartialRunSetup).
//
// Errors are values: an unknown session is ABORTED naming the handle, as
// TensorFlow's master answers; a failure on a task names the task.
// CloseSession succeeds even when a task cannot be reached (it is logged):
// the session is gone from the master either way.
//
// Thread safety: thread-safe; the calls block until they are answered, so
// a transport runs each on a thread of its own. The options' pointers
// must outlive the master; destroying it closes every session.
#ifndef WEFT_DISTRIBUTED_MASTER_H_
#define WEFT_DISTRIBUTED_MASTER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distributed/cluster_spec.h"
#include "distributed/worker_interface.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "proto/master.pb.h"

namespace weft {

class CancellationManager;
class MasterSession;
class ThreadPool;

struct MasterOptions {
  std::string task;     // "/job:J/replica:0/task:T"; one of `cluster`'s
  ClusterSpec cluster;  // the tasks a session may use
  WorkerCache* workers = nullptr;  // required; includes this task
  const OpRegistry* ops = nullptr;  // null: the global registries
  const KernelRegistry* kernels = nullptr;
  // How long CreateSession waits for every task to answer GetStatus, and
  // how often it says which tasks it still waits for.
  absl::Duration wait_for_tasks = absl::Minutes(2);
  absl::Duration wait_log_interval = absl::Seconds(10);
  // How many CreateSession calls may wait for tasks at once (each holds a
  // thread of the caller's); more are UNAVAILABLE at once, naming the
  // tasks not up yet.
  int max_waiting_sessions = 8;
  // Bounds each control call to a task (see MasterSessionOptions).
  absl::Duration call_timeout = absl::Seconds(60);
  // How long a failed step and CloseSession wait for tasks to confirm the
  // abort (MasterSessionOptions::abort_wait).
  absl::Duration abort_wait = absl::Seconds(5);
  // A session no call has used for this long is closed; zero: never.
  absl::Duration session_gc = absl::Hours(1);
  // Makes the cache a session of a propagated cluster reaches its tasks
  // through: `cluster` from ConfigProto.cluster_def, `task` this master's
  // task in it (which the cache must reach in-process). Null: such
  // sessions are UNIMPLEMENTED.
  std::function<absl::StatusOr<std::shared_ptr<WorkerCache>>(
      const ClusterSpec& cluster, const std::string& task)>
      session_workers;
  // Where progress lines go; null: stderr.
  std::function<void(absl::string_view)> log;
};

class Master {
 public:
  explicit Master(MasterOptions options);
  ~Master();
  Master(const Master&) = delete;
  Master& operator=(const Master&) = delete;

  absl::Status CreateSession(const tensorflow::CreateSessionRequest& request,
                             tensorflow::CreateSessionResponse* response);
  absl::Status ExtendSession(const tensorflow::ExtendSessionRequest& request,
                             tensorflow::ExtendSessionResponse* response);
  absl::Status PartialRunSetup(
      const tensorflow::PartialRunSetupRequest& request,
      tensorflow::PartialRunSetupResponse* response);
  absl::Status RunStep(const tensorflow::RunStepRequest& request,
                       tensorflow::RunStepResponse* response);
  // RunStep without a thread waiting on the step (MasterSession::RunAsync):
  // `done` runs on the thread of the step's last answer, or on `pool` for
  // what must wait. `request` and `response` must outlive `done`.
  // `cancel` (may be null): cancelled when the client goes away or its
  // call's deadline passes; the step is then aborted on every task.
  void RunStepAsync(const tensorflow::RunStepRequest& request,
                    tensorflow::RunStepResponse* response, ThreadPool* pool,
                    std::function<void(absl::Status)> done,
                    std::shared_ptr<CancellationManager> cancel = nullptr);
  absl::Status CloseSession(const tensorflow::CloseSessionRequest& request,
                            tensorflow::CloseSessionResponse* response);
  absl::Status ListDevices(const tensorflow::ListDevicesRequest& request,
                           tensorflow::ListDevicesResponse* response);
  absl::Status Reset(const tensorflow::ResetRequest& request,
                     tensorflow::ResetResponse* response);
  absl::Status MakeCallable(const tensorflow::MakeCallableRequest& request,
                            tensorflow::MakeCallableResponse* response);
  // `cancel` (may be null): as for RunStepAsync.
  absl::Status RunCallable(const tensorflow::RunCallableRequest& request,
                           tensorflow::RunCallableResponse* response,
                           CancellationManager* cancel = nullptr);
  absl::Status ReleaseCallable(
      const tensorflow::ReleaseCallableRequest& request,
      tensorflow::ReleaseCallableResponse* response);

  // Closes the sessions idle since before now - session_gc; how many.
  int CollectIdleSessions(absl::Time now);
  int num_sessions() const;

 private:
  struct Entry {
    std::shared_ptr<MasterSession> session;
    absl::Time last_used;
  };
  struct Discovered {
    std::vector<std::string> tasks;  // this task first
    std::vector<tensorflow::DeviceAttributes> devices;
  };

  // The cluster a session sees: the server's, or one propagated in its
  // ConfigProto (then `owned` holds the cache).
  struct View {
    ClusterSpec cluster;
    std::string task;  // this master's task in `cluster`
    WorkerCache* workers = nullptr;
    std::shared_ptr<WorkerCache> owned;
  };
  // The view of ConfigProto.cluster_def for a request to `target`.
  absl::StatusOr<View> PropagatedView(const tensorflow::ClusterDef& def,
                                      const std::string& target) const;
  // The tasks of `view` that `filters` select and their devices, waiting
  // as the file comment says.
  absl::StatusOr<Discovered> DiscoverDevices(
      const std::vector<std::string>& filters, const View& view);
  // The session, marked used now; ABORTED naming the handle if unknown.
  absl::StatusOr<std::shared_ptr<MasterSession>> Find(const std::string& handle);
  void Log(absl::string_view line) const;

  const MasterOptions options_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> sessions_ ABSL_GUARDED_BY(mu_);
  int waiting_sessions_ ABSL_GUARDED_BY(mu_) = 0;  // in DiscoverDevices
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_MASTER_H_
