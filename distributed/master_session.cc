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

namespace weft {

struct MasterSession::Plan {
  RunPlan plan;
  std::map<std::string, std::string> graph_handles;  // task -> handle
  std::vector<std::string> recv_keys;  // plan.fetch_keys without repeats
};

namespace {

// What every RunGraph of a step carries: the session, graph and step, and
// errors in the response body.
void InitRunGraph(const std::string& session, const std::string& graph, int64_t step_id,
                  tensorflow::RunGraphRequest* request) {
  request->set_session_handle(session);
  request->set_create_worker_session_called(true);
  request->set_graph_handle(graph);
  request->set_step_id(step_id);
  request->set_store_errors_in_response_body(true);
}

// The values of `keys` in a RunGraph's answer from `task`, in order;
// INTERNAL naming the key (and `what`: the step) when one is missing.
absl::Status TakeFetched(const tensorflow::RunGraphResponse& response,
                         const std::vector<std::string>& keys, const std::string& task,
                         const std::string& what,
                         std::vector<tensorflow::TensorProto>* fetched) {
  absl::flat_hash_map<std::string, const tensorflow::TensorProto*> by_key;
  for (const tensorflow::NamedTensorProto& t : response.recv()) {
    by_key[t.name()] = &t.tensor();
  }
  for (const std::string& key : keys) {
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      return absl::InternalError(absl::StrCat(
          "task ", task, " returned no value for the fetch under '", key, "' in ", what));
    }
    fetched->push_back(*it->second);
  }
  return absl::OkStatus();
}

// The code and message a RunGraph call ended with: the call's own status,
// or the one its response body carries.
absl::Status CallStatus(const absl::Status& rpc,
                        const tensorflow::RunGraphResponse& response) {
  if (!rpc.ok()) return rpc;
  if (response.status_code() == tensorflow::error::OK) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(response.status_code()),
                      response.status_error_message());
}

// An error that another task's failure caused (the step was aborted or
// cancelled there because it failed here): reported only when no cause is.
bool IsDerived(const absl::Status& s) {
  return absl::IsAborted(s) || absl::IsCancelled(s);
}

std::string Tasks(const std::deque<std::string>& tasks) {
  return absl::StrJoin(tasks, ", ");
}

absl::Status ClosedError(const std::string& handle) {
  return absl::AbortedError(absl::StrCat(
      "session '", handle, "' is closed (create a new session)"));
}



// A feed checked against the plan (dtype, shape, content size) without
// decoding it when its values come as tensor_content, as clients send large
// ones: the task that reads the feed decodes it, once. Small typed-field
// values are decoded here, which checks them fully.
// `name` is the feed as the client named it.
absl::Status CheckFeed(const std::string& name,
                       const tensorflow::TensorProto& proto,
                       const FeedSpec& spec) {
  const std::string context = absl::StrCat("feed '", name, "'");
  const DataType dtype = proto.dtype();
  if (proto.tensor_content().empty() || dtype == DT_INVALID ||
      dtype == DT_STRING || dtype == DT_RESOURCE ||
      !DataTypeIsSupported(dtype)) {
    absl::StatusOr<Tensor> value = TensorFromProto(proto, CpuAllocator());
    if (!value.ok()) return WithContext(value.status(), context);
    return spec.Check(*value);
  }
  absl::StatusOr<TensorShape> shape = TensorShape::FromProto(proto.tensor_shape());
  if (!shape.ok()) return WithContext(shape.status(), context);
  const size_t size = DataTypeSize(dtype);
  const size_t bytes = proto.tensor_content().size();
  if (size == 0 || bytes % size != 0 ||
      bytes / size != static_cast<uint64_t>(shape->num_elements())) {
    return absl::InvalidArgumentError(absl::StrCat(
        context, ": TensorProto tensor_content has ", bytes, " bytes but shape ",
        shape->DebugString(), " of ", DataTypeString(dtype), " needs ",
        shape->num_elements(), " values of ", size, " bytes"));
  }
  return spec.Check(dtype, *shape);
}

}  // namespace

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

absl::StatusOr<std::shared_ptr<const MasterSession::Plan>>
MasterSession::GetOrRegister(const std::shared_ptr<const SessionGraph>& graph,
                             const RunSignature& signature) {
  const std::string key = signature.Key();
  {
    absl::MutexLock lock(&mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
  }
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const Plan> plan,
                        Register(*graph, signature));
  std::shared_ptr<const Plan> unused;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) {
      unused = plan;
      status = ClosedError(options_.handle);
    } else {
      // Another step may have registered the same signature meanwhile.
      auto [it, inserted] = plans_.emplace(key, plan);
      if (!inserted) unused = std::exchange(plan, it->second);
    }
  }
  if (unused != nullptr) Deregister(*unused);
  WEFT_RETURN_IF_ERROR(status);
  return plan;
}

