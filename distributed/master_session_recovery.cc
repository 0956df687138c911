// MasterSession: tasks that restarted under a session, found after a failed step and given the session's graphs again (master_session_parts.h).
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
  // The restarted tasks lost their graphs with their old process; the
  // handles of those are not sent to the new one.
  for (const auto& [key, plan] : stale) Deregister(*plan, restarted);
  return restarted;
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

}  // namespace weft
