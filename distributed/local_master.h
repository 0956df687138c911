// LocalMaster: MasterInterface (distributed/master_interface.h) over a
// Master in the same process: the protos are handed over, never
// serialised, and no socket is involved. What a trainer or a test uses to
// drive its own task's master without a loopback RPC per step.
//
//   LocalMaster local(&master, &pool, "/job:worker/replica:0/task:0");
//   std::unique_ptr<Session> s = NewClientSession(
//       std::shared_ptr<MasterInterface>(&local, [](auto*) {}), options);
//
// A step's timeout (MasterCall::timeout) cancels it on every task, as a
// gRPC client's deadline does; a RunStep holds no thread while the step
// runs, a RunCallable with a finite timeout runs on `pool` while the caller
// waits.
// Ownership: `master` and `pool` are borrowed and must outlive this object,
// or at least its Close: after Close every call is UNAVAILABLE naming the
// task, so an owner (GrpcServer) may destroy the master while callers
// still hold this object.
// Thread safety: thread-safe, as Master is.
#ifndef WEFT_DISTRIBUTED_LOCAL_MASTER_H_
#define WEFT_DISTRIBUTED_LOCAL_MASTER_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "distributed/master_interface.h"

namespace weft {

class Master;
class ThreadPool;

class LocalMaster final : public MasterInterface {
 public:
  // `task` names the master's task in messages.
  LocalMaster(Master* master, ThreadPool* pool, const std::string& task);

  const std::string& name() const override { return name_; }

  // Refuses every later call and waits for the calls in flight to return
  // (the owner aborts its steps first, so that they do). Idempotent.
  void Close();

  absl::Status CreateSession(const MasterCall& call,
                             const tensorflow::CreateSessionRequest& request,
                             tensorflow::CreateSessionResponse* response) override;
  absl::Status ExtendSession(const MasterCall& call,
                             const tensorflow::ExtendSessionRequest& request,
                             tensorflow::ExtendSessionResponse* response) override;
  absl::Status PartialRunSetup(
      const MasterCall& call, const tensorflow::PartialRunSetupRequest& request,
      tensorflow::PartialRunSetupResponse* response) override;
  absl::Status RunStep(const MasterCall& call,
                       const tensorflow::RunStepRequest& request,
                       tensorflow::RunStepResponse* response) override;
  absl::Status CloseSession(const MasterCall& call,
                            const tensorflow::CloseSessionRequest& request,
                            tensorflow::CloseSessionResponse* response) override;
  absl::Status ListDevices(const MasterCall& call,
                           const tensorflow::ListDevicesRequest& request,
                           tensorflow::ListDevicesResponse* response) override;
  absl::Status Reset(const MasterCall& call,
                     const tensorflow::ResetRequest& request,
                     tensorflow::ResetResponse* response) override;
  absl::Status MakeCallable(const MasterCall& call,
                            const tensorflow::MakeCallableRequest& request,
                            tensorflow::MakeCallableResponse* response) override;
  absl::Status RunCallable(const MasterCall& call,
                           const tensorflow::RunCallableRequest& request,
                           tensorflow::RunCallableResponse* response) override;
  absl::Status ReleaseCallable(
      const MasterCall& call, const tensorflow::ReleaseCallableRequest& request,
      tensorflow::ReleaseCallableResponse* response) override;

 private:
  // Runs `call` unless closed, counted as in flight.
  template <typename Call>
  absl::Status Guarded(absl::string_view method, Call call);

  Master* const master_;
  ThreadPool* const pool_;
  const std::string task_;
  const std::string name_;
  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_LOCAL_MASTER_H_
