// One unary call made with gRPC's callback reactor API: the way Weft's
// clients (the worker channels and the master client) call a method by its
// path with a request already in bytes.
//
//   StartUnaryCall(&stub, "/tensorflow.WorkerService/RunGraph", std::move(bytes),
//                  options, [](grpc::Status s, const grpc::ByteBuffer& answer) {...});
//
// The call owns its ClientContext and buffers and frees them in OnDone,
// after `done` has run: the one point gRPC allows (a context freed from
// inside a plain unary callback is unreferenced twice, which gRPC asserts
// on). `done` runs exactly once, on a gRPC thread.
#ifndef WEFT_DISTRIBUTED_RPC_UNARY_CALL_H_
#define WEFT_DISTRIBUTED_RPC_UNARY_CALL_H_

#include <functional>
#include <string>

#include "absl/time/time.h"
#include "distributed/rpc/grpc_security.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"

namespace weft {

struct UnaryCallOptions {
  absl::Duration timeout = absl::InfiniteDuration();
  // Wait for a channel that is (re)connecting instead of failing at once.
  bool wait_for_ready = false;
  const Security* security = nullptr;  // null: no token
};

void StartUnaryCall(grpc::GenericStub* stub, const std::string& method,
                    grpc::ByteBuffer request, const UnaryCallOptions& options,
                    std::function<void(grpc::Status, const grpc::ByteBuffer&)> done);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RPC_UNARY_CALL_H_
