// The helpers of tensor_list_kernel_util.h.
#include "ops/cpu/tensor_list_kernel_util.h"

#include <numeric>
#include <utility>

#include "ops/cpu/array_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace tensor_list_internal {

// Reads a scalar int32 input `i`, naming it `what`.
absl::StatusOr<int64_t> ScalarInput(OpKernelContext* c, int i,
                                    absl::string_view what) {
  int64_t v = 0;
  WEFT_RETURN_IF_ERROR(ReadIntScalar(c->input(i), what, &v));
  return v;
}

absl::Status CheckCount(int64_t n, absl::string_view what) {
  if (n < 0 || n > kMaxListElements) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be in [0, ", kMaxListElements, "], got ", n));
  }
  return absl::OkStatus();
}

// The shape of an element input (`i` of `c`) merged with the list's own
// element shape, the input's named first when they conflict.
absl::StatusOr<PartialShape> ElementShapeInput(OpKernelContext* c, int i,
                                               const TensorList& list,
                                               absl::string_view what) {
  WEFT_ASSIGN_OR_RETURN(PartialShape given,
                        PartialShapeFromTensor(c->input(i), "element_shape"));
  return MergeShapes(given, list.element_shape, what);
}

// `shape` merged with the shape of each set element at `indices`: how an
// element that was never set learns its shape from the ones that were.
absl::StatusOr<PartialShape> MergeSetElements(PartialShape shape,
                                              const TensorList& list,
                                              absl::Span<const int64_t> indices,
                                              absl::string_view what) {
  for (int64_t i : indices) {
    const Tensor& t = list.tensors[i];
    if (!t.IsInitialized()) continue;
    WEFT_ASSIGN_OR_RETURN(
        shape, MergeShapes(shape, PartialShape::FromShape(t.shape()),
                           absl::StrCat(what, " element ", i)));
  }
  return shape;
}

std::vector<int64_t> AllIndices(const TensorList& list) {
  std::vector<int64_t> all(list.tensors.size());
  std::iota(all.begin(), all.end(), int64_t{0});
  return all;
}

// Zeros of `shape`, which the caller has checked is fully defined.
absl::StatusOr<Tensor> ZerosOf(DataType dtype, const PartialShape& shape) {
  WEFT_ASSIGN_OR_RETURN(TensorShape full, TensorShape::Build(shape.dims()));
  return ZerosTensor(dtype, full);
}

// The INVALID_ARGUMENT for a tensor of rank 0 where a list needs rows.
absl::Status CheckAtLeastVector(const Tensor& t, absl::string_view what) {
  if (t.dims() >= 1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor must be at least a vector, but saw shape: ",
      t.shape().DebugString(), " (", what, ")"));
}

void RegisterList(KernelRegistry* r, const char* op, KernelFactory make) {
  r->Register(KernelDef(op, kDeviceTypeCpu), std::move(make));
}

}  // namespace tensor_list_internal
}  // namespace weft
