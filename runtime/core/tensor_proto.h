// Conversion between Tensor and TensorFlow's TensorProto.
//
// Decoding follows TensorFlow: a non-empty tensor_content wins; otherwise the
// typed field (float_val, int_val, ...) is used, and if it holds fewer values
// than the shape needs, its last value fills the rest (how a scalar Const
// fills a shape); an empty typed field means zeros.
#ifndef WEFT_RUNTIME_CORE_TENSOR_PROTO_H_
#define WEFT_RUNTIME_CORE_TENSOR_PROTO_H_

#include "absl/status/statusor.h"
#include "proto/tensor.pb.h"
#include "runtime/core/allocator.h"
#include "runtime/core/tensor.h"

namespace weft {

absl::StatusOr<Tensor> TensorFromProto(const tensorflow::TensorProto& proto,
                                       Allocator* allocator = CpuAllocator());

enum class ProtoEncoding {
  kTensorContent,  // raw bytes; what TensorFlow's RPCs send
  kTypedFields,    // float_val etc.; what Python writes for small constants
};

void TensorToProto(const Tensor& tensor, tensorflow::TensorProto* proto,
                   ProtoEncoding encoding = ProtoEncoding::kTensorContent);

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_TENSOR_PROTO_H_
