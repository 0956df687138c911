#include "distributed/worker.h"

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

namespace {

// Where a failure happened, for the master's error: "task T: ...".
absl::Status OnTask(const std::string& task, const absl::Status& s) {
  return WithContext(s, absl::StrCat("task ", task));
}

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
                       Allocator* allocator, StepRendezvous* rendezvous) {
  for (const tensorflow::NamedTensorProto& feed : request.send()) {
    absl::StatusOr<Tensor> value = TensorFromProto(feed.tensor(), allocator);
    absl::Status s = value.status();
    if (s.ok()) s = rendezvous->Send(feed.name(), *value, false);
    if (!s.ok()) {
      return WithContext(s, absl::StrCat("RunGraphRequest.send '", feed.name(), "'"));
    }
  }
  return absl::OkStatus();
}

// How receiving a fetch under `key` ended (`s`, `is_dead`), as RunGraph
// reports it: a dead value (an untaken branch) is INVALID_ARGUMENT.
absl::Status FetchStatus(const absl::Status& s, bool is_dead, const std::string& key) {
  if (!s.ok()) return WithContext(s, "RunGraphRequest.recv_key");
  if (is_dead) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the fetch under '", key, "' is dead (it comes from an untaken "
        "branch of a cond)"));
  }
  return absl::OkStatus();
}

}  // namespace

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

Worker::Worker(const WorkerOptions& options)
    : options_(options),
      steps_(options.devices, options.task, options.workers,
             options.step_limits),
      collectives_(std::make_unique<Collectives>(&steps_, options.task)),
      legacy_(std::make_shared<Session>()) {}

Worker::~Worker() {
  AbortAllSteps();
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](int* running) { return *running == 0; }, &running_steps_));
}

bool Worker::WaitForCollectivesClaimed(absl::Duration max) {
  const absl::Time give_up = absl::Now() + max;
  while (steps_.PendingFrom(kCollectiveStepBase) > 0) {
    if (absl::Now() >= give_up) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

void Worker::AbortAllSteps() {
  steps_.CleanupAll();
  std::vector<std::shared_ptr<CancellationManager>> running;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [step, list] : cancel_) {
      running.insert(running.end(), list.begin(), list.end());
    }
  }
  for (const auto& cm : running) cm->StartCancel();
}

absl::StatusOr<std::shared_ptr<Worker::Session>> Worker::FindSession(
    const std::string& handle, bool create_worker_session_called) {
  std::shared_ptr<Session> session;
  {
    absl::MutexLock lock(&mu_);
    if (handle.empty() || !create_worker_session_called) {
      session = legacy_;
    } else {
      auto it = sessions_.find(handle);
      if (it == sessions_.end()) {
        return absl::AbortedError(absl::StrCat(
            "task ", options_.task, " has no session '", handle,
            "' (it was deleted, or this task restarted since the master "
            "created it, or no call used it for ",
            absl::FormatDuration(options_.idle_ttl), "; recreate the session)"));
      }
      session = it->second;
    }
  }
  absl::MutexLock lock(&session->mu);
  session->last_used = absl::Now();
  return session;
}

int Worker::NumGraphs() const {
  std::vector<std::shared_ptr<Session>> sessions;
  {
    absl::MutexLock lock(&mu_);
    sessions.push_back(legacy_);
    for (const auto& [handle, session] : sessions_) sessions.push_back(session);
  }
  int n = 0;
  for (const auto& session : sessions) {
    absl::MutexLock lock(&session->mu);
    n += static_cast<int>(session->graphs.size());
  }
  return n;
}

void Worker::CollectExpired(absl::Time now) {
  steps_.CollectExpired(now);
  if (options_.idle_ttl == absl::InfiniteDuration()) return;
  const absl::Time before = now - options_.idle_ttl;
  // Freed outside the locks.
  std::vector<std::shared_ptr<Session>> idle;
  std::vector<std::shared_ptr<const RegisteredGraph>> dropped;
  std::shared_ptr<Session> legacy;
  {
    absl::MutexLock lock(&mu_);
    legacy = legacy_;
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      Session& session = *it->second;
      absl::MutexLock session_lock(&session.mu);
      bool used = session.last_used > before;
      for (const auto& [handle, g] : session.graphs) used |= g.last_used > before;
      if (used) {
        ++it;
      } else {
        idle.push_back(std::move(it->second));
        sessions_.erase(it++);
      }
    }
  }
  // The legacy session lives for good; its graphs go one by one.
  absl::MutexLock lock(&legacy->mu);
  for (auto it = legacy->graphs.begin(); it != legacy->graphs.end();) {
    if (it->second.last_used > before) {
      ++it;
    } else {
      dropped.push_back(std::move(it->second.graph));
      legacy->graphs.erase(it++);
    }
  }
}

