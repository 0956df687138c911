// What crosses the wire in Weft's gRPC services: protos to and from
// grpc::ByteBuffer, and statuses both ways. Only distributed/rpc/ sees gRPC;
// everything above it deals in absl::Status and request/response protos.
//
// Statuses keep their code (TensorFlow's error codes are gRPC's) and their
// message, cut to kMaxStatusMessage bytes as TensorFlow does. A failed call
// comes back as an error that names the peer and the method, and for
// transport failures (the task is not running, refused, timed out) what to
// do next.
#ifndef WEFT_DISTRIBUTED_RPC_GRPC_CODING_H_
#define WEFT_DISTRIBUTED_RPC_GRPC_CODING_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message_lite.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/status.h"

namespace weft {

inline constexpr size_t kMaxStatusMessage = 3072;

// The methods' paths: TensorFlow's hand-written tables register
// /tensorflow.MasterService/<Method> and /tensorflow.WorkerService/<Method>.
inline constexpr absl::string_view kMasterServicePrefix = "/tensorflow.MasterService/";
inline constexpr absl::string_view kWorkerServicePrefix = "/tensorflow.WorkerService/";

// gRPC's own log lines (raw error blobs on stderr) are dropped unless the
// user asks for them with GRPC_VERBOSITY or GRPC_TRACE: every failure they
// describe reaches the caller as a status that says it plainly. Idempotent.
void QuietGrpcLogging();
// Whether gRPC has said that a server's listener stopped accepting
// connections (it then gives the port up for good, e.g. past the open-file
// limit). Seen only while QuietGrpcLogging routes gRPC's log lines (not
// with GRPC_VERBOSITY or GRPC_TRACE set).
bool GrpcListenerFailed();

grpc::Status ToGrpcStatus(const absl::Status& status);

// The status of a call to `method` (its short name, "RunGraph") on `peer`
// (a task name and its address, "/job:ps/replica:0/task:0 at host:2222").
// Errors the peer's service returned keep their message; errors of the
// transport say so, with a next step.
absl::Status FromGrpcStatus(const grpc::Status& status, absl::string_view peer,
                            absl::string_view method);

// INTERNAL if `message` cannot be serialized (over 2 GiB).
absl::Status SerializeToByteBuffer(const google::protobuf::MessageLite& message,
                                   grpc::ByteBuffer* buffer);
// INVALID_ARGUMENT naming `what` when the bytes are not a valid `message`.
absl::Status ParseFromByteBuffer(const grpc::ByteBuffer& buffer,
                                 google::protobuf::MessageLite* message,
                                 absl::string_view what);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RPC_GRPC_CODING_H_