absl::StatusOr<std::shared_ptr<const MasterSession::Plan>>
MasterSession::Register(const SessionGraph& graph,
                        const RunSignature& signature) {
  ClusterPlacement where;
  {
    absl::MutexLock lock(&mu_);
    where.devices = devices_;
  }
  where.client_device = options_.client_device;
  where.allow_soft_placement = options_.config.allow_soft_placement();
  where.ops = options_.ops;
  where.kernels = options_.kernels;
  auto plan = std::make_shared<Plan>();
  WEFT_ASSIGN_OR_RETURN(plan->plan, PlanRun(*graph.graph, signature, where));
  absl::flat_hash_set<std::string> seen;
  for (const std::string& key : plan->plan.fetch_keys) {
    if (seen.insert(key).second) plan->recv_keys.push_back(key);
  }

  // The worker sessions again (idempotent): a task collects a worker
  // session no call has used for its session GC time, and a new Run
  // signature may be the first to reach a task since.
  std::vector<std::string> plan_tasks;
  for (const auto& [task, partition] : plan->plan.partitions) {
    plan_tasks.push_back(task);
  }
  WEFT_RETURN_IF_ERROR(CreateWorkerSessions(plan_tasks));

  using Calls = Fanout<tensorflow::RegisterGraphRequest,
                       tensorflow::RegisterGraphResponse>;
  auto calls = Calls::Make();
  for (auto& [task, partition] : plan->plan.partitions) {
    WEFT_ASSIGN_OR_RETURN(WorkerInterface * worker,
                          options_.workers->GetWorker(task));
    auto& call = calls->Add(task, worker);
    call.request.set_session_handle(options_.handle);
    call.request.set_create_worker_session_called(true);
    *call.request.mutable_graph_def() = partition;
    *call.request.mutable_graph_options() = options_.config.graph_options();
    *call.request.mutable_config_proto() = options_.config;
  }
  calls->Start(&WorkerInterface::RegisterGraphAsync);
  absl::Status status;
  if (!calls->WaitUntil(absl::Now() + options_.call_timeout)) {
    status = absl::DeadlineExceededError(absl::StrCat(
        "RegisterGraph: no answer within ",
        absl::FormatDuration(options_.call_timeout), " from ",
        Tasks(calls->Unanswered()), " (is the task stuck? see its log)"));
  }
  for (int i = 0; i < calls->size(); ++i) {
    if (!calls->finished(i)) continue;
    auto& call = calls->call(i);
    if (call.status.ok()) {
      plan->graph_handles[call.task] = call.response.graph_handle();
    } else {
      status.Update(call.status);
    }
  }
  if (!status.ok()) {
    Deregister(*plan);  // what did register
    return status;
  }
  return std::shared_ptr<const Plan>(std::move(plan));
}

void MasterSession::Deregister(const Plan& plan) {
  using Calls = Fanout<tensorflow::DeregisterGraphRequest,
                       tensorflow::DeregisterGraphResponse>;
  auto calls = Calls::Make();
  for (const auto& [task, handle] : plan.graph_handles) {
    absl::StatusOr<WorkerInterface*> worker = options_.workers->GetWorker(task);
    if (!worker.ok()) continue;
    auto& call = calls->Add(task, *worker);
    call.request.set_session_handle(options_.handle);
    call.request.set_create_worker_session_called(true);
    call.request.set_graph_handle(handle);
  }
  calls->Start(&WorkerInterface::DeregisterGraphAsync);
  // Not awaited: deleting the worker session drops the graphs anyway.
}

namespace {

using CleanupCalls =
    Fanout<tensorflow::CleanupGraphRequest, tensorflow::CleanupGraphResponse>;

// CleanupGraph of `step_id` sent to `tasks` (those `workers` reaches).
std::shared_ptr<CleanupCalls> StartCleanup(WorkerCache* workers,
                                           const std::vector<std::string>& tasks,
                                           int64_t step_id) {
  auto calls = CleanupCalls::Make();
  for (const std::string& task : tasks) {
    absl::StatusOr<WorkerInterface*> worker = workers->GetWorker(task);
    if (!worker.ok()) continue;
    calls->Add(task, *worker).request.set_step_id(step_id);
  }
  calls->Start(&WorkerInterface::CleanupGraphAsync);
  return calls;
}

absl::Status CancelledByClient(int64_t step_id) {
  return absl::CancelledError(absl::StrCat(
      "the client cancelled the call, or its deadline passed; step ", step_id,
      " was aborted on every task"));
}

}  // namespace