void Worker::GetStatusAsync(const tensorflow::GetStatusRequest*,
                            tensorflow::GetStatusResponse* response,
                            Done done) {
  for (const Device* d : options_.devices->devices()) {
    *response->add_device_attributes() = d->attributes();
  }
  done(absl::OkStatus());
}

void Worker::CreateWorkerSessionAsync(
    const tensorflow::CreateWorkerSessionRequest* request,
    tensorflow::CreateWorkerSessionResponse*, Done done) {
  if (request->session_handle().empty()) {
    done(absl::InvalidArgumentError(absl::StrCat(
        "CreateWorkerSessionRequest.session_handle is empty (task ",
        options_.task, ")")));
    return;
  }
  // ClusterSpec propagation: the session runs as the task its server_def
  // names, in that cluster.
  std::string task;
  std::shared_ptr<WorkerCache> workers;
  if (const tensorflow::ServerDef& def = request->server_def();
      def.cluster().job_size() > 0) {
    if (!options_.session_workers) {
      done(absl::UnimplementedError(absl::StrCat(
          "task ", options_.task, " does not take a cluster from "
          "CreateWorkerSessionRequest.server_def (ClusterSpec propagation) "
          "in this process")));
      return;
    }
    absl::StatusOr<ClusterSpec> cluster = ClusterSpec::FromClusterDef(def.cluster());
    if (!cluster.ok()) {
      done(OnTask(options_.task, WithContext(cluster.status(),
                                             "CreateWorkerSessionRequest.server_def.cluster")));
      return;
    }
    const TaskId id{def.job_name(), def.task_index()};
    if (!cluster->Address(id).ok()) {
      done(absl::InvalidArgumentError(absl::StrCat(
          "task ", options_.task, ": CreateWorkerSessionRequest.server_def "
          "names this task ", id.ToString(), ", which its cluster (",
          cluster->ToString(), ") does not have")));
      return;
    }
    task = id.DeviceNamePrefix();
    absl::StatusOr<std::shared_ptr<WorkerCache>> made =
        options_.session_workers(*cluster, task);
    if (!made.ok()) {
      done(OnTask(options_.task, made.status()));
      return;
    }
    workers = *std::move(made);
  }
  {
    absl::MutexLock lock(&mu_);
    if (!sessions_.contains(request->session_handle()) &&
        static_cast<int>(sessions_.size()) >= options_.max_sessions) {
      done(absl::ResourceExhaustedError(absl::StrCat(
          "task ", options_.task, " already holds ", sessions_.size(),
          " worker sessions, the most it keeps; close sessions (those no "
          "call uses for ", absl::FormatDuration(options_.idle_ttl),
          " are dropped)")));
      return;
    }
    auto [it, added] = sessions_.try_emplace(request->session_handle());
    if (added) {
      it->second = std::make_shared<Session>();
      it->second->handle = request->session_handle();
      it->second->task = std::move(task);
      it->second->workers = std::move(workers);
      if (request->isolate_session_state()) {
        // What this session makes is invisible to every other session.
        it->second->resources = std::make_shared<
            absl::flat_hash_map<const Device*, std::unique_ptr<ResourceMgr>>>();
        for (const Device* d : options_.devices->devices()) {
          (*it->second->resources)[d] = std::make_unique<ResourceMgr>();
        }
      }
    }
  }
  done(absl::OkStatus());
}

