// MasterInterface: what a client may ask of one task's MasterService, the
// methods of TensorFlow's master (proto/master.proto) as blocking calls
// over their request and response protos.
//
//   std::shared_ptr<MasterInterface> master = ...;   // see below
//   tensorflow::CreateSessionRequest req;  *req.mutable_graph_def() = graph;
//   tensorflow::CreateSessionResponse resp;
//   WEFT_RETURN_IF_ERROR(master->CreateSession({}, req, &resp));
//
// Two implementations: LocalMaster (distributed/local_master.h) calls a
// Master in the same process, with no serialisation and no socket (what a
// trainer uses to reach its own task); GrpcMasterClient
// (distributed/rpc/grpc_master_client.h) sends the same protos to a task,
// Weft's or TensorFlow's, over gRPC. Code above this interface (the client
// session, distributed/client_session.h) never knows which.
//
// Contract for every method: it blocks until the master answers. A step
// (RunStep, RunCallable) that has not answered within `call.timeout` is
// cancelled and the call is DEADLINE_EXCEEDED naming the method and the
// master; over gRPC the timeout bounds every call, in-process the master's
// own deadlines bound the others (MasterOptions::wait_for_tasks and
// call_timeout). An error status names the master and the method; the
// response is then unspecified. A RunStep asked to store errors in its
// response body returns OK with the step's error in the response, as
// TensorFlow's masters do.
// Thread safety: implementations are thread-safe; calls may overlap.
#ifndef WEFT_DISTRIBUTED_MASTER_INTERFACE_H_
#define WEFT_DISTRIBUTED_MASTER_INTERFACE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "proto/master.pb.h"

namespace weft {

struct MasterCall {
  // How long the caller waits for the answer; infinite: as long as the
  // master takes (its own deadlines still bound how long that is).
  absl::Duration timeout = absl::InfiniteDuration();
};

class MasterInterface {
 public:
  virtual ~MasterInterface() = default;

  // Who answers, for messages: "the master at 127.0.0.1:2222".
  virtual const std::string& name() const = 0;

  virtual absl::Status CreateSession(
      const MasterCall& call, const tensorflow::CreateSessionRequest& request,
      tensorflow::CreateSessionResponse* response) = 0;
  virtual absl::Status ExtendSession(
      const MasterCall& call, const tensorflow::ExtendSessionRequest& request,
      tensorflow::ExtendSessionResponse* response) = 0;
  virtual absl::Status PartialRunSetup(
      const MasterCall& call, const tensorflow::PartialRunSetupRequest& request,
      tensorflow::PartialRunSetupResponse* response) = 0;
  virtual absl::Status RunStep(const MasterCall& call,
                               const tensorflow::RunStepRequest& request,
                               tensorflow::RunStepResponse* response) = 0;
  virtual absl::Status CloseSession(
      const MasterCall& call, const tensorflow::CloseSessionRequest& request,
      tensorflow::CloseSessionResponse* response) = 0;
  virtual absl::Status ListDevices(
      const MasterCall& call, const tensorflow::ListDevicesRequest& request,
      tensorflow::ListDevicesResponse* response) = 0;
  virtual absl::Status Reset(const MasterCall& call,
                             const tensorflow::ResetRequest& request,
                             tensorflow::ResetResponse* response) = 0;
  virtual absl::Status MakeCallable(
      const MasterCall& call, const tensorflow::MakeCallableRequest& request,
      tensorflow::MakeCallableResponse* response) = 0;
  virtual absl::Status RunCallable(
      const MasterCall& call, const tensorflow::RunCallableRequest& request,
      tensorflow::RunCallableResponse* response) = 0;
  virtual absl::Status ReleaseCallable(
      const MasterCall& call, const tensorflow::ReleaseCallableRequest& request,
      tensorflow::ReleaseCallableResponse* response) = 0;
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_MASTER_INTERFACE_H_
