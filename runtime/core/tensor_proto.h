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

// How one kind of variant value (types.h's VariantValue) crosses processes:
// as TensorFlow's VariantTensorDataProto (type_name, metadata, tensors),
// which TensorFlow itself reads. TensorToProto writes variants as
// variant_val; TensorFromProto reads variant_val or TensorFlow's
// tensor_content form (varint sizes, then each serialized proto). A value
// whose type has no coder is written with its type_name only, and reading
// it back is an error naming the type. An empty Variant is an empty proto.
// Variants holding variants nest at most kMaxVariantNesting deep.
inline constexpr int kMaxVariantNesting = 16;
struct VariantCoder {
  void (*encode)(const VariantValue& value,
                 tensorflow::VariantTensorDataProto* out) = nullptr;
  absl::StatusOr<Variant> (*decode)(
      const tensorflow::VariantTensorDataProto& in) = nullptr;
};
// Registers (or replaces) the coder for `type_name`; thread-safe. The kernels
// that make such values register it (ops/cpu/tensor_list.cc for
// "tensorflow::TensorList").
void RegisterVariantCoder(const std::string& type_name, VariantCoder coder);

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_TENSOR_PROTO_H_
