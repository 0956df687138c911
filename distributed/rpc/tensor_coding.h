// RecvTensorResponse on the wire without the copies a proto would make.
//
// Encoding writes the response's few header bytes and then hands gRPC the
// tensor's own buffer as a slice that holds a reference to the tensor (for
// buffers over kAliasBytes; smaller ones are copied into the header slice),
// so a 256 MiB tensor is not copied at all before the socket. Decoding reads
// the fields from the message's slices and copies tensor_content once,
// straight into a tensor allocated where the receiver wants it (a large one
// by several threads at once, see DecodeRecvTensorResponse); anything
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

class ThreadPool;

inline constexpr size_t kAliasBytes = 1024;

// INTERNAL when the encoded message would pass protobuf's 2 GiB limit.
absl::Status EncodeRecvTensorResponse(const Tensor& tensor, bool is_dead,
                                      grpc::ByteBuffer* out);

// Content of at least this many bytes is copied into place by the calling
// thread and `copy_pool` together. One core copies at about 5 GB/s on the
// 2-core test machines (source and destination both out of cache), and
// while it copies the receiving task has nothing else to run: a 64 MiB
// tensor took 12.6 ms of a 52 ms step with the other core idle.
inline constexpr size_t kParallelCopyBytes = size_t{4} << 20;

// Decodes a RecvTensorResponse into `*tensor` (allocated from `allocator`,
// null: the CPU's) and `*is_dead`. `copy_pool` (may be null) lends threads
// to copy large content; the call returns once the copy is done.
// INVALID_ARGUMENT naming the field for malformed bytes, a content size
// that does not match the shape, or an unsupported dtype; RESOURCE_EXHAUSTED
// when `allocator` cannot hold the tensor.
absl::Status DecodeRecvTensorResponse(const grpc::ByteBuffer& in,
                                      Allocator* allocator,
                                      ThreadPool* copy_pool, Tensor* tensor,
                                      bool* is_dead);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RPC_TENSOR_CODING_H_
