#include "distributed/step_rendezvous.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "distributed/task_name.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"

namespace weft {

// One RecvTensor in flight. Whoever finishes first (the answer or an abort)
// calls `done`; the other finds `finished` set and does nothing.
struct StepRendezvous::RemoteCall {
  tensorflow::RecvTensorRequest request;
  RecvTensorResult result;  // written by the answer, read in its callback
  DoneCallback done;
  std::atomic<bool> finished{false};

  void Finish(const absl::Status& status, const Tensor& value, bool is_dead) {
    if (finished.exchange(true)) return;
    DoneCallback d = std::move(done);
    d(status, value, is_dead);
  }
};

StepRendezvous::StepRendezvous(int64_t step_id, std::string task,
                               const DeviceMgr* devices, WorkerCache* workers)
    : step_id_(step_id),
      devices_(devices),
      task_(std::move(task)),
      workers_(workers) {}

StepRendezvous::~StepRendezvous() {
  StartAbort(absl::AbortedError(
      absl::StrCat("step ", step_id_, " ended on task ", task())));
}

void StepRendezvous::Bind(std::string task, std::shared_ptr<WorkerCache> workers) {
  absl::MutexLock lock(&mu_);
  task_ = std::move(task);
  workers_ = workers.get();
  bound_workers_ = std::move(workers);
}

std::string StepRendezvous::task() const {
  absl::MutexLock lock(&mu_);
  return task_;
}

absl::Status StepRendezvous::Send(const std::string& key, const Tensor& value,
                                  bool is_dead) {
  return local_.Send(key, value, is_dead);
}

void StepRendezvous::RecvLocalAsync(const std::string& key,
                                    DoneCallback done) {
  local_.RecvAsync(key, std::move(done));
}

absl::Status StepRendezvous::TakeLocal(const std::string& key, Tensor* value,
                                      bool* is_dead) {
  absl::Status s = local_.Recv(key, absl::ZeroDuration(), value, is_dead);
  if (absl::IsDeadlineExceeded(s)) {
    return absl::NotFoundError(absl::StrCat(
        "nothing was sent under rendezvous key '", key, "' in step ",
        step_id_, " on task ", task()));
  }
  return s;
}

void StepRendezvous::RecvAsync(const std::string& key, DoneCallback done) {
  absl::StatusOr<RendezvousKey> parsed = RendezvousKey::Parse(key);
  if (!parsed.ok()) {
    done(parsed.status(), Tensor(), false);
    return;
  }
  absl::StatusOr<std::string> src_task = TaskOfDevice(parsed->src_device);
  if (!src_task.ok()) {
    done(WithContext(src_task.status(), absl::StrCat("rendezvous key '", key,
                                                     "'")),
         Tensor(), false);
    return;
  }
  WorkerCache* workers;
  {
    absl::MutexLock lock(&mu_);
    workers = *src_task == task_ ? nullptr : workers_;
  }
  if (workers == nullptr) {
    local_.RecvAsync(key, std::move(done));
    return;
  }
  RecvRemote(*parsed, key, *src_task, workers, std::move(done));
}

void StepRendezvous::RecvRemote(const RendezvousKey& parsed,
                                const std::string& key,
                                const std::string& src_task,
                                WorkerCache* workers, DoneCallback done) {
  auto call = std::make_shared<RemoteCall>();
  call->done = std::move(done);
  absl::Status aborted;
  {
    absl::MutexLock lock(&mu_);
    aborted = abort_status_;
    if (aborted.ok()) {
      // Calls that finished are only expired entries: drop them before the
      // vector grows, so a loop receiving every iteration stays bounded by
      // the calls in flight (amortised O(1) per call).
      if (remote_.size() == remote_.capacity()) {
        remote_.erase(std::remove_if(remote_.begin(), remote_.end(),
                                     [](const std::weak_ptr<RemoteCall>& c) {
                                       return c.expired();
                                     }),
                      remote_.end());
      }
      remote_.push_back(call);
    }
  }
  if (!aborted.ok()) {
    call->Finish(aborted, Tensor(), false);
    return;
  }
  // The tensor is parsed into the receiving device's memory.
  absl::StatusOr<Device*> dst = devices_->Lookup(parsed.dst_device);
  Device* receiver = dst.ok() ? *dst : devices_->default_device();
  const std::string what =
      absl::StrCat("receiving '", parsed.tensor_name, "' of ",
                   step_id_ >= kCollectiveStepBase
                       ? absl::StrCat("collective instance ",
                                      step_id_ - kCollectiveStepBase)
                       : absl::StrCat("step ", step_id_),
                   " from task ", src_task, " (RecvTensor)");
  absl::StatusOr<WorkerInterface*> worker = workers->GetWorker(src_task);
  if (!worker.ok()) {
    call->Finish(WithContext(worker.status(), what), Tensor(), false);
    return;
  }
  call->request.set_step_id(step_id_);
  call->request.set_rendezvous_key(key);
  call->result.allocator = receiver->allocator();
  call->result.copy_pool = receiver->intra_op_pool();
  (*worker)->RecvTensorValueAsync(
      &call->request, &call->result, [call, what](absl::Status s) {
        if (!s.ok()) {
          call->Finish(WithContext(s, what), Tensor(), false);
          return;
        }
        call->Finish(absl::OkStatus(), call->result.tensor, call->result.is_dead);
      });
}

void StepRendezvous::StartAbort(const absl::Status& status) {
  local_.StartAbort(status);
  std::vector<std::weak_ptr<RemoteCall>> calls;
  {
    absl::MutexLock lock(&mu_);
    if (abort_status_.ok()) abort_status_ = status;
    calls.swap(remote_);
  }
  for (const std::weak_ptr<RemoteCall>& weak : calls) {
    if (std::shared_ptr<RemoteCall> call = weak.lock()) {
      call->Finish(status, Tensor(), false);
    }
  }
}

StepRendezvousTable::StepRendezvousTable(const DeviceMgr* devices,
                                         std::string task,
                                         WorkerCache* workers,
                                         StepRendezvousLimits limits)
    : devices_(devices),
      task_(std::move(task)),
      workers_(workers),
      limits_(limits) {}

StepRendezvousTable::~StepRendezvousTable() { CleanupAll(); }

absl::StatusOr<std::shared_ptr<StepRendezvous>>
StepRendezvousTable::FindOrCreate(int64_t step_id, StepUse use) {
  std::vector<std::pair<int64_t, Entry>> expired;
  std::vector<std::pair<int64_t, Entry>> evicted;
  absl::StatusOr<std::shared_ptr<StepRendezvous>> result;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = absl::Now();
    TakeUnclaimed(now, std::numeric_limits<int>::max(), &expired);
    result = [&]() -> absl::StatusOr<std::shared_ptr<StepRendezvous>> {
      auto it = steps_.find(step_id);
      if (it != steps_.end()) {
        Entry& e = it->second;
        if (use != StepUse::kPeer && !e.claimed) {
          e.claimed = true;
          --unclaimed_;
        }
        if (use == StepUse::kCollective) e.collective = true;
        if (use == StepUse::kRun) ++e.runs;
        return e.rv;
      }
      if (ended_.contains(step_id)) {
        return absl::AbortedError(absl::StrCat(
            "step ", step_id, " has already ended on task ", task_,
            " (the master cleaned it up, or aborted it)"));
      }
      const int claimed = static_cast<int>(steps_.size()) - unclaimed_;
      if (use == StepUse::kPeer && unclaimed_ >= kMaxUnclaimed) {
        // The oldest goes: a peer's early RecvTensor for a step about to
        // start here is claimed within moments, so a flood of requests
        // for steps that never run evicts its own first.
        TakeUnclaimed(absl::InfiniteFuture(), 1, &evicted);
      }
      if (use != StepUse::kPeer && claimed >= kMaxSteps) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "task ", task_, " already holds the rendezvous of ", kMaxSteps,
            " steps; refusing step ", step_id,
            " (is a master not sending CleanupGraph after its steps?)"));
      }
      Entry e;
      e.rv = std::make_shared<StepRendezvous>(step_id, task_, devices_,
                                              workers_);
      e.claimed = use != StepUse::kPeer;
      e.collective = use == StepUse::kCollective;
      e.runs = use == StepUse::kRun ? 1 : 0;
      if (!e.claimed) {
        ++unclaimed_;
        e.deadline = now + limits_.unclaimed_ttl;
        unclaimed_expiry_.emplace_back(e.deadline, step_id);
      }
      std::shared_ptr<StepRendezvous> rv = e.rv;
      steps_.emplace(step_id, std::move(e));
      return rv;
    }();
  }
  AbortExpired(expired);
  for (auto& [id, e] : evicted) {
    e.rv->StartAbort(absl::AbortedError(absl::StrCat(
        "no step ", id, " started on task ", task_, " before peers asked for ",
        kMaxUnclaimed, " newer steps that have not started here either; "
        "dropped the oldest")));
  }
  return result;
}

