// MasterSession: a run's partitions registered on its tasks, once per signature (master_session_parts.h).
#include "distributed/master_session.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "absl/algorithm/container.h"
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
using master_session_internal::CheckFeed;

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

void MasterSession::Deregister(const Plan& plan,
                               const std::vector<std::string>& skip) {
  using Calls = Fanout<tensorflow::DeregisterGraphRequest,
                       tensorflow::DeregisterGraphResponse>;
  auto calls = Calls::Make();
  for (const auto& [task, handle] : plan.graph_handles) {
    if (absl::c_linear_search(skip, task)) continue;
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

}  // namespace weft
