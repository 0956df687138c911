#include "distributed/master_session.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distributed/fanout.h"
#include "distributed/run_plan.h"
#include "distributed/step_id.h"
#include "runtime/core/allocator.h"
#include "runtime/core/device_name.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/core/thread_pool.h"
#include "distributed/master_session_parts.h"

namespace weft {

using master_session_internal::Tasks;
using master_session_internal::ClosedError;

MasterSession::MasterSession(MasterSessionOptions options)
    : options_(std::move(options)), devices_(options_.devices) {}

absl::StatusOr<std::unique_ptr<MasterSession>> MasterSession::Create(
    MasterSessionOptions options, const tensorflow::GraphDef& graph) {
  if (options.workers == nullptr || options.tasks.empty()) {
    return absl::InvalidArgumentError(
        "MasterSession needs the cluster's tasks and a worker cache");
  }
  const OpRegistry& ops =
      options.ops != nullptr ? *options.ops : GlobalOpRegistry();
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const SessionGraph> state,
                        SessionGraph::Create(graph, ops));
  std::unique_ptr<MasterSession> session(new MasterSession(std::move(options)));
  absl::Status status = session->CreateWorkerSessions(session->options_.tasks);
  if (!status.ok()) {
    session->Close().IgnoreError();  // deletes what was created
    return status;
  }
  absl::MutexLock lock(&session->mu_);
  session->graph_ = std::move(state);
  return session;
}

MasterSession::~MasterSession() { Close().IgnoreError(); }

absl::Status MasterSession::CreateWorkerSessions(
    const std::vector<std::string>& tasks) {
  using Calls = Fanout<tensorflow::CreateWorkerSessionRequest,
                       tensorflow::CreateWorkerSessionResponse>;
  auto calls = Calls::Make();
  for (const std::string& task : tasks) {
    WEFT_ASSIGN_OR_RETURN(WorkerInterface * worker,
                          options_.workers->GetWorker(task));
    auto& call = calls->Add(task, worker);
    call.request.set_session_handle(options_.handle);
    call.request.set_master_task(options_.tasks.front());
    call.request.set_isolate_session_state(options_.config.isolate_session_state());
    *call.request.mutable_server_def()->mutable_default_session_config() =
        options_.config;
    if (options_.cluster_def.job_size() > 0) {
      // A propagated cluster: the task's name in it.
      absl::StatusOr<DeviceSpec> name = ParseDeviceSpec(task);
      if (!name.ok() || !name->job.has_value() || !name->task.has_value()) {
        return absl::InternalError(absl::StrCat("task name '", task, "'"));
      }
      tensorflow::ServerDef* def = call.request.mutable_server_def();
      *def->mutable_cluster() = options_.cluster_def;
      def->set_job_name(*name->job);
      def->set_task_index(*name->task);
      def->set_protocol("grpc");
      // Such a session's state is its own, always (TensorFlow's rule).
      call.request.set_isolate_session_state(true);
    }
  }
  calls->Start(&WorkerInterface::CreateWorkerSessionAsync);
  if (!calls->WaitUntil(absl::Now() + options_.call_timeout)) {
    return absl::DeadlineExceededError(absl::StrCat(
        "CreateSession: no answer to CreateWorkerSession within ",
        absl::FormatDuration(options_.call_timeout), " from ",
        Tasks(calls->Unanswered()),
        " (is the task overloaded or stuck? see its log)"));
  }
  absl::Status status;
  for (int i = 0; i < calls->size(); ++i) status.Update(calls->call(i).status);
  return status;
}

absl::Status MasterSession::Extend(
    const tensorflow::ExtendSessionRequest& request,
    tensorflow::ExtendSessionResponse* response) {
  const OpRegistry& ops =
      options_.ops != nullptr ? *options_.ops : GlobalOpRegistry();
  // Extends are serialised by version: the one that builds on the current
  // graph wins, another one racing it is refused like a stale client.
  std::shared_ptr<const SessionGraph> current;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return ClosedError(options_.handle);
    if (request.current_graph_version() != graph_version_) {
      return absl::AbortedError(absl::StrCat(
          "ExtendSession: the session's graph is at version ", graph_version_,
          " but the request extends version ",
          request.current_graph_version()));
    }
    current = graph_;
  }
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const SessionGraph> next,
                        current->Extend(request.graph_def(), ops));
  absl::MutexLock lock(&mu_);
  if (closed_) return ClosedError(options_.handle);
  if (graph_ != current) {
    return absl::AbortedError(absl::StrCat(
        "ExtendSession: another ExtendSession changed the graph to version ",
        graph_version_, " meanwhile; extend that version"));
  }
  graph_ = std::move(next);
  response->set_new_graph_version(++graph_version_);
  return absl::OkStatus();
}

