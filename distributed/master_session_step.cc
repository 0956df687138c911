// MasterSession: a step's lifecycle (prepare, RunGraph on every task, end and clean up), blocking and asynchronous (master_session_parts.h).
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
using master_session_internal::IsDerived;
using master_session_internal::Tasks;
using master_session_internal::ClosedError;
using master_session_internal::StartCleanup;
using master_session_internal::CancelledByClient;
using master_session_internal::AddFetched;
using master_session_internal::NamedRun;

void MasterSession::CleanupStep(int64_t step_id, absl::Time wait_until,
                                const Plan* plan) {
  std::vector<std::string> tasks;
  for (const std::string& task : options_.tasks) {
    if (plan != nullptr && plan->graph_handles.count(task) == 0) continue;
    tasks.push_back(task);
  }
  StartCleanup(options_.workers, tasks, step_id)->WaitUntil(wait_until);
}

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

}  // namespace weft