void MasterSession::CleanupStep(int64_t step_id, absl::Time wait_until,
                                const Plan* plan) {
  std::vector<std::string> tasks;
  for (const std::string& task : options_.tasks) {
    if (plan != nullptr && plan->graph_handles.count(task) == 0) continue;
    tasks.push_back(task);
  }
  StartCleanup(options_.workers, tasks, step_id)->WaitUntil(wait_until);
}

struct MasterSession::Step {
  using Calls =
      Fanout<tensorflow::RunGraphRequest, tensorflow::RunGraphResponse>;
  int64_t id = 0;
  int64_t timeout_ms = 0;  // 0: none
  absl::Time deadline = absl::InfiniteFuture();
  int client = -1;  // the call to the client task; -1: none
  std::shared_ptr<Calls> calls = Calls::Make();
  // The caller's cancellation (its client went away), and this step's
  // registration there; deregistered by EndStep.
  CancellationManager* cancel = nullptr;
  CancellationToken token = kInvalidToken;
};

int64_t MasterSession::StepTimeoutMs(const tensorflow::RunOptions& options) const {
  const int64_t timeout_ms = options.timeout_in_ms();
  return timeout_ms > 0 ? timeout_ms : options_.config.operation_timeout_in_ms();
}

absl::StatusOr<std::shared_ptr<MasterSession::Step>> MasterSession::PrepareStep(
    const Plan& plan, const std::vector<const tensorflow::TensorProto*>& feeds,
    const tensorflow::RunOptions& options, CancellationManager* cancel) {
  auto step = std::make_shared<Step>();
  step->id = NewStepId();
  step->timeout_ms = std::max<int64_t>(StepTimeoutMs(options), 0);
  if (step->timeout_ms > 0) {
    step->deadline = absl::Now() + absl::Milliseconds(step->timeout_ms);
  }
  Step::Calls& calls = *step->calls;
  for (const auto& [task, handle] : plan.graph_handles) {
    WEFT_ASSIGN_OR_RETURN(WorkerInterface* worker,
                          options_.workers->GetWorker(task));
    if (task == plan.plan.client_task) step->client = calls.size();
    tensorflow::RunGraphRequest& request = calls.Add(task, worker).request;
    InitRunGraph(options_.handle, handle, step->id, &request);
    if (options.trace_level() != tensorflow::RunOptions::NO_TRACE) {
      request.mutable_exec_opts()->set_record_timeline(true);
      request.mutable_exec_opts()->set_record_costs(true);
    }
    if (task == plan.plan.client_task) {
      for (size_t i = 0; i < feeds.size(); ++i) {
        tensorflow::NamedTensorProto* send = request.add_send();
        send->set_name(plan.plan.feed_keys[i]);
        *send->mutable_tensor() = *feeds[i];
      }
      for (const std::string& key : plan.recv_keys) request.add_recv_key(key);
    }
  }
  // Without a partition on the client task nothing reads the feeds (the
  // step does not need them, as a feed TensorFlow accepts and ignores).
  if (step->client < 0 && !plan.recv_keys.empty()) {
    return absl::InternalError(absl::StrCat(
        "the plan has fetches but no partition on the client task ",
        plan.plan.client_task));
  }
  // Errors come back in the response body (store_errors_in_response_body).
  calls.set_body_failed([](const tensorflow::RunGraphResponse& r) {
    return r.status_code() != tensorflow::error::OK;
  });
  if (cancel != nullptr) {
    // A client that goes away (or whose deadline passes) aborts the step
    // on every task, as the master itself would: without waiting, since
    // the cancellation may come on a transport's thread.
    std::vector<std::string> tasks;
    for (const auto& [task, handle] : plan.graph_handles) tasks.push_back(task);
    step->cancel = cancel;
    step->token = cancel->Register(
        [workers = options_.workers, tasks = std::move(tasks), id = step->id] {
          StartCleanup(workers, tasks, id);
        });
    if (step->token == kInvalidToken) return CancelledByClient(step->id);
  }
  absl::MutexLock lock(&mu_);
  if (closed_) {
    if (cancel != nullptr) cancel->Deregister(step->token);
    return ClosedError(options_.handle);
  }
  running_.insert(step->id);
  return step;
}

