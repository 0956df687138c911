// Worker: RecvTensor for peers and receives within this task (worker_parts.h).
#include "distributed/worker.h"

#include "distributed/worker_parts.h"

namespace weft {

using worker_internal::OnTask;

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
