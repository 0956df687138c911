// A client of one task's MasterService over gRPC, Weft's or TensorFlow's:
// MasterInterface (distributed/master_interface.h) for the client session
// behind `weft submit` and NewGrpcSession, as TensorFlow's GrpcSession is
// for a tf.compat.v1.Session("grpc://..."); and Call, which sends any
// message under any method name (what the hostile-peer tests need).
//
//   GrpcMasterClient master("127.0.0.1:2222");
//   tensorflow::CreateSessionRequest req;  ...
//   tensorflow::CreateSessionResponse resp;
//   WEFT_RETURN_IF_ERROR(master.CreateSession({absl::Seconds(60)}, req, &resp));
//
// Every call is bounded by its MasterCall::timeout (gRPC's deadline, which
// also makes the server cancel a step). Errors name the address and the
// method (distributed/rpc/grpc_coding.h).
// Thread safety: thread-safe; calls may run concurrently.
#ifndef WEFT_DISTRIBUTED_RPC_GRPC_MASTER_CLIENT_H_
#define WEFT_DISTRIBUTED_RPC_GRPC_MASTER_CLIENT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "distributed/master_interface.h"
#include "distributed/rpc/grpc_security.h"
#include "google/protobuf/message_lite.h"

namespace weft {

class GrpcMasterClient final : public MasterInterface {
 public:
  // `address` is host:port; `max_message_bytes` bounds both directions.
  explicit GrpcMasterClient(
      std::string address, int max_message_bytes = 1 << 30,
      std::shared_ptr<const Security> security = Security::None());
  ~GrpcMasterClient() override;

  // Calls MasterService method `method` ("RunStep") and waits for its
  // answer, at most `timeout` (infinite: as long as it takes; gRPC still
  // fails at once when the task is unreachable).
  absl::Status Call(absl::string_view method,
                    const google::protobuf::MessageLite& request,
                    google::protobuf::MessageLite* response,
                    absl::Duration timeout = absl::InfiniteDuration());

  const std::string& address() const { return address_; }
  const std::string& name() const override { return name_; }

  absl::Status CreateSession(const MasterCall& call,
                      const tensorflow::CreateSessionRequest& request,
                      tensorflow::CreateSessionResponse* response) override {
    return Call("CreateSession", request, response, call.timeout);
  }
  absl::Status ExtendSession(const MasterCall& call,
                      const tensorflow::ExtendSessionRequest& request,
                      tensorflow::ExtendSessionResponse* response) override {
    return Call("ExtendSession", request, response, call.timeout);
  }
  absl::Status PartialRunSetup(const MasterCall& call,
                      const tensorflow::PartialRunSetupRequest& request,
                      tensorflow::PartialRunSetupResponse* response) override {
    return Call("PartialRunSetup", request, response, call.timeout);
  }
  absl::Status RunStep(const MasterCall& call,
                      const tensorflow::RunStepRequest& request,
                      tensorflow::RunStepResponse* response) override {
    return Call("RunStep", request, response, call.timeout);
  }
  absl::Status CloseSession(const MasterCall& call,
                      const tensorflow::CloseSessionRequest& request,
                      tensorflow::CloseSessionResponse* response) override {
    return Call("CloseSession", request, response, call.timeout);
  }
  absl::Status ListDevices(const MasterCall& call,
                      const tensorflow::ListDevicesRequest& request,
                      tensorflow::ListDevicesResponse* response) override {
    return Call("ListDevices", request, response, call.timeout);
  }
  absl::Status Reset(const MasterCall& call,
                      const tensorflow::ResetRequest& request,
                      tensorflow::ResetResponse* response) override {
    return Call("Reset", request, response, call.timeout);
  }
  absl::Status MakeCallable(const MasterCall& call,
                      const tensorflow::MakeCallableRequest& request,
                      tensorflow::MakeCallableResponse* response) override {
    return Call("MakeCallable", request, response, call.timeout);
  }
  absl::Status RunCallable(const MasterCall& call,
                      const tensorflow::RunCallableRequest& request,
                      tensorflow::RunCallableResponse* response) override {
    return Call("RunCallable", request, response, call.timeout);
  }
  absl::Status ReleaseCallable(const MasterCall& call,
                      const tensorflow::ReleaseCallableRequest& request,
                      tensorflow::ReleaseCallableResponse* response) override {
    return Call("ReleaseCallable", request, response, call.timeout);
  }

  // A call that has waited `every` for its answer says so through `log`
  // (the method, the master, how long), and again after each `every`; so
  // a master that stops answering is never a silent wait. Call before the
  // first Call; without it, calls wait silently.
  void ReportWaits(absl::Duration every,
                   std::function<void(absl::string_view)> log) {
    report_every_ = every;
    log_ = std::move(log);
  }

 private:
  struct Stub;  // the gRPC stub, kept out of this header
  const std::string address_;
  const std::string name_;  // "the master at ADDRESS"
  const std::shared_ptr<const Security> security_;
  std::unique_ptr<Stub> stub_;
  absl::Duration report_every_ = absl::InfiniteDuration();
  std::function<void(absl::string_view)> log_;
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RPC_GRPC_MASTER_CLIENT_H_
