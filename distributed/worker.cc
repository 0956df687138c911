#include "distributed/worker.h"

#include "absl/random/random.h"
#include "distributed/worker_parts.h"

namespace weft {

using worker_internal::OnTask;

Worker::Worker(const WorkerOptions& options)
    : options_(options),
      steps_(options.devices, options.task, options.workers,
             options.step_limits),
      collectives_(std::make_unique<Collectives>(&steps_, options.task)),
      legacy_(std::make_shared<Session>()),
      graph_tag_([] {
        absl::BitGen gen;
        return absl::Uniform<uint64_t>(gen);
      }()) {}

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
  exec_options.optimizations = GraphOptimizationsFrom(request.graph_options());
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
    handle = absl::StrFormat("%016x%016x", graph_tag_, next_graph_id_++);
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

}  // namespace weft