absl::Status MasterSession::EndStep(const Plan& plan, const Step& step,
                                    bool all_done, bool cleanup,
                                    const tensorflow::RunOptions& options,
                                    std::vector<tensorflow::TensorProto>* fetched,
                                    tensorflow::RunMetadata* metadata) {
  Step::Calls* const calls = step.calls.get();
  if (step.cancel != nullptr) step.cancel->Deregister(step.token);
  bool ended = true;
  std::deque<std::string> running;  // when the step was aborted
  if (all_done) {
    // Nothing waits on the step any more: drop its state without waiting,
    // on the tasks it ran on (the others have none).
    if (cleanup) CleanupStep(step.id, absl::InfinitePast(), &plan);
  } else {
    // A task failed or the deadline passed: abort the step everywhere, so
    // the others stop waiting for tensors that will not come.
    running = calls->Unanswered();
    const absl::Time abort_deadline = absl::Now() + options_.abort_wait;
    CleanupStep(step.id, abort_deadline);
    ended = calls->WaitUntil(abort_deadline);
  }
  {
    absl::MutexLock lock(&mu_);
    running_.erase(step.id);
  }
  // The cause of a failure, not the aborts it caused elsewhere.
  absl::Status status;
  absl::Status derived;
  for (int i = 0; i < calls->size() && status.ok(); ++i) {
    if (!calls->finished(i)) continue;
    const absl::Status s =
        CallStatus(calls->call(i).status, calls->call(i).response);
    if (s.ok()) continue;
    if (IsDerived(s)) {
      derived.Update(s);
    } else {
      status = s;
    }
  }
  if (status.ok() && !all_done && absl::Now() >= step.deadline) {
    status = absl::DeadlineExceededError(absl::StrCat(
        "step ", step.id, " did not finish within ", step.timeout_ms,
        " ms (RunOptions.timeout_in_ms / operation_timeout_in_ms) and was "
        "aborted; it was still running on ", Tasks(running)));
  }
  if (status.ok()) status = derived;
  if (!status.ok() && step.cancel != nullptr && step.cancel->IsCancelled()) {
    status = CancelledByClient(step.id);  // what the aborts it caused said
  }
  if (!status.ok()) {
    bool closing;
    {
      absl::MutexLock lock(&mu_);
      closing = closed_;
    }
    // Aborted by CloseSession: TensorFlow's words first (its clients match
    // them), then what the step saw.
    if (closing) {
      status = absl::CancelledError(absl::StrCat(
          "Step was cancelled by an explicit call to `Session::Close()` (step ",
          step.id, " of session '", options_.handle, "': ", status.message(), ")"));
    }
  }
  if (!ended) {
    status = absl::Status(
        status.ok() ? absl::StatusCode::kDeadlineExceeded : status.code(),
        absl::StrCat(status.message(), status.ok() ? "" : "; then ",
                     Tasks(calls->Unanswered()), " did not stop within ",
                     absl::FormatDuration(options_.abort_wait),
                     " of the step's abort (see its log)"));
  }
  WEFT_RETURN_IF_ERROR(status);

  fetched->clear();
  if (step.client >= 0) {
    WEFT_RETURN_IF_ERROR(TakeFetched(calls->call(step.client).response,
                                     plan.plan.fetch_keys, plan.plan.client_task,
                                     absl::StrCat("step ", step.id), fetched));
  }
  if (metadata != nullptr &&
      options.trace_level() != tensorflow::RunOptions::NO_TRACE) {
    // Every task's statistics, one DeviceStepStats per device.
    for (int i = 0; i < calls->size(); ++i) {
      for (const tensorflow::DeviceStepStats& d :
           calls->call(i).response.step_stats().dev_stats()) {
        *metadata->mutable_step_stats()->add_dev_stats() = d;
      }
    }
  }
  if (metadata != nullptr && options.output_partition_graphs()) {
    for (const auto& [task, partition] : plan.plan.partitions) {
      *metadata->add_partition_graphs() = partition;
    }
  }
  return absl::OkStatus();
}

absl::Status MasterSession::RunStep(
    const Plan& plan, const std::vector<const tensorflow::TensorProto*>& feeds,
    const tensorflow::RunOptions& options,
    std::vector<tensorflow::TensorProto>* fetched,
    tensorflow::RunMetadata* metadata, CancellationManager* cancel) {
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<Step> step,
                        PrepareStep(plan, feeds, options, cancel));
  step->calls->Start(&WorkerInterface::RunGraphAsync);
  const bool all_done =
      step->calls->WaitUntil(step->deadline, /*stop_on_error=*/true);
  return EndStep(plan, *step, all_done, /*cleanup=*/true, options, fetched,
                 metadata);
}

