#include "runtime/multi_device_step.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "runtime/core/rendezvous.h"

namespace weft {
namespace {

struct StepState {
  absl::Mutex mu;
  int pending = 0;
  absl::Status status;
  CancellationToken token = kInvalidToken;
  std::function<void(absl::Status)> done;
};

}  // namespace

void RunMultiDeviceStep(const std::vector<Executor*>& executors,
                        const Executor::StepArgs& args, ThreadPool* pool,
                        std::function<void(absl::Status)> done) {
  if (executors.empty()) {
    done(absl::OkStatus());
    return;
  }
  Rendezvous* rendezvous = args.rendezvous;
  CancellationManager* cancellation = args.cancellation;
  auto* state = new StepState;
  state->pending = static_cast<int>(executors.size());
  state->done = std::move(done);
  // Whatever cancels the step (a failed node in any partition, a deadline,
  // Close) also wakes the receivers blocked in the rendezvous.
  state->token = cancellation->Register([rendezvous] {
    rendezvous->StartAbort(absl::CancelledError(
        "step cancelled: another partition of the step failed or the step "
        "was cancelled"));
  });
  if (state->token == kInvalidToken) {
    rendezvous->StartAbort(absl::CancelledError("step cancelled before start"));
  }
  auto finished = [state, rendezvous, cancellation](absl::Status s) {
    if (!s.ok()) {
      // Normally done already by the failing executor (through the callback
      // above). CANCELLED, so receivers elsewhere do not repeat the error.
      cancellation->StartCancel();
      rendezvous->StartAbort(absl::CancelledError(absl::StrCat(
          "step aborted because a partition failed: ", s.message())));
    }
    bool last;
    {
      absl::MutexLock lock(&state->mu);
      if (!s.ok() && (state->status.ok() || (absl::IsCancelled(state->status) &&
                                             !absl::IsCancelled(s)))) {
        state->status = s;
      }
      last = --state->pending == 0;
    }
    if (!last) return;
    if (state->token != kInvalidToken) cancellation->Deregister(state->token);
    std::function<void(absl::Status)> user_done = std::move(state->done);
    absl::Status status = std::move(state->status);
    delete state;
    user_done(std::move(status));
  };
  // A copy: once the last executor has started, the step may finish and its
  // caller free `executors` (a session's prepared run) before this loop ends.
  const std::vector<Executor*> execs = executors;
  for (size_t i = 0; i < execs.size(); ++i) {
    Executor* exec = execs[i];
    auto start = [exec, args, finished] { exec->RunAsync(args, finished); };
    if (pool != nullptr && i + 1 < execs.size()) {
      pool->Schedule(std::move(start));
    } else {
      start();
    }
  }
}

}  // namespace weft
