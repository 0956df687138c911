#include "distributed/local_master.h"

#include <functional>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "distributed/master.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/thread_pool.h"

namespace weft {
namespace {

using Done = std::function<void(absl::Status)>;

// Starts a step with `start` and waits for its `done`, at most `timeout`;
// past it the step is cancelled and, once it has ended, the call is
// DEADLINE_EXCEEDED. The step always ends before this returns, so the
// request and response it uses may live on the caller's stack.
absl::Status WaitForStep(
    absl::string_view method, const std::string& master, absl::Duration timeout,
    const std::function<void(std::shared_ptr<CancellationManager>, Done)>& start) {
  auto cancel = std::make_shared<CancellationManager>();
  absl::Notification finished;
  absl::Status status;
  start(cancel, [&](absl::Status s) {
    status = std::move(s);
    finished.Notify();
  });
  if (finished.WaitForNotificationWithTimeout(timeout)) return status;
  cancel->StartCancel();
  finished.WaitForNotification();  // the master bounds its abort
  return absl::DeadlineExceededError(absl::StrCat(
      method, " on ", master, " did not answer within ",
      absl::FormatDuration(timeout),
      "; the step was cancelled on every task (raise the call's timeout, or "
      "RunOptions.timeout_in_ms, for longer steps)"));
}

}  // namespace

LocalMaster::LocalMaster(Master* master, ThreadPool* pool,
                         const std::string& task)
    : master_(master),
      pool_(pool),
      task_(task),
      name_(absl::StrCat("the in-process master of ", task)) {}

void LocalMaster::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  mu_.Await(absl::Condition(
      +[](int* n) { return *n == 0; }, &in_flight_));
}

template <typename Call>
absl::Status LocalMaster::Guarded(absl::string_view method, Call call) {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) {
      return absl::UnavailableError(absl::StrCat(
          method, ": task ", task_,
          " has shut down; its master takes no more calls"));
    }
    ++in_flight_;
  }
  absl::Status s = call();
  absl::MutexLock lock(&mu_);
  --in_flight_;
  return s;
}

absl::Status LocalMaster::CreateSession(
    const MasterCall&, const tensorflow::CreateSessionRequest& request,
    tensorflow::CreateSessionResponse* response) {
  return Guarded("CreateSession",
                 [&] { return master_->CreateSession(request, response); });
}

absl::Status LocalMaster::ExtendSession(
    const MasterCall&, const tensorflow::ExtendSessionRequest& request,
    tensorflow::ExtendSessionResponse* response) {
  return Guarded("ExtendSession", [&] { return master_->ExtendSession(request, response); });
}

absl::Status LocalMaster::PartialRunSetup(
    const MasterCall&, const tensorflow::PartialRunSetupRequest& request,
    tensorflow::PartialRunSetupResponse* response) {
  return Guarded("PartialRunSetup", [&] { return master_->PartialRunSetup(request, response); });
}

absl::Status LocalMaster::RunStep(const MasterCall& call,
                                  const tensorflow::RunStepRequest& request,
                                  tensorflow::RunStepResponse* response) {
  return Guarded("RunStep", [&] {
    return WaitForStep(
        "RunStep", name_, call.timeout,
        [&](std::shared_ptr<CancellationManager> cancel, Done done) {
          master_->RunStepAsync(request, response, pool_, std::move(done),
                                std::move(cancel));
        });
  });
}

absl::Status LocalMaster::CloseSession(
    const MasterCall&, const tensorflow::CloseSessionRequest& request,
    tensorflow::CloseSessionResponse* response) {
  return Guarded("CloseSession", [&] { return master_->CloseSession(request, response); });
}

absl::Status LocalMaster::ListDevices(
    const MasterCall&, const tensorflow::ListDevicesRequest& request,
    tensorflow::ListDevicesResponse* response) {
  return Guarded("ListDevices", [&] { return master_->ListDevices(request, response); });
}

absl::Status LocalMaster::Reset(const MasterCall&,
                                const tensorflow::ResetRequest& request,
                                tensorflow::ResetResponse* response) {
  return Guarded("Reset", [&] { return master_->Reset(request, response); });
}

absl::Status LocalMaster::MakeCallable(
    const MasterCall&, const tensorflow::MakeCallableRequest& request,
    tensorflow::MakeCallableResponse* response) {
  return Guarded("MakeCallable", [&] { return master_->MakeCallable(request, response); });
}

absl::Status LocalMaster::RunCallable(
    const MasterCall& call, const tensorflow::RunCallableRequest& request,
    tensorflow::RunCallableResponse* response) {
  return Guarded("RunCallable", [&] {
    if (call.timeout == absl::InfiniteDuration()) {
      return master_->RunCallable(request, response);
    }
    // Master::RunCallable blocks: it runs on the pool while this thread
    // keeps the deadline.
    return WaitForStep(
        "RunCallable", name_, call.timeout,
        [&](std::shared_ptr<CancellationManager> cancel, Done done) {
          pool_->Schedule([this, &request, response, cancel = std::move(cancel),
                           done = std::move(done)] {
            done(master_->RunCallable(request, response, cancel.get()));
          });
        });
  });
}

absl::Status LocalMaster::ReleaseCallable(
    const MasterCall&, const tensorflow::ReleaseCallableRequest& request,
    tensorflow::ReleaseCallableResponse* response) {
  return Guarded("ReleaseCallable", [&] { return master_->ReleaseCallable(request, response); });
}

}  // namespace weft