std::vector<std::string> MasterSession::RecoverRestartedTasks() {
  using Calls = Fanout<tensorflow::GetStatusRequest, tensorflow::GetStatusResponse>;
  // Every task's devices now. A task that has just come back may still be
  // behind its channel's reconnection backoff (a second at most): asked
  // again for a little longer than that, so a failed step costs at most
  // that much more.
  absl::flat_hash_map<std::string, tensorflow::GetStatusResponse> answers;
  const absl::Time give_up = absl::Now() + absl::Milliseconds(1500);
  for (;;) {
    auto calls = Calls::Make();
    for (const std::string& task : options_.tasks) {
      if (answers.contains(task)) continue;
      absl::StatusOr<WorkerInterface*> worker = options_.workers->GetWorker(task);
      if (worker.ok()) calls->Add(task, *worker);
    }
    if (calls->size() == 0) break;
    calls->Start(&WorkerInterface::GetStatusAsync);
    calls->WaitUntil(give_up);
    for (int i = 0; i < calls->size(); ++i) {
      if (calls->finished(i) && calls->call(i).status.ok()) {
        answers[calls->call(i).task] = calls->call(i).response;
      }
    }
    if (absl::Now() >= give_up) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  absl::flat_hash_map<std::string, uint64_t> known;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& d : devices_) known[d.name()] = d.incarnation();
  }
  std::vector<std::string> restarted;
  absl::flat_hash_map<std::string, tensorflow::DeviceAttributes> fresh;
  for (const auto& [task, response] : answers) {
    bool changed = false;
    for (const auto& d : response.device_attributes()) {
      auto it = known.find(d.name());
      if (it != known.end() && it->second != d.incarnation()) {
        changed = true;
        fresh[d.name()] = d;
      }
    }
    if (changed) restarted.push_back(task);
  }
  if (restarted.empty()) return restarted;
  // A failure here shows again, naming the task, in the next step.
  CreateWorkerSessions(restarted).IgnoreError();
  absl::flat_hash_map<std::string, std::shared_ptr<const Plan>> stale;
  {
    absl::MutexLock lock(&mu_);
    for (auto& d : devices_) {
      auto it = fresh.find(d.name());
      if (it != fresh.end()) d = it->second;
    }
    stale.swap(plans_);
  }
  for (const auto& [key, plan] : stale) Deregister(*plan);
  return restarted;
}


absl::StatusOr<std::shared_ptr<const MasterSession::Plan>>
MasterSession::PlanFor(
    const std::vector<std::pair<std::string, const tensorflow::TensorProto*>>&
        feeds,
    const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets, bool may_register,
    std::vector<const tensorflow::TensorProto*>* values,
    std::vector<size_t>* feed_order) {
  std::shared_ptr<const SessionGraph> graph;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return ClosedError(options_.handle);
    graph = graph_;
  }
  std::vector<std::string> names;
  names.reserve(feeds.size());
  for (const auto& [name, value] : feeds) names.push_back(name);
  WEFT_ASSIGN_OR_RETURN(const RunSignature signature,
                        RunSignature::Make(names, fetches, targets));
  std::shared_ptr<const Plan> plan;
  if (may_register) {
    WEFT_ASSIGN_OR_RETURN(plan, GetOrRegister(graph, signature));
  } else {
    absl::MutexLock lock(&mu_);
    auto it = plans_.find(signature.Key());
    if (it == plans_.end()) return plan;
    plan = it->second;
  }
  if (feed_order != nullptr) *feed_order = signature.feed_order;
  values->assign(feeds.size(), nullptr);
  for (size_t i = 0; i < signature.feed_order.size(); ++i) {
    const auto& [name, proto] = feeds[signature.feed_order[i]];
    // Checked here, so that a bad feed is named as the client named it.
    // (A partial run's setup names its feeds without values yet.)
    if (proto != nullptr) WEFT_RETURN_IF_ERROR(CheckFeed(name, *proto, plan->plan.feeds[i]));
    (*values)[i] = proto;
  }
  return plan;
}

absl::Status MasterSession::AfterFailedStep(absl::Status s) {
  if (s.ok() || absl::IsDeadlineExceeded(s) || absl::IsInvalidArgument(s)) {
    return s;
  }
  const std::vector<std::string> restarted = RecoverRestartedTasks();
  if (restarted.empty()) return s;
  return absl::Status(
      s.code(), absl::StrCat(s.message(), " (", absl::StrJoin(restarted, ", "),
                             " restarted since the session began; the "
                             "session registers its graphs there again, so "
                             "the next step can run: initialise that task's "
                             "variables again first)"));
}

