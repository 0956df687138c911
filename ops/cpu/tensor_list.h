// TensorList: the value a DT_VARIANT tensor holds in TensorFlow 2.x graphs
// (TensorListReserve, TensorListSetItem, ...), and the helpers the
// TensorList and TensorArrayV3 kernels share.
//
// A TensorList is immutable once it is in a tensor (types.h's Variant): an op
// that changes a list makes a new TensorList whose vector shares the element
// tensors' buffers with the old one, so a loop that sets one item per
// iteration copies handles, never the elements' data. An element that was
// reserved but never set is an uninitialized Tensor; reading it yields zeros
// when the element shape is known, as in TensorFlow.
#ifndef WEFT_OPS_CPU_TENSOR_LIST_H_
#define WEFT_OPS_CPU_TENSOR_LIST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_shape.h"

namespace weft {

class OpKernelContext;

// The most elements one list or TensorArray may have: a graph's
// num_elements or size is checked against it before anything is allocated
// (each element costs a Tensor handle even when unset).
inline constexpr int64_t kMaxListElements = int64_t{1} << 24;

class TensorList : public VariantValue {
 public:
  DataType element_dtype = DT_INVALID;
  PartialShape element_shape;     // what every element must be compatible with
  int64_t max_num_elements = -1;  // -1: unbounded (EmptyTensorList's limit)
  std::vector<Tensor> tensors;    // uninitialized: reserved, never set

  std::string TypeName() const override { return "tensorflow::TensorList"; }
  std::string DebugString() const override;
};

// Registers the TensorList coder (runtime/core/tensor_proto.h) that sends
// lists between tasks in TensorFlow's encoding: the set elements as
// tensors, and metadata of varints (the count and indices of unset
// elements, element_dtype, max_num_elements) then the element shape as a
// TensorShapeProto. Called by RegisterTensorListKernels.
void RegisterTensorListCoder();

// The list variant `v` holds, checked to hold `element_dtype` (pass
// DT_INVALID to accept any); `what` names it in errors ("input 0"). The
// pointer lives as long as the variant.
absl::StatusOr<const TensorList*> ListIn(const Variant& v, DataType element_dtype,
                                         absl::string_view what);
// The list in variant scalar input `i` of `c`, checked as ListIn does. The
// pointer lives as long as the input.
absl::StatusOr<const TensorList*> GetInputList(OpKernelContext* c, int i,
                                               DataType element_dtype);
// The lists of a variant tensor of any shape (the batched list ops'
// inputs), in order, each checked as ListIn does; `what` names the tensor.
absl::StatusOr<std::vector<const TensorList*>> ListsIn(const Tensor& t,
                                                       DataType element_dtype,
                                                       absl::string_view what);
// Makes a variant tensor of `shape` holding `lists` (in order) output `i`
// of `c`; SetOutputList, a scalar holding `list`.
void SetOutputLists(OpKernelContext* c, int i, const TensorShape& shape,
                    std::vector<std::shared_ptr<const TensorList>> lists);
void SetOutputList(OpKernelContext* c, int i,
                   std::shared_ptr<const TensorList> list);

// An element shape given as a tensor (int32 or int64): -1 (a scalar) is an
// unknown rank, and -1 in a vector an unknown dimension. `what` names the
// input in errors.
absl::StatusOr<PartialShape> PartialShapeFromTensor(const Tensor& t,
                                                    absl::string_view what);
// What a tensor compatible with both shapes must be; INVALID_ARGUMENT,
// naming `what`, when no tensor could have both.
absl::StatusOr<PartialShape> MergeShapes(const PartialShape& a,
                                         const PartialShape& b,
                                         absl::string_view what);

// A tensor of zeros (empty strings, empty variants for object dtypes).
absl::StatusOr<Tensor> ZerosTensor(DataType dtype, const TensorShape& shape);

// Element `i` of `elements`, or zeros of `shape` when it is unset; an
// unset element whose shape is not fully known is an error naming `what`.
absl::StatusOr<Tensor> ElementOrZeros(const std::vector<Tensor>& elements,
                                      int64_t i, DataType dtype,
                                      const PartialShape& shape,
                                      absl::string_view what);

// Stacks `elements` (all of `dtype` and one shape) into output `out` of `c`,
// shape [elements.size()] + element shape; `element_shape` gives the shape
// when there are no elements (it must then be fully defined).
absl::Status StackIntoOutput(OpKernelContext* c, int out,
                             absl::Span<const Tensor> elements, DataType dtype,
                             const PartialShape& element_shape,
                             absl::string_view what);
// Concatenates `elements` (each of rank >= 1, equal beyond dim 0) along dim
// 0 into output `out`, and their dim-0 sizes into output `lengths_out`
// (int64). `element_shape` (dims past 0) gives the shape when there are no
// elements.
absl::Status ConcatIntoOutputs(OpKernelContext* c, int out, int lengths_out,
                               absl::Span<const Tensor> elements,
                               DataType dtype,
                               const PartialShape& element_shape,
                               absl::string_view what);
// Row `i` of `t` (dim 0) as its own tensor of shape t.shape[1:]; shares the
// buffer when the row starts aligned, otherwise copies it.
absl::StatusOr<Tensor> RowOf(const Tensor& t, int64_t i);
// Rows [begin, begin + n) of `t` as a tensor; shares or copies as RowOf.
absl::StatusOr<Tensor> RowsOf(const Tensor& t, int64_t begin, int64_t n);

// a + b, elementwise, for numeric dtypes (a gradient TensorArray's repeated
// writes, AddN over lists); INVALID_ARGUMENT naming `what` otherwise.
absl::StatusOr<Tensor> AddTensors(const Tensor& a, const Tensor& b,
                                  absl::string_view what);

}  // namespace weft

#endif  // WEFT_OPS_CPU_TENSOR_LIST_H_