void StepRendezvousTable::RunEnded(int64_t step_id) {
  absl::MutexLock lock(&mu_);
  auto it = steps_.find(step_id);
  if (it == steps_.end()) return;
  Entry& e = it->second;
  if (e.runs > 0 && --e.runs == 0) e.deadline = absl::Now() + limits_.idle_ttl;
}

void StepRendezvousTable::TakeUnclaimed(
    absl::Time until, int most, std::vector<std::pair<int64_t, Entry>>* out) {
  // Unclaimed deadlines enter the queue in time order.
  int taken = 0;
  while (taken < most && !unclaimed_expiry_.empty() &&
         unclaimed_expiry_.front().first <= until) {
    const auto [deadline, step_id] = unclaimed_expiry_.front();
    unclaimed_expiry_.pop_front();
    auto it = steps_.find(step_id);
    if (it == steps_.end() || it->second.claimed ||
        it->second.deadline != deadline) {
      continue;  // claimed or cleaned up since
    }
    --unclaimed_;
    out->emplace_back(step_id, std::move(it->second));
    steps_.erase(it);
    ++taken;
  }
}

void StepRendezvousTable::TakeIdle(
    absl::Time now, std::vector<std::pair<int64_t, Entry>>* expired) {
  for (auto it = steps_.begin(); it != steps_.end();) {
    const Entry& e = it->second;
    if (e.claimed && !e.collective && e.runs == 0 && e.deadline <= now) {
      expired->emplace_back(it->first, std::move(it->second));
      steps_.erase(it++);
    } else {
      ++it;
    }
  }
}