absl::Status MasterSession::RunNamed(
    const std::vector<std::pair<std::string, const tensorflow::TensorProto*>>&
        feeds,
    const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets,
    const tensorflow::RunOptions& options,
    std::vector<tensorflow::TensorProto>* fetched,
    tensorflow::RunMetadata* metadata, CancellationManager* cancel) {
  std::vector<const tensorflow::TensorProto*> values;
  WEFT_ASSIGN_OR_RETURN(
      std::shared_ptr<const Plan> plan,
      PlanFor(feeds, fetches, targets, /*may_register=*/true, &values));
  return AfterFailedStep(
      RunStep(*plan, values, options, fetched, metadata, cancel));
}

namespace {

// A RunStepRequest's parts as RunNamed takes them.
struct NamedRun {
  explicit NamedRun(const tensorflow::RunStepRequest& request)
      : fetches(request.fetch().begin(), request.fetch().end()),
        targets(request.target().begin(), request.target().end()) {
    feeds.reserve(request.feed_size());
    for (const tensorflow::NamedTensorProto& f : request.feed()) {
      feeds.emplace_back(f.name(), &f.tensor());
    }
  }
  std::vector<std::pair<std::string, const tensorflow::TensorProto*>> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
};

void AddFetched(const tensorflow::RunStepRequest& request,
                std::vector<tensorflow::TensorProto>* fetched,
                tensorflow::RunStepResponse* response) {
  for (size_t j = 0; j < fetched->size(); ++j) {
    tensorflow::NamedTensorProto* out = response->add_tensor();
    out->set_name(request.fetch(static_cast<int>(j)));
    *out->mutable_tensor() = std::move((*fetched)[j]);
  }
}

}  // namespace

struct MasterSession::PartialRun {
  std::string handle;
  std::shared_ptr<const Plan> plan;
  int64_t step_id = 0;
  // By the names the setup gave (and their canonical forms): the plan's
  // position, and whether it was fed or fetched already.
  absl::flat_hash_map<std::string, int> feeds, fetches;
  std::vector<bool> fed, fetched;
  int fetches_left = 0;
  bool busy = false;  // a call is in flight
};

absl::Status MasterSession::PartialRunSetup(
    const tensorflow::PartialRunSetupRequest& request,
    tensorflow::PartialRunSetupResponse* response) {
  std::vector<std::pair<std::string, const tensorflow::TensorProto*>> feeds;
  for (const std::string& f : request.feed()) feeds.emplace_back(f, nullptr);
  const std::vector<std::string> fetches(request.fetch().begin(), request.fetch().end());
  if (fetches.empty()) {
    return absl::InvalidArgumentError(
        "PartialRunSetupRequest names no fetch: a partial run ends with the "
        "call that fetches the last of its fetches");
  }
  std::vector<const tensorflow::TensorProto*> values;
  std::vector<size_t> feed_order;
  WEFT_ASSIGN_OR_RETURN(
      std::shared_ptr<const Plan> plan,
      PlanFor(feeds, fetches, {request.target().begin(), request.target().end()},
              /*may_register=*/true, &values, &feed_order));
  auto run = std::make_shared<PartialRun>();
  run->plan = plan;
  run->step_id = NewStepId();
  run->handle = absl::StrCat(run->step_id);
  for (size_t i = 0; i < feed_order.size(); ++i) {
    run->feeds[feeds[feed_order[i]].first] = static_cast<int>(i);
    run->feeds[plan->plan.feeds[i].name] = static_cast<int>(i);
  }
  for (size_t j = 0; j < fetches.size(); ++j) run->fetches[fetches[j]] = static_cast<int>(j);
  run->fed.assign(plan->plan.feeds.size(), false);
  run->fetched.assign(fetches.size(), false);
  run->fetches_left = static_cast<int>(fetches.size());
  std::vector<std::string> tasks;
  for (const auto& [task, handle] : plan->graph_handles) tasks.push_back(task);
  std::vector<tensorflow::TensorProto> none;
  absl::Status s = CallPartial(*run, tasks, /*last=*/false, {}, {},
                               absl::Now() + options_.call_timeout, &none);
  if (!s.ok()) {
    CleanupStep(run->step_id, absl::InfinitePast());
    return s;
  }
  {
    absl::MutexLock lock(&mu_);
    if (closed_) {
      CleanupStep(run->step_id, absl::InfinitePast());
      return ClosedError(options_.handle);
    }
    partial_runs_[run->handle] = run;
  }
  response->set_partial_run_handle(run->handle);
  return absl::OkStatus();
}