void Worker::DeleteWorkerSessionAsync(
    const tensorflow::DeleteWorkerSessionRequest* request,
    tensorflow::DeleteWorkerSessionResponse*, Done done) {
  std::shared_ptr<Session> session;
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(request->session_handle());
    if (it != sessions_.end()) {
      session = std::move(it->second);
      sessions_.erase(it);
    }
  }
  // Steps still running hold their graphs; the rest go with `session`.
  done(absl::OkStatus());
}

absl::Status Worker::RegisterGraph(
    const tensorflow::RegisterGraphRequest& request,
    tensorflow::RegisterGraphResponse* response) {
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<Session> session,
                        FindSession(request.session_handle(),
                                    request.create_worker_session_called()));
  if (const int n = NumGraphs(); n >= options_.max_graphs) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "task ", options_.task, " already holds ", n,
        " registered graphs, the most it keeps; deregister graphs or close "
        "sessions (graphs no step runs for ",
        absl::FormatDuration(options_.idle_ttl), " are dropped)"));
  }
  const OpRegistry& ops =
      options_.ops != nullptr ? *options_.ops : GlobalOpRegistry();
  const KernelRegistry& kernels = options_.kernels != nullptr
                                      ? *options_.kernels
                                      : GlobalKernelRegistry();
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph,
                        ConvertGraphDefToGraph(request.graph_def(), ops));
  // A registered graph is placed: every node names one of this task's
  // devices, in any spelling of its full name.
  for (Node* n : graph->nodes()) {
    absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(n->requested_device());
    if (!spec.ok() || !spec->IsFull()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "RegisterGraphRequest.graph_def: node '", n->name(), "' has device '",
          n->requested_device(),
          "'; every node of a registered graph must name its full device "
          "(/job:J/replica:R/task:T/device:TYPE:N)"));
    }
    n->set_assigned_device(spec->ToString());
  }
  auto registered = std::make_shared<RegisteredGraph>();
  registered->kernels = session->kernels;
  ExecutableOptions exec_options;
  exec_options.devices = options_.devices;
  exec_options.ops = &ops;
  exec_options.kernels = &kernels;
  exec_options.inter_op_pool = options_.inter_op_pool;
  exec_options.kernel_cache = registered->kernels.get();
  if (session->resources != nullptr) {
    registered->resources = session->resources;
    exec_options.resources = [resources = session->resources.get()](const Device* d) {
      auto it = resources->find(d);
      return it == resources->end() ? nullptr : it->second.get();
    };
  }
  if (!request.graph_def().library().function().empty()) {
    // RemoteCall's targets: this task's devices (named as the session
    // names this task) with the session's resources, and the other tasks
    // of the session's cluster.
    FunctionRuntime::Options functions;
    functions.library = request.graph_def().library();
    functions.ops = &ops;
    functions.kernels = &kernels;
    functions.devices = options_.devices;
    functions.task = session->workers != nullptr ? session->task : "";
    functions.resources = exec_options.resources;
    RemoteFunctionOptions remote;
    remote.library = std::make_shared<const tensorflow::FunctionDefLibrary>(
        request.graph_def().library());
    remote.ops = &ops;
    remote.kernels = &kernels;
    remote.workers = session->workers != nullptr ? session->workers.get()
                                                 : options_.workers;
    remote.owned_workers = session->workers;
    remote.session_handle = session->handle;
    functions.remote = [remote = std::move(remote)](
                           const tensorflow::NameAttrList& fn,
                           const DeviceSpec& target) {
      return InstantiateRemoteFunction(remote, fn, target);
    };
    registered->functions = std::make_shared<FunctionRuntime>(std::move(functions));
    exec_options.functions = registered->functions.get();
  }
  exec_options.receives_from_other_tasks = true;
  if (session->workers != nullptr) exec_options.task_name = session->task;
  WEFT_ASSIGN_OR_RETURN(registered->exec,
                        ExecutableGraph::Create(exec_options, std::move(graph)));
  std::string handle;
  {
    absl::MutexLock lock(&mu_);
    handle = absl::StrFormat("%016x", next_graph_id_++);
  }
  {
    absl::MutexLock lock(&session->mu);
    session->graphs.emplace(handle,
                            Session::Graph{std::move(registered), absl::Now()});
  }
  response->set_graph_handle(handle);
  return absl::OkStatus();
}

