#include "distributed/step_rendezvous.h"

#include <algorithm>
#include <atomic>
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
      task_(std::move(task)),
      devices_(devices),
      workers_(workers) {}

StepRendezvous::~StepRendezvous() {
  StartAbort(absl::AbortedError(
      absl::StrCat("step ", step_id_, " ended on task ", task_)));
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
        step_id_, " on task ", task_));
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
  if (*src_task == task_) {
    local_.RecvAsync(key, std::move(done));
    return;
  }
  RecvRemote(*parsed, key, *src_task, std::move(done));
}

void StepRendezvous::RecvRemote(const RendezvousKey& parsed,
                                const std::string& key,
                                const std::string& src_task,
                                DoneCallback done) {
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
  absl::StatusOr<WorkerInterface*> worker = workers_->GetWorker(src_task);
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
                                         WorkerCache* workers)
    : devices_(devices), task_(std::move(task)), workers_(workers) {}

StepRendezvousTable::~StepRendezvousTable() { CleanupAll(); }

absl::StatusOr<std::shared_ptr<StepRendezvous>>
StepRendezvousTable::FindOrCreate(int64_t step_id) {
  absl::MutexLock lock(&mu_);
  auto it = steps_.find(step_id);
  if (it != steps_.end()) return it->second;
  if (ended_.contains(step_id)) {
    return absl::AbortedError(absl::StrCat(
        "step ", step_id, " has already ended on task ", task_,
        " (the master cleaned it up, or aborted it)"));
  }
  if (static_cast<int>(steps_.size()) >= kMaxSteps) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "task ", task_, " already holds the rendezvous of ", kMaxSteps,
        " steps; refusing step ", step_id,
        " (is a master not sending CleanupGraph after its steps?)"));
  }
  auto rv = std::make_shared<StepRendezvous>(step_id, task_, devices_,
                                             workers_);
  steps_.emplace(step_id, rv);
  return rv;
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
    rv = std::move(it->second);
    steps_.erase(it);
  }
  rv->StartAbort(absl::AbortedError(absl::StrCat(
      "step ", step_id, " was cleaned up on task ", task_,
      " (the step ended or was cancelled)")));
}

int StepRendezvousTable::PendingFrom(int64_t first_step_id) const {
  absl::MutexLock lock(&mu_);
  int pending = 0;
  for (const auto& [id, rv] : steps_) {
    if (id >= first_step_id) pending += rv->pending();
  }
  return pending;
}

void StepRendezvousTable::CleanupAll() {
  absl::flat_hash_map<int64_t, std::shared_ptr<StepRendezvous>> steps;
  {
    absl::MutexLock lock(&mu_);
    steps.swap(steps_);
  }
  for (auto& [id, rv] : steps) {
    rv->StartAbort(absl::AbortedError(absl::StrCat(
        "step ", id, " was cleaned up on task ", task_)));
  }
}

int StepRendezvousTable::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(steps_.size());
}

}  // namespace weft