absl::Status MasterSession::CallPartial(
    const PartialRun& run, const std::vector<std::string>& tasks, bool last,
    std::vector<std::pair<std::string, const tensorflow::TensorProto*>> sends,
    const std::vector<std::string>& recv_keys, absl::Time deadline,
    std::vector<tensorflow::TensorProto>* fetched) {
  auto calls = Step::Calls::Make();
  int client = -1;
  for (const std::string& task : tasks) {
    auto it = run.plan->graph_handles.find(task);
    if (it == run.plan->graph_handles.end()) continue;
    WEFT_ASSIGN_OR_RETURN(WorkerInterface * worker, options_.workers->GetWorker(task));
    if (task == run.plan->plan.client_task) client = calls->size();
    tensorflow::RunGraphRequest& request = calls->Add(task, worker).request;
    InitRunGraph(options_.handle, it->second, run.step_id, &request);
    request.set_is_partial(true);
    request.set_is_last_partial_run(last);
    if (task == run.plan->plan.client_task) {
      for (const auto& [key, value] : sends) {
        tensorflow::NamedTensorProto* send = request.add_send();
        send->set_name(key);
        *send->mutable_tensor() = *value;
      }
      for (const std::string& key : recv_keys) request.add_recv_key(key);
    }
  }
  if (client < 0 && (!sends.empty() || !recv_keys.empty())) {
    return absl::InternalError(absl::StrCat(
        "the partial run's plan has no partition on the client task ",
        run.plan->plan.client_task));
  }
  calls->set_body_failed([](const tensorflow::RunGraphResponse& r) {
    return r.status_code() != tensorflow::error::OK;
  });
  calls->Start(&WorkerInterface::RunGraphAsync);
  if (!calls->WaitUntil(deadline, /*stop_on_error=*/true)) {
    return absl::DeadlineExceededError(absl::StrCat(
        "partial run '", run.handle, "' (step ", run.step_id, "): ",
        Tasks(calls->Unanswered()), " did not answer in time; the partial run "
        "is aborted"));
  }
  for (int i = 0; i < calls->size(); ++i) {
    if (!calls->finished(i)) continue;
    WEFT_RETURN_IF_ERROR(CallStatus(calls->call(i).status, calls->call(i).response));
  }
  fetched->clear();
  if (client >= 0) {
    WEFT_RETURN_IF_ERROR(TakeFetched(calls->call(client).response, recv_keys,
                                     run.plan->plan.client_task,
                                     absl::StrCat("partial run '", run.handle, "'"), fetched));
  }
  return absl::OkStatus();
}

absl::Status MasterSession::RunPartial(const tensorflow::RunStepRequest& request,
                                       tensorflow::RunStepResponse* response) {
  std::shared_ptr<PartialRun> run;
  std::vector<std::pair<std::string, const tensorflow::TensorProto*>> sends;
  std::vector<std::string> recv_keys;
  std::vector<int> fetch_positions;
  bool last = false;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return ClosedError(options_.handle);
    auto it = partial_runs_.find(request.partial_run_handle());
    if (it == partial_runs_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no partial run '", request.partial_run_handle(), "' in session '",
          options_.handle, "' (it ended, failed, or was never set up)"));
    }
    run = it->second;
    if (run->busy) {
      return absl::FailedPreconditionError(absl::StrCat(
          "partial run '", run->handle, "' already has a call in flight"));
    }
    for (const tensorflow::NamedTensorProto& f : request.feed()) {
      auto p = run->feeds.find(f.name());
      if (p == run->feeds.end() || run->fed[p->second]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "partial run '", run->handle, "': feed '", f.name(), "' ",
            p == run->feeds.end() ? "was not named in its setup" : "was fed already"));
      }
    }
    for (const std::string& f : request.fetch()) {
      auto p = run->fetches.find(f);
      if (p == run->fetches.end() || run->fetched[p->second]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "partial run '", run->handle, "': fetch '", f, "' ",
            p == run->fetches.end() ? "was not named in its setup" : "was fetched already"));
      }
    }
    for (const tensorflow::NamedTensorProto& f : request.feed()) {
      const int i = run->feeds[f.name()];
      WEFT_RETURN_IF_ERROR(CheckFeed(f.name(), f.tensor(), run->plan->plan.feeds[i]));
      run->fed[i] = true;
      sends.emplace_back(run->plan->plan.feed_keys[i], &f.tensor());
    }
    for (const std::string& f : request.fetch()) {
      const int j = run->fetches[f];
      run->fetched[j] = true;
      --run->fetches_left;
      recv_keys.push_back(run->plan->plan.fetch_keys[j]);
    }
    last = run->fetches_left == 0;
    run->busy = true;
  }
  std::vector<std::string> tasks;
  if (last) {
    for (const auto& [task, handle] : run->plan->graph_handles) tasks.push_back(task);
  } else {
    tasks.push_back(run->plan->plan.client_task);
  }
  const int64_t timeout_ms = StepTimeoutMs(request.options());
  std::vector<tensorflow::TensorProto> fetched;
  absl::Status s = CallPartial(
      *run, tasks, last, std::move(sends), recv_keys,
      timeout_ms > 0 ? absl::Now() + absl::Milliseconds(timeout_ms) : absl::InfiniteFuture(),
      &fetched);
  {
    absl::MutexLock lock(&mu_);
    run->busy = false;
    if (!s.ok() || last) partial_runs_.erase(run->handle);
  }
  // After the last call the step's state goes from every task; a failed
  // call aborts the step there.
  if (!s.ok() || last) {
    CleanupStep(run->step_id, s.ok() ? absl::InfinitePast()
                                     : absl::Now() + options_.abort_wait);
  }
  WEFT_RETURN_IF_ERROR(s);
  AddFetched(request, &fetched, response);
  return absl::OkStatus();
}