void Worker::RegisterGraphAsync(const tensorflow::RegisterGraphRequest* request,
                                tensorflow::RegisterGraphResponse* response,
                                Done done) {
  done(OnTask(options_.task, RegisterGraph(*request, response)));
}

void Worker::DeregisterGraphAsync(
    const tensorflow::DeregisterGraphRequest* request,
    tensorflow::DeregisterGraphResponse*, Done done) {
  absl::StatusOr<std::shared_ptr<Session>> session = FindSession(
      request->session_handle(), request->create_worker_session_called());
  if (!session.ok()) {
    done(session.status());
    return;
  }
  std::shared_ptr<const RegisteredGraph> graph;  // freed outside the lock
  absl::MutexLock lock(&(*session)->mu);
  auto it = (*session)->graphs.find(request->graph_handle());
  if (it != (*session)->graphs.end()) {
    graph = std::move(it->second.graph);
    (*session)->graphs.erase(it);
  }
  done(absl::OkStatus());
}

void Worker::RunGraphAsync(const tensorflow::RunGraphRequest* request,
                           tensorflow::RunGraphResponse* response,
                           Done done) {
  const bool in_body = request->store_errors_in_response_body();
  RunGraph(request, response,
           [this, in_body, response, done = std::move(done)](absl::Status s) {
             done(MaybeStoreError(in_body, OnTask(options_.task, s), response));
           });
}