void StepRendezvousTable::AbortExpired(
    std::vector<std::pair<int64_t, Entry>>& expired) {
  for (auto& [step_id, e] : expired) {
    e.rv->StartAbort(absl::AbortedError(
        e.claimed
            ? absl::StrCat("step ", step_id, " on task ", task_,
                           " was forgotten ",
                           absl::FormatDuration(limits_.idle_ttl),
                           " after it ended here: no master cleaned it up")
            : absl::StrCat("no step ", step_id, " ran on task ", task_,
                           " within ",
                           absl::FormatDuration(limits_.unclaimed_ttl),
                           " of a peer's RecvTensor for it")));
  }
}

void StepRendezvousTable::CollectExpired(absl::Time now) {
  std::vector<std::pair<int64_t, Entry>> expired;
  {
    absl::MutexLock lock(&mu_);
    TakeUnclaimed(now, std::numeric_limits<int>::max(), &expired);
    TakeIdle(now, &expired);
  }
  AbortExpired(expired);
}

void StepRendezvousTable::Cleanup(int64_t step_id) {
  std::shared_ptr<StepRendezvous> rv;
  {
    absl::MutexLock lock(&mu_);
    if (ended_.insert(step_id).second) {
      ended_order_.push_back(step_id);
      if (static_cast<int>(ended_order_.size()) > kMaxEnded) {
        ended_.erase(ended_order_.front());
        ended_order_.pop_front();
      }
    }
    auto it = steps_.find(step_id);
    if (it == steps_.end()) return;
    if (!it->second.claimed) --unclaimed_;
    rv = std::move(it->second.rv);
    steps_.erase(it);
  }
  rv->StartAbort(absl::AbortedError(absl::StrCat(
      "step ", step_id, " was cleaned up on task ", task_,
      " (the step ended or was cancelled)")));
}

int StepRendezvousTable::PendingFrom(int64_t first_step_id) const {
  absl::MutexLock lock(&mu_);
  int pending = 0;
  for (const auto& [id, e] : steps_) {
    if (id >= first_step_id) pending += e.rv->pending();
  }
  return pending;
}

void StepRendezvousTable::CleanupAll() {
  absl::flat_hash_map<int64_t, Entry> steps;
  {
    absl::MutexLock lock(&mu_);
    steps.swap(steps_);
    unclaimed_ = 0;
    unclaimed_expiry_.clear();
  }
  for (auto& [id, e] : steps) {
    e.rv->StartAbort(absl::AbortedError(absl::StrCat(
        "step ", id, " was cleaned up on task ", task_)));
  }
}

int StepRendezvousTable::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(steps_.size());
}

int StepRendezvousTable::unclaimed() const {
  absl::MutexLock lock(&mu_);
  return unclaimed_;
}

}  // namespace weft
