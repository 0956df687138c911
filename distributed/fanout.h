// Fanout: one WorkerInterface method called on several tasks at once, and a
// bounded wait for the answers. The master's way of talking to its tasks
// (GetStatus, CreateWorkerSession, RegisterGraph, RunGraph, CleanupGraph).
//
//   auto calls = Fanout<RunGraphRequest, RunGraphResponse>::Make();
//   for (...) calls->Add(task, worker).request.set_step_id(id);
//   calls->Start(&WorkerInterface::RunGraphAsync);
//   if (!calls->WaitUntil(deadline, /*stop_on_error=*/true)) { ...abort... }
//
// or, without a waiting thread, calls->OnSettled(true, [](bool clean) {...})
// before Start.
//
// Ownership: a Fanout is shared by its caller and its calls' callbacks, so
// a caller that stops waiting at a deadline may return at once: the
// requests and responses stay alive until the last call has answered.
// Thread safety: Add, OnSettled and Start from one thread, before any wait;
// the accessors after a wait that returned true, in OnSettled's callback
// when it is clean (or, for one call, once finished(i) is true).
#ifndef WEFT_DISTRIBUTED_FANOUT_H_
#define WEFT_DISTRIBUTED_FANOUT_H_

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distributed/worker_interface.h"

namespace weft {

template <typename Request, typename Response>
class Fanout : public std::enable_shared_from_this<Fanout<Request, Response>> {
 public:
  struct Call {
    std::string task;
    WorkerInterface* worker = nullptr;
    Request request;
    Response response;
    absl::Status status;  // valid once finished
    bool finished = false;
  };
  using Method = void (WorkerInterface::*)(const Request*, Response*,
                                           WorkerInterface::Done);

  static std::shared_ptr<Fanout> Make() {
    return std::shared_ptr<Fanout>(new Fanout());
  }

  // A call to make on `worker` (the task named `task`); fill its request.
  Call& Add(std::string task, WorkerInterface* worker) {
    Call& call = calls_.emplace_back();
    call.task = std::move(task);
    call.worker = worker;
    return call;
  }

  // For calls that report errors in the response body: whether `response`
  // does (a failure WaitUntil's stop_on_error stops for).
  void set_body_failed(std::function<bool(const Response&)> body_failed) {
    body_failed_ = std::move(body_failed);
  }

  // Before Start: `settled` runs once, on the thread of the answer that
  // settles the calls: the last one, or with `stop_on_error` the first
  // that failed. Its argument `clean`: every call answered and none failed.
  // (A call that never answers never settles them: give the calls a
  // deadline of their own, or wait with WaitUntil instead.)
  void OnSettled(bool stop_on_error, std::function<void(bool clean)> settled) {
    absl::MutexLock lock(&mu_);
    settle_on_error_ = stop_on_error;
    settled_ = std::move(settled);
  }

  // Starts every call. The callbacks may run before Start returns.
  void Start(Method method) {
    std::function<void(bool)> settled;  // when there is no call
    {
      absl::MutexLock lock(&mu_);
      pending_ = static_cast<int>(calls_.size());
      if (calls_.empty()) settled = std::exchange(settled_, nullptr);
    }
    if (settled) settled(true);
    for (Call& call : calls_) {
      std::shared_ptr<Fanout> self = this->shared_from_this();
      Call* c = &call;
      (call.worker->*method)(&call.request, &call.response,
                             [self, c](absl::Status s) {
                               self->Answered(c, std::move(s));
                             });
    }
  }

  // Waits until every call has answered (true), or until `deadline`, or,
  // with `stop_on_error`, until one has failed (false for both).
  bool WaitUntil(absl::Time deadline, bool stop_on_error = false) {
    absl::MutexLock lock(&mu_);
    auto ready = [this, stop_on_error]() {
      return pending_ == 0 || (stop_on_error && failed_);
    };
    mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
    return pending_ == 0;
  }

  int size() const { return static_cast<int>(calls_.size()); }
  Call& call(int i) { return calls_[i]; }
  bool finished(int i) {
    absl::MutexLock lock(&mu_);
    return calls_[i].finished;
  }
  // The tasks that have not answered yet.
  std::deque<std::string> Unanswered() {
    absl::MutexLock lock(&mu_);
    std::deque<std::string> out;
    for (const Call& c : calls_) {
      if (!c.finished) out.push_back(c.task);
    }
    return out;
  }

 private:
  Fanout() = default;

  void Answered(Call* c, absl::Status s) {
    std::function<void(bool)> settled;
    bool clean = false;
    {
      absl::MutexLock lock(&mu_);
      c->status = std::move(s);
      c->finished = true;
      --pending_;
      if (!c->status.ok() || (body_failed_ && body_failed_(c->response))) {
        failed_ = true;
      }
      if (settled_ && (pending_ == 0 || (settle_on_error_ && failed_))) {
        // Dropped here: it may hold this fanout.
        settled = std::exchange(settled_, nullptr);
        clean = pending_ == 0 && !failed_;
      }
    }
    if (settled) settled(clean);
  }

  std::deque<Call> calls_;  // a deque: Add never moves a started call
  std::function<bool(const Response&)> body_failed_;
  absl::Mutex mu_;
  bool settle_on_error_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void(bool)> settled_ ABSL_GUARDED_BY(mu_);
  int pending_ ABSL_GUARDED_BY(mu_) = 0;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_FANOUT_H_
