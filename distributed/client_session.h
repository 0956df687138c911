// A Session (runtime/session.h) whose graph runs on a cluster, through the
// MasterService of one of its tasks (distributed/master_interface.h): what
// TensorFlow's GrpcSession is behind tf.compat.v1.Session("grpc://..."),
// written once over the interface, so the same client drives a master
// in-process (LocalMaster) or over gRPC (NewGrpcSession, which wraps this).
//
//   std::unique_ptr<Session> s = NewClientSession(master, options);
//   WEFT_RETURN_IF_ERROR(s->Create(graph_def));
//   WEFT_RETURN_IF_ERROR(s->Run({{"x", x}}, {"y"}, {}, &outputs));
//
// options.config goes to CreateSession (device_filters, soft placement,
// operation_timeout_in_ms); memory_limit_bytes does not apply (each task
// has its own limit). Errors come back with the master's code and message
// (run errors travel in the response body, as TensorFlow's clients ask);
// a fetch the master did not return, or returned malformed, names the
// master. Destroying the session closes it on the master.
// Thread safety: Run may be called from several threads at once; Create,
// Extend and Close are serialised.
#ifndef WEFT_DISTRIBUTED_CLIENT_SESSION_H_
#define WEFT_DISTRIBUTED_CLIENT_SESSION_H_

#include <memory>

#include "absl/time/time.h"
#include "distributed/master_interface.h"
#include "runtime/session.h"

namespace weft {

struct ClientSessionOptions {
  // The longest a call waits for the master's answer (then
  // DEADLINE_EXCEEDED naming the method and the master). A Run with
  // RunOptions.timeout_in_ms waits that long and a minute more instead.
  absl::Duration call_timeout = absl::InfiniteDuration();
  // How long Close waits for the master to forget the session.
  absl::Duration close_timeout = absl::Seconds(60);
};

std::unique_ptr<Session> NewClientSession(std::shared_ptr<MasterInterface> master,
                                          const SessionOptions& options,
                                          ClientSessionOptions client = {});

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_CLIENT_SESSION_H_