void Worker::RunGraph(const tensorflow::RunGraphRequest* request,
                      tensorflow::RunGraphResponse* response, Done done) {
  if (request->is_partial()) {
    // A later call of a partial run: its feeds and fetches only.
    std::shared_ptr<PartialStep> running;
    {
      absl::MutexLock lock(&mu_);
      auto it = partial_.find(request->step_id());
      if (it != partial_.end()) running = it->second;
    }
    if (running != nullptr) {
      ContinuePartial(running, request, response, std::move(done), /*sent=*/false);
      return;
    }
  }
  absl::StatusOr<std::shared_ptr<Session>> session = FindSession(
      request->session_handle(), request->create_worker_session_called());
  if (!session.ok()) {
    done(session.status());
    return;
  }
  std::shared_ptr<const RegisteredGraph> graph;
  {
    absl::MutexLock lock(&(*session)->mu);
    auto it = (*session)->graphs.find(request->graph_handle());
    if (it != (*session)->graphs.end()) {
      graph = it->second.graph;
      it->second.last_used = absl::Now();
    }
  }
  if (graph == nullptr) {
    done(absl::AbortedError(absl::StrCat(
        "no registered graph '", request->graph_handle(),
        "' (it was deregistered, or this task restarted; register it "
        "again)")));
    return;
  }
  absl::StatusOr<std::shared_ptr<StepRendezvous>> rendezvous =
      steps_.FindOrCreate(request->step_id(), StepUse::kRun);
  if (!rendezvous.ok()) {
    done(rendezvous.status());
    return;
  }
  if ((*session)->workers != nullptr) {
    (*rendezvous)->Bind((*session)->task, (*session)->workers);
  }
  // Feeds go into the step's rendezvous, where their client-terminated
  // _Recvs find them.
  if (absl::Status s = SendFeeds(*request, options_.devices->default_device()->allocator(),
                                  rendezvous->get());
      !s.ok()) {
    steps_.RunEnded(request->step_id());
    done(s);
    return;
  }
  struct Step {
    std::shared_ptr<const RegisteredGraph> graph;
    std::shared_ptr<StepRendezvous> rendezvous;
    std::shared_ptr<CancellationManager> cancellation =
        std::make_shared<CancellationManager>();
    std::unique_ptr<StepStatsCollector> stats;  // when the master asks
    std::string stats_task;
    Executor::StepArgs args;
  };
  auto step = std::make_shared<Step>();
  step->graph = graph;
  step->rendezvous = *rendezvous;
  step->args.step_id = request->step_id();
  step->args.rendezvous = step->rendezvous.get();
  step->args.collectives = collectives_.get();
  step->args.cancellation = step->cancellation.get();
  if (request->exec_opts().record_timeline() ||
      request->exec_opts().record_costs()) {
    step->stats = std::make_unique<StepStatsCollector>();
    step->args.observer = step->stats.get();
    // Statistics name the devices as the step's session does.
    step->stats_task = (*session)->workers != nullptr ? (*session)->task
                                                     : options_.task;
  }
  // A partial run's first call: the step runs on after this call answers
  // (its fetches are served as they come); the last call waits for it.
  std::shared_ptr<PartialStep> partial;
  Done rpc_done;
  if (request->is_partial()) {
    // What a peer can keep running here between the calls is bounded.
    bool full;
    {
      absl::MutexLock lock(&mu_);
      full = static_cast<int>(partial_.size()) >= options_.max_partial_steps;
    }
    if (full) {
      steps_.RunEnded(request->step_id());
      done(absl::ResourceExhaustedError(absl::StrCat(
          "task ", options_.task, " already runs ", options_.max_partial_steps,
          " partial runs, the most it keeps; finish or abandon some (their "
          "last call, or closing their session, ends them)")));
      return;
    }
    partial = std::make_shared<PartialStep>();
    partial->rendezvous = *rendezvous;
    rpc_done = std::move(done);
    done = [partial](absl::Status s) { partial->End(std::move(s)); };
  }
  {
    absl::MutexLock lock(&mu_);
    ++running_steps_;
    cancel_[request->step_id()].push_back(step->cancellation);
    if (partial != nullptr) partial_[request->step_id()] = partial;
  }
  const bool whole = partial == nullptr;  // else `request` ends before the step
  Executor::DoneCallback finished = [this, step, request, response, whole,
                                     done = std::move(done)](
                                        absl::Status s) mutable {
    if (s.ok() && whole) {
      absl::flat_hash_map<std::string, int> seen;  // a key asked twice
      for (const std::string& key : request->recv_key()) {
        auto [it, first] = seen.try_emplace(key, response->recv_size());
        if (!first) {
          *response->add_recv() = response->recv(it->second);
          continue;
        }
        Tensor value;
        bool is_dead = false;
        s = FetchStatus(step->rendezvous->TakeLocal(key, &value, &is_dead), is_dead, key);
        if (!s.ok()) break;
        tensorflow::NamedTensorProto* out = response->add_recv();
        out->set_name(key);
        TensorToProto(value, out->mutable_tensor());
      }
    }
    if (step->stats != nullptr && whole) {
      tensorflow::StepStats* stats = response->mutable_step_stats();
      step->stats->Finalize(stats);
      for (tensorflow::DeviceStepStats& d : *stats->mutable_dev_stats()) {
        if (absl::StartsWith(d.device(), options_.task + "/")) {
          d.set_device(absl::StrCat(step->stats_task,
                                    d.device().substr(options_.task.size())));
        }
      }
    }
    if (!s.ok()) {
      // Peers waiting for this step's tensors stop now. ABORTED, so the
      // master reports this task's error rather than theirs.
      step->rendezvous->StartAbort(absl::AbortedError(absl::StrCat(
          "step ", step->args.step_id, " failed on task ", options_.task,
          ": ", s.message())));
    }
    const int64_t step_id = step->args.step_id;
    const CancellationManager* const mine = step->cancellation.get();
    step.reset();  // the graph and rendezvous, before the worker may go
    steps_.RunEnded(step_id);
    done(s);
    std::shared_ptr<CancellationManager> dropped;  // freed unlocked
    absl::MutexLock lock(&mu_);
    --running_steps_;
    auto it = cancel_.find(step_id);
    if (it != cancel_.end()) {
      auto& list = it->second;
      for (auto c = list.begin(); c != list.end(); ++c) {
        if (c->get() == mine) {
          dropped = std::move(*c);
          list.erase(c);
          break;
        }
      }
      if (list.empty()) cancel_.erase(it);
    }
  };
  // On the pool, so that RunGraph returns at once: the master starts every
  // task's partition before any of them has finished.
  auto start = [graph, step, finished = std::move(finished)]() mutable {
    graph->exec->RunAsync(step->args, std::move(finished));
  };
  if (options_.inter_op_pool != nullptr) {
    options_.inter_op_pool->Schedule(std::move(start));
  } else {
    start();
  }
  if (partial != nullptr) {
    ContinuePartial(partial, request, response, std::move(rpc_done), /*sent=*/true);
  }
}

