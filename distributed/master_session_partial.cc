// MasterSession: partial runs (PartialRunSetup, then fetches and feeds a call at a time; master_session_parts.h).
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

using master_session_internal::InitRunGraph;
using master_session_internal::TakeFetched;
using master_session_internal::CallStatus;
using master_session_internal::Tasks;
using master_session_internal::ClosedError;
using master_session_internal::CheckFeed;
using master_session_internal::AddFetched;

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

}  // namespace weft
