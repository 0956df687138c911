// Helpers the TensorList kernel files share, for those files only:
// tensor_list_kernels.cc (new/reserve, FromTensor, GetItem, SetItem,
// PushBack(Batch), PopBack, ConcatLists, Length, ElementShape, Resize),
// tensor_list_bulk_kernels.cc (Stack, Gather, Scatter(V2/IntoExisting),
// Concat(V2), Split) and tensor_list_arith_kernels.cc (ZerosLike and AddN of
// lists). Also the registration functions of the latter two files, which
// RegisterTensorListKernels (ops/registration.h) calls. The list itself is
// ops/cpu/tensor_list.h.
//
// Thread-safety: the functions read only their arguments (and the inputs of
// the OpKernelContext they are given) and keep no state, so concurrent calls
// are safe. A ListKernel, like every OpKernel, is built once and may run
// Compute concurrently; it holds only the element_dtype attr, set when it is
// built.
#ifndef WEFT_OPS_CPU_TENSOR_LIST_KERNEL_UTIL_H_
#define WEFT_OPS_CPU_TENSOR_LIST_KERNEL_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ops/cpu/tensor_list.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_shape.h"

namespace weft {

// TensorListStack, ...Gather, ...Scatter(V2), ...ScatterIntoExistingList,
// ...Concat(V2), ...Split (tensor_list_bulk_kernels.cc).
void RegisterTensorListBulkKernels(KernelRegistry* r);
// ZerosLike and AddN of DT_VARIANT lists (tensor_list_arith_kernels.cc).
void RegisterTensorListArithKernels(KernelRegistry* r);

namespace tensor_list_internal {

// Reads a scalar int32 input `i`, naming it `what`.
absl::StatusOr<int64_t> ScalarInput(OpKernelContext* c, int i,
                                    absl::string_view what);

// OK when `n` is a length a list may have ([0, kMaxListElements]);
// otherwise INVALID_ARGUMENT naming `what`.
absl::Status CheckCount(int64_t n, absl::string_view what);

// The shape of an element input (`i` of `c`) merged with the list's own
// element shape, the input's named first when they conflict.
absl::StatusOr<PartialShape> ElementShapeInput(OpKernelContext* c, int i,
                                               const TensorList& list,
                                               absl::string_view what);

// `shape` merged with the shape of each set element at `indices`: how an
// element that was never set learns its shape from the ones that were.
absl::StatusOr<PartialShape> MergeSetElements(PartialShape shape,
                                              const TensorList& list,
                                              absl::Span<const int64_t> indices,
                                              absl::string_view what);

// 0, 1, ..., the list's length - 1.
std::vector<int64_t> AllIndices(const TensorList& list);

// Zeros of `shape`, which the caller has checked is fully defined.
absl::StatusOr<Tensor> ZerosOf(DataType dtype, const PartialShape& shape);

// The INVALID_ARGUMENT for a tensor of rank 0 where a list needs rows.
absl::Status CheckAtLeastVector(const Tensor& t, absl::string_view what);

// Every list kernel reads element_dtype (those that have it).
class ListKernel : public OpKernel {
 public:
  explicit ListKernel(OpKernelConstruction* c) : OpKernel(c) {
    if (c->HasAttr("element_dtype")) {
      c->SetStatus(c->GetAttr("element_dtype", &element_dtype_));
    }
  }

 protected:
  std::string What(absl::string_view detail = "") const {
    return absl::StrCat(type_string(), detail);
  }
  DataType element_dtype_ = DT_INVALID;
};

// Registers `make` as the CPU kernel of `op`.
void RegisterList(KernelRegistry* r, const char* op, KernelFactory make);

}  // namespace tensor_list_internal
}  // namespace weft

#endif  // WEFT_OPS_CPU_TENSOR_LIST_KERNEL_UTIL_H_