void Worker::PartialStep::End(absl::Status s) {
  std::function<void()> waiting;
  {
    absl::MutexLock lock(&mu);
    ended = true;
    status = std::move(s);
    waiting = std::move(on_end);
  }
  if (waiting) waiting();
}

void Worker::ContinuePartial(std::shared_ptr<PartialStep> step,
                             const tensorflow::RunGraphRequest* request,
                             tensorflow::RunGraphResponse* response, Done done,
                             bool sent) {
  if (!sent) {
    absl::Status s = SendFeeds(*request, options_.devices->default_device()->allocator(),
                               step->rendezvous.get());
    if (!s.ok()) {
      done(s);
      return;
    }
  }
  // This call's fetches, as they come; then, for the last call, the end
  // of the step.
  struct Fetches {
    absl::Mutex mu;
    int left ABSL_GUARDED_BY(mu) = 0;
    absl::Status status ABSL_GUARDED_BY(mu);
    std::vector<Tensor> values ABSL_GUARDED_BY(mu);
  };
  auto fetches = std::make_shared<Fetches>();
  const int n = request->recv_key_size();
  {
    absl::MutexLock lock(&fetches->mu);
    fetches->left = n + 1;  // + 1: released below, once every wait is on
    fetches->values.resize(n);
  }
  const int64_t step_id = request->step_id();
  auto finish = [this, step, fetches, request, response, step_id,
                 done = std::move(done)]() mutable {
    absl::Status s;
    {
      absl::MutexLock lock(&fetches->mu);
      s = fetches->status;
      for (int i = 0; s.ok() && i < request->recv_key_size(); ++i) {
        tensorflow::NamedTensorProto* out = response->add_recv();
        out->set_name(request->recv_key(i));
        TensorToProto(fetches->values[i], out->mutable_tensor());
      }
    }
    if (!s.ok() || !request->is_last_partial_run()) {
      done(s);
      return;
    }
    auto last = [this, step, step_id, done = std::move(done)]() mutable {
      absl::Status status;
      {
        absl::MutexLock lock(&step->mu);
        status = step->status;
      }
      {
        absl::MutexLock lock(&mu_);
        partial_.erase(step_id);
      }
      done(status);
    };
    bool ended;
    {
      absl::MutexLock lock(&step->mu);
      ended = step->ended;
      if (!ended) step->on_end = std::move(last);
    }
    if (ended) last();
  };
  auto arrived = [fetches, finish](int i, const absl::Status& s, const Tensor& value,
                                   bool is_dead, const std::string& key) mutable {
    bool all;
    {
      absl::MutexLock lock(&fetches->mu);
      if (i >= 0) {
        const absl::Status fetched = FetchStatus(s, is_dead, key);
        if (fetched.ok()) fetches->values[i] = value;
        fetches->status.Update(fetched);
      }
      all = --fetches->left == 0;
    }
    if (all) finish();
  };
  auto shared_arrived = std::make_shared<decltype(arrived)>(std::move(arrived));
  for (int i = 0; i < n; ++i) {
    const std::string key = request->recv_key(i);
    step->rendezvous->RecvLocalAsync(
        key, [shared_arrived, i, key](const absl::Status& s, const Tensor& value,
                                      bool is_dead) {
          (*shared_arrived)(i, s, value, is_dead, key);
        });
  }
  (*shared_arrived)(-1, absl::OkStatus(), Tensor(), false, "");
}

void Worker::CleanupGraphAsync(const tensorflow::CleanupGraphRequest* request,
                               tensorflow::CleanupGraphResponse*, Done done) {
  steps_.Cleanup(request->step_id());
  {
    absl::MutexLock lock(&mu_);
    partial_.erase(request->step_id());
  }
  std::vector<std::shared_ptr<CancellationManager>> running;
  {
    absl::MutexLock lock(&mu_);
    auto it = cancel_.find(request->step_id());
    if (it != cancel_.end()) running = it->second;
  }
  for (const auto& cm : running) cm->StartCancel();
  done(absl::OkStatus());
}