absl::Status MasterSession::MakeCallable(
    const tensorflow::MakeCallableRequest& request,
    tensorflow::MakeCallableResponse* response) {
  const tensorflow::CallableOptions& options = request.options();
  if (options.tensor_connection_size() > 0) {
    return absl::UnimplementedError(
        "CallableOptions.tensor_connection is not supported; feed the "
        "tensor instead");
  }
  // The signature is checked (and registered) now, so a bad name fails
  // here rather than at the first call.
  std::shared_ptr<const SessionGraph> graph;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return ClosedError(options_.handle);
    graph = graph_;
  }
  WEFT_ASSIGN_OR_RETURN(
      const RunSignature signature,
      RunSignature::Make({options.feed().begin(), options.feed().end()},
                         {options.fetch().begin(), options.fetch().end()},
                         {options.target().begin(), options.target().end()}));
  WEFT_RETURN_IF_ERROR(GetOrRegister(graph, signature).status());
  absl::MutexLock lock(&mu_);
  if (closed_) return ClosedError(options_.handle);
  const int64_t handle = next_callable_++;
  callables_[handle] = options;
  response->set_handle(handle);
  return absl::OkStatus();
}

absl::Status MasterSession::RunCallable(
    const tensorflow::RunCallableRequest& request,
    tensorflow::RunCallableResponse* response, CancellationManager* cancel) {
  tensorflow::CallableOptions options;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return ClosedError(options_.handle);
    auto it = callables_.find(request.handle());
    if (it == callables_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "RunCallableRequest.handle ", request.handle(),
          " is not a callable of session '", options_.handle,
          "' (released, or never made)"));
    }
    options = it->second;
  }
  if (request.feed_size() != options.feed_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RunCallable: the callable takes ", options.feed_size(),
        " feed(s) but the request has ", request.feed_size()));
  }
  std::vector<std::pair<std::string, const tensorflow::TensorProto*>> feeds;
  for (int i = 0; i < request.feed_size(); ++i) {
    feeds.emplace_back(options.feed(i), &request.feed(i));
  }
  std::vector<tensorflow::TensorProto> fetched;
  WEFT_RETURN_IF_ERROR(
      RunNamed(feeds, {options.fetch().begin(), options.fetch().end()},
               {options.target().begin(), options.target().end()},
               options.run_options(), &fetched, response->mutable_metadata(),
               cancel));
  for (tensorflow::TensorProto& t : fetched) {
    *response->add_fetch() = std::move(t);
  }
  return absl::OkStatus();
}

absl::Status MasterSession::ReleaseCallable(
    const tensorflow::ReleaseCallableRequest& request) {
  absl::MutexLock lock(&mu_);
  if (closed_) return ClosedError(options_.handle);
  if (callables_.erase(request.handle()) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ReleaseCallableRequest.handle ", request.handle(),
        " is not a callable of session '", options_.handle, "'"));
  }
  return absl::OkStatus();
}

void MasterSession::ListDevices(tensorflow::ListDevicesResponse* response) const {
  absl::MutexLock lock(&mu_);
  FillListDevicesResponse(devices_, options_.tasks.front(), response);
}

void FillListDevicesResponse(
    const std::vector<tensorflow::DeviceAttributes>& devices,
    const std::string& local_task, tensorflow::ListDevicesResponse* response) {
  const std::string local = local_task + "/";
  for (const tensorflow::DeviceAttributes& d : devices) {
    if (absl::StartsWith(d.name(), local)) {
      *response->add_local_device() = d;
    } else {
      *response->add_remote_device() = d;
    }
  }
}

absl::Status MasterSession::Close() {
  std::vector<int64_t> running;
  absl::flat_hash_map<std::string, std::shared_ptr<const Plan>> plans;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    running.assign(running_.begin(), running_.end());
    // Partial runs left are aborted with the steps in flight.
    for (const auto& [handle, run] : partial_runs_) running.push_back(run->step_id);
    partial_runs_.clear();
  }
  // Steps in flight end with the abort; wait for them to return.
  const absl::Time deadline = absl::Now() + options_.abort_wait;
  for (int64_t step : running) CleanupStep(step, deadline);
  {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithDeadline(
        absl::Condition(
            +[](absl::flat_hash_set<int64_t>* r) { return r->empty(); },
            &running_),
        deadline);
    plans.swap(plans_);
    callables_.clear();
  }
  using Calls = Fanout<tensorflow::DeleteWorkerSessionRequest,
                       tensorflow::DeleteWorkerSessionResponse>;
  auto calls = Calls::Make();
  for (const std::string& task : options_.tasks) {
    absl::StatusOr<WorkerInterface*> worker = options_.workers->GetWorker(task);
    if (!worker.ok()) continue;
    calls->Add(task, *worker).request.set_session_handle(options_.handle);
  }
  calls->Start(&WorkerInterface::DeleteWorkerSessionAsync);
  if (!calls->WaitUntil(absl::Now() + options_.abort_wait)) {
    return absl::DeadlineExceededError(absl::StrCat(
        "CloseSession '", options_.handle, "': ", Tasks(calls->Unanswered()),
        " did not answer DeleteWorkerSession within ",
        absl::FormatDuration(options_.abort_wait),
        "; its session state stays until the task restarts"));
  }
  absl::Status status;
  for (int i = 0; i < calls->size(); ++i) status.Update(calls->call(i).status);
  return status;
}

int MasterSession::num_registered_plans() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(plans_.size());
}

}  // namespace weft
