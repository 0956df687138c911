// One unary call on a completion queue (cq_threads.h): the way Weft's
// clients (the worker channels and the master client) call a method by its
// path with a request already in bytes.
//
//   StartUnaryCall(&stub, "/tensorflow.WorkerService/RunGraph", std::move(bytes),
//                  options, [](grpc::Status s, const grpc::ByteBuffer& answer) {...});
//
// The call owns its ClientContext and buffers; when it completes it frees
// them (the answer's bytes move to `done`), then runs `done`, so a caller
// that waits for `done` may drop the channel at once. `done` runs exactly
// once, on a thread of the options' queue; it should not block for long (a
// large answer is better handled elsewhere).
#ifndef WEFT_DISTRIBUTED_RPC_UNARY_CALL_H_
#define WEFT_DISTRIBUTED_RPC_UNARY_CALL_H_

#include <functional>
#include <string>

#include "absl/time/time.h"
#include "distributed/rpc/cq_threads.h"
#include "distributed/rpc/grpc_security.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"

namespace weft {

struct UnaryCallOptions {
  absl::Duration timeout = absl::InfiniteDuration();
  // Wait for a channel that is (re)connecting instead of failing at once.
  bool wait_for_ready = false;
  const Security* security = nullptr;  // null: no token
  // Where the call completes and `done` runs; null: CqThreads::ForClients().
  CqThreads* queue = nullptr;
};

void StartUnaryCall(grpc::GenericStub* stub, const std::string& method,
                    grpc::ByteBuffer request, const UnaryCallOptions& options,
                    std::function<void(grpc::Status, const grpc::ByteBuffer&)> done);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RPC_UNARY_CALL_H_