void Worker::CleanupAllAsync(const tensorflow::CleanupAllRequest* request,
                             tensorflow::CleanupAllResponse*, Done done) {
  for (Device* d : options_.devices->devices()) {
    ResourceMgr* resources = d->resource_manager();
    // No container, or "", means the default one (as in TensorFlow).
    if (request->container().empty()) {
      resources->Cleanup(resources->default_container());
    }
    for (const std::string& c : request->container()) {
      resources->Cleanup(c.empty() ? resources->default_container() : c);
    }
  }
  done(absl::OkStatus());
}

void Worker::RecvTensorAsync(const tensorflow::RecvTensorRequest* request,
                             tensorflow::RecvTensorResponse* response,
                             Done done) {
  RecvLocal(*request, [response, done = std::move(done)](
                          absl::Status s, const Tensor& value, bool is_dead) {
    if (s.ok()) {
      response->set_is_dead(is_dead);
      if (!is_dead) TensorToProto(value, response->mutable_tensor());
    }
    done(s);
  });
}

void Worker::RecvTensorValueAsync(const tensorflow::RecvTensorRequest* request,
                                  RecvTensorResult* result, Done done) {
  // In-process: the sender's tensor itself (tensors are immutable once
  // sent), no copy.
  RecvLocal(*request, [result, done = std::move(done)](
                          absl::Status s, const Tensor& value, bool is_dead) {
    if (s.ok()) {
      result->is_dead = is_dead;
      if (!is_dead) result->tensor = value;
    }
    done(s);
  });
}

bool Worker::IsSessionTask(absl::string_view task) const {
  if (task.empty()) return false;
  absl::MutexLock lock(&mu_);
  for (const auto& [handle, session] : sessions_) {
    if (session->workers != nullptr && session->task == task) return true;
  }
  return false;
}

void Worker::RecvLocal(
    const tensorflow::RecvTensorRequest& request,
    std::function<void(absl::Status, const Tensor&, bool)> done) {
  absl::StatusOr<RendezvousKey> key =
      RendezvousKey::Parse(request.rendezvous_key());
  if (!key.ok()) {
    done(OnTask(options_.task,
                WithContext(key.status(), "RecvTensorRequest.rendezvous_key")),
         Tensor(), false);
    return;
  }
  // The sender must be one of ours, and the process that registered the
  // graph: a restarted task has new incarnations.
  absl::StatusOr<Device*> src = options_.devices->Lookup(key->src_device);
  if (!src.ok() ||
      ((*src)->name() != key->src_device &&
       !IsSessionTask(TaskOfDevice(key->src_device).value_or("")))) {
    done(absl::InvalidArgumentError(absl::StrCat(
             "task ", options_.task, " has no device '", key->src_device,
             "' to send from (RecvTensorRequest.rendezvous_key '",
             request.rendezvous_key(), "')")),
         Tensor(), false);
    return;
  }
  // Collective instances are matched by number, not by process: a peer
  // cannot know this process's incarnation, and sends 0.
  const bool collective = request.step_id() >= kCollectiveStepBase;
  if (!collective &&
      (*src)->attributes().incarnation() != key->src_incarnation) {
    done(absl::AbortedError(absl::StrCat(
             "task ", options_.task, ": RecvTensor expects incarnation ",
             absl::Hex(key->src_incarnation, absl::kZeroPad16), " of ",
             key->src_device, ", but this process's is ",
             absl::Hex((*src)->attributes().incarnation(), absl::kZeroPad16),
             " (the task restarted; the step must be run again)")),
         Tensor(), false);
    return;
  }
  absl::StatusOr<std::shared_ptr<StepRendezvous>> rendezvous =
      steps_.FindOrCreate(request.step_id(), StepUse::kPeer);
  if (!rendezvous.ok()) {
    done(rendezvous.status(), Tensor(), false);
    return;
  }
  const std::string task = options_.task;
  (*rendezvous)->RecvLocalAsync(
      request.rendezvous_key(),
      [task, done = std::move(done)](const absl::Status& s, const Tensor& value,
                                     bool is_dead) {
        done(s.ok() ? s : OnTask(task, s), value, is_dead);
      });
}

}  // namespace weft
