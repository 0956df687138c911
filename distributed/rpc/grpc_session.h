// NewGrpcSession: the client session (distributed/client_session.h) over a
// GrpcMasterClient, for a master reached over gRPC, a Weft server or a
// TensorFlow one; what TensorFlow's GrpcSession is behind
// tf.compat.v1.Session("grpc://...").
//
//   auto session = NewGrpcSession("127.0.0.1:2222", options);
//   WEFT_RETURN_IF_ERROR(session->Create(graph_def));
//   WEFT_RETURN_IF_ERROR(session->Run({{"x", x}}, {"y"}, {}, &outputs));
//
// Behaviour, errors and thread safety: as NewClientSession's.
#ifndef WEFT_DISTRIBUTED_RPC_GRPC_SESSION_H_
#define WEFT_DISTRIBUTED_RPC_GRPC_SESSION_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "distributed/rpc/grpc_security.h"
#include "runtime/session.h"

namespace weft {

// How a GrpcSession waits for its master.
struct GrpcSessionWaits {
  // The longest a call waits for the master's answer (then
  // DEADLINE_EXCEEDED naming the method and the master). A RunStep with
  // RunOptions.timeout_in_ms waits that long and a minute more instead.
  absl::Duration call_timeout = absl::InfiniteDuration();
  // Every this long a call still waiting says so through `log` (null:
  // silent): what it waits for, from whom, since when.
  absl::Duration report_every = absl::Seconds(10);
  std::function<void(absl::string_view)> log;
};

std::unique_ptr<Session> NewGrpcSession(
    const std::string& address, const SessionOptions& options,
    std::shared_ptr<const Security> security = Security::None(),
    GrpcSessionWaits waits = {});

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RPC_GRPC_SESSION_H_
