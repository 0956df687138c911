// A client of one task's MasterService over gRPC: what `weft submit` and
// the tests use to run graphs on a cluster, as TensorFlow's GrpcSession
// does for a tf.compat.v1.Session("grpc://...").
//
//   GrpcMasterClient master("127.0.0.1:2222");
//   tensorflow::CreateSessionRequest req;  ...
//   tensorflow::CreateSessionResponse resp;
//   WEFT_RETURN_IF_ERROR(master.Call("CreateSession", req, &resp, absl::Seconds(60)));
//
// Errors name the address and the method (distributed/rpc/grpc_coding.h).
// Thread safety: thread-safe; calls may run concurrently.
#ifndef WEFT_DISTRIBUTED_RPC_GRPC_MASTER_CLIENT_H_
#define WEFT_DISTRIBUTED_RPC_GRPC_MASTER_CLIENT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "distributed/rpc/grpc_security.h"
#include "google/protobuf/message_lite.h"

namespace weft {

class GrpcMasterClient {
 public:
  // `address` is host:port; `max_message_bytes` bounds both directions.
  explicit GrpcMasterClient(
      std::string address, int max_message_bytes = 1 << 30,
      std::shared_ptr<const Security> security = Security::None());
  ~GrpcMasterClient();

  // Calls MasterService method `method` ("RunStep") and waits for its
  // answer, at most `timeout` (infinite: as long as it takes; gRPC still
  // fails at once when the task is unreachable).
  absl::Status Call(absl::string_view method,
                    const google::protobuf::MessageLite& request,
                    google::protobuf::MessageLite* response,
                    absl::Duration timeout = absl::InfiniteDuration());

  const std::string& address() const { return address_; }

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
  const std::shared_ptr<const Security> security_;
  std::unique_ptr<Stub> stub_;
  absl::Duration report_every_ = absl::InfiniteDuration();
  std::function<void(absl::string_view)> log_;
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RPC_GRPC_MASTER_CLIENT_H_