absl::Status MasterSession::Run(const tensorflow::RunStepRequest& request,
                                tensorflow::RunStepResponse* response,
                                CancellationManager* cancel) {
  if (!request.partial_run_handle().empty()) return RunPartial(request, response);
  const NamedRun run(request);
  std::vector<tensorflow::TensorProto> fetched;
  WEFT_RETURN_IF_ERROR(RunNamed(run.feeds, run.fetches, run.targets,
                                request.options(), &fetched,
                                response->mutable_metadata(), cancel));
  AddFetched(request, &fetched, response);
  return absl::OkStatus();
}

void MasterSession::RunAsync(std::shared_ptr<MasterSession> self,
                             const tensorflow::RunStepRequest& request,
                             tensorflow::RunStepResponse* response,
                             ThreadPool* pool,
                             std::function<void(absl::Status)> done,
                             std::shared_ptr<CancellationManager> cancel) {
  MasterSession* const session = self.get();
  auto blocking = [self, &request, response, done, cancel] {
    done(self->Run(request, response, cancel.get()));
  };
  if (session->StepTimeoutMs(request.options()) > 0 ||
      !request.partial_run_handle().empty()) {
    pool->Schedule(std::move(blocking));  // a deadline to watch, or a partial run
    return;
  }
  std::shared_ptr<const Plan> plan;
  std::vector<const tensorflow::TensorProto*> values;
  {
    const NamedRun run(request);
    absl::StatusOr<std::shared_ptr<const Plan>> found = session->PlanFor(
        run.feeds, run.fetches, run.targets, /*may_register=*/false, &values);
    if (!found.ok()) {
      done(found.status());
      return;
    }
    plan = *std::move(found);
  }
  if (plan == nullptr) {
    pool->Schedule(std::move(blocking));  // the signature's first step
    return;
  }
  absl::StatusOr<std::shared_ptr<Step>> prepared =
      session->PrepareStep(*plan, values, request.options(), cancel.get());
  if (!prepared.ok()) {
    pool->Schedule([self, status = prepared.status(), done] {
      done(self->AfterFailedStep(status));
    });
    return;
  }
  std::shared_ptr<Step> step = *std::move(prepared);
  step->calls->OnSettled(
      /*stop_on_error=*/true,
      [self, plan, step, &request, response, pool, done, cancel](bool clean) {
        if (!clean) {
          // Aborting the step waits for its tasks.
          pool->Schedule([self, plan, step, &request, response, done] {
            std::vector<tensorflow::TensorProto> fetched;
            const bool all_done = step->calls->WaitUntil(absl::InfinitePast());
            absl::Status s = self->AfterFailedStep(self->EndStep(
                *plan, *step, all_done, /*cleanup=*/true, request.options(),
                &fetched, response->mutable_metadata()));
            if (s.ok()) AddFetched(request, &fetched, response);
            done(s);
          });
          return;
        }
        std::vector<tensorflow::TensorProto> fetched;
        const absl::Status s =
            self->EndStep(*plan, *step, /*all_done=*/true, /*cleanup=*/false,
                          request.options(), &fetched,
                          response->mutable_metadata());
        if (s.ok()) {
          AddFetched(request, &fetched, response);
          done(s);
        } else {
          pool->Schedule([self, s, done] { done(self->AfterFailedStep(s)); });
        }
        // After the answer: the client need not wait for it.
        self->CleanupStep(step->id, absl::InfinitePast(), plan.get());
      });
  step->calls->Start(&WorkerInterface::RunGraphAsync);
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
