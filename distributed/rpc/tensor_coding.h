// RecvTensorResponse on the wire without the copies a proto would make.
//
// Encoding writes the response's few header bytes and then hands gRPC the
// tensor's own buffer as a slice that holds a reference to the tensor (for
// buffers over kAliasBytes; smaller ones are copied into the header slice),
// so a 256 MiB tensor is not copied at all before the socket. Decoding reads
// the fields from the message's slices and copies tensor_content once,
// straight into a tensor allocated where the receiver wants it; anything
// else (typed fields, strings, fields it does not know) goes through the
// TensorProto parser. Both sides are plain protobuf wire format: TensorFlow
// reads what this writes, and this reads what TensorFlow writes.
#ifndef WEFT_DISTRIBUTED_RPC_TENSOR_CODING_H_
#define WEFT_DISTRIBUTED_RPC_TENSOR_CODING_H_

#include <cstddef>

#include "absl/status/status.h"
#include "grpcpp/support/byte_buffer.h"
#include "runtime/core/allocator.h"
#include "runtime/core/tensor.h"

namespace weft {

inline constexpr size_t kAliasBytes = 1024;

// INTERNAL when the encoded message would pass protobuf's 2 GiB limit.
absl::Status EncodeRecvTensorResponse(const Tensor& tensor, bool is_dead,
                                      grpc::ByteBuffer* out);

// INVALID_ARGUMENT naming the field for malformed bytes, a content size
// that does not match the shape, or an unsupported dtype; RESOURCE_EXHAUSTED
// when `allocator` cannot hold the tensor.
absl::Status DecodeRecvTensorResponse(const grpc::ByteBuffer& in,
                                      Allocator* allocator, Tensor* tensor,
                                      bool* is_dead);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RPC_TENSOR_CODING_H_
