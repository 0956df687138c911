// Helpers shared by the array, state and control-flow kernels: dtype lists
// for registration, reading index inputs, and visiting a dtype's storage type
// so data-movement kernels are written once for every element size.
//
//   std::vector<int64_t> perm;
//   OP_REQUIRES_OK(c, ReadIntVector(c->input(1), "perm", &perm));
//   VisitStorage(x.dtype(), [&](auto tag) {
//     using T = typename decltype(tag)::type;   // uint32_t for float, ...
//     ...
//   });
#ifndef WEFT_OPS_CPU_ARRAY_UTIL_H_
#define WEFT_OPS_CPU_ARRAY_UTIL_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "runtime/core/tensor.h"
#include "runtime/core/types.h"

namespace weft {

class OpKernelContext;

// Every plain-memory dtype Weft can hold (numbers, bool, half, bfloat16,
// complex64, complex128).
DataTypeVector PodTypes();
// PodTypes() plus string: what element-moving kernels (Concat, Pack, ...)
// accept.
DataTypeVector PodAndStringTypes();
// Dtypes with C++ arithmetic: float, double and the integer types.
DataTypeVector ArithmeticTypes();

// Reads a rank-1 int32/int64 tensor (`what` names it in errors).
absl::Status ReadIntVector(const Tensor& t, absl::string_view what,
                           std::vector<int64_t>* out);
// Reads a scalar (or one-element) int32/int64 tensor.
absl::Status ReadIntScalar(const Tensor& t, absl::string_view what,
                           int64_t* out);
// Maps `axis` in [-rank, rank) to [0, rank); INVALID_ARGUMENT otherwise.
absl::Status CanonicalAxis(int64_t axis, int rank, absl::string_view what,
                           int* out);
// Builds a shape from user-given dims, naming `what` if one is negative.
absl::Status ShapeFromDims(const std::vector<int64_t>& dims,
                           absl::string_view what, TensorShape* out);

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls fn(TypeTag<S>{}) where S is a type with the size and copy semantics
// of `dtype`'s elements: uintN_t for plain-memory dtypes (Complex128 for
// the one 16-byte type), std::string,
// ResourceHandle and Variant for the object dtypes. Returns false for other dtypes.
template <typename Fn>
bool VisitStorage(DataType dtype, Fn&& fn) {
  if (dtype == DT_STRING) {
    fn(TypeTag<std::string>{});
    return true;
  }
  if (dtype == DT_RESOURCE) {
    fn(TypeTag<ResourceHandle>{});
    return true;
  }
  if (dtype == DT_VARIANT) {
    fn(TypeTag<Variant>{});
    return true;
  }
  switch (DataTypeSize(dtype)) {
    case 1:
      fn(TypeTag<uint8_t>{});
      return true;
    case 2:
      fn(TypeTag<uint16_t>{});
      return true;
    case 4:
      fn(TypeTag<uint32_t>{});
      return true;
    case 8:
      fn(TypeTag<uint64_t>{});
      return true;
    case 16:
      fn(TypeTag<Complex128>{});
      return true;
    default:
      return false;
  }
}

// INVALID_ARGUMENT (or UNIMPLEMENTED) naming the dtype a kernel cannot move.
absl::Status UnsupportedDtype(absl::string_view op, DataType dtype);

// Writes `values` into output i, a new int32 or int64 tensor (the kernel's
// output dtype): a scalar when `scalar` (one value), else a vector.
// INVALID_ARGUMENT, naming `what`, if a value does not fit int32.
absl::Status OutputInts(OpKernelContext* c, int i,
                        const std::vector<int64_t>& values, bool scalar,
                        absl::string_view what);

// Broadcasting (NumPy rules): for each dim of `out`, the stride of `in`'s
// elements along it (0 where `in` is broadcast or lacks the dim). False if
// `in` cannot be broadcast to `out`.
bool BroadcastStrides(const TensorShape& in, const TensorShape& out,
                      std::vector<int64_t>* strides);

// Broadcasts two shapes; false if they are incompatible.
bool BroadcastShape(const TensorShape& a, const TensorShape& b,
                    TensorShape* out);

// Calls fn(i, offsets) for every element i of a tensor of shape `out`, in
// order, where offsets[k] is the matching element of input k whose per-dim
// strides are strides[k] (from BroadcastStrides).
template <size_t K, typename Fn>
void ForEachBroadcast(const TensorShape& out,
                      const std::array<std::vector<int64_t>, K>& strides,
                      Fn&& fn) {
  const int rank = out.dims();
  const int64_t n = out.num_elements();
  std::vector<int64_t> idx(rank, 0);
  std::array<int64_t, K> off{};
  for (int64_t i = 0; i < n; ++i) {
    fn(i, off);
    for (int d = rank - 1; d >= 0; --d) {
      for (size_t k = 0; k < K; ++k) off[k] += strides[k][d];
      if (++idx[d] < out.dim_size(d)) break;
      for (size_t k = 0; k < K; ++k) off[k] -= strides[k][d] * out.dim_size(d);
      idx[d] = 0;
    }
  }
}


// A binary element-wise kernel's broadcasting (NumPy rules): allocates
// output 0 of c, the broadcast shape of inputs 0 and 1, and calls
// fn(i, offsets) for each of its elements (offsets[k]: the element of
// input k). INVALID_ARGUMENT "Incompatible shapes: [..] vs. [..]" when the
// shapes do not broadcast.
// (Context is OpKernelContext, a template parameter so that this header
// need not include op_kernel.h.)
template <typename Context, typename Fn>
absl::Status BroadcastBinary(Context* c, Tensor** out, Fn&& fn) {
  const Tensor& x = c->input(0);
  const Tensor& y = c->input(1);
  TensorShape shape;
  std::array<std::vector<int64_t>, 2> strides;
  if (!BroadcastShape(x.shape(), y.shape(), &shape) ||
      !BroadcastStrides(x.shape(), shape, &strides[0]) ||
      !BroadcastStrides(y.shape(), shape, &strides[1])) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Incompatible shapes: ", x.shape().DebugString(), " vs. ",
        y.shape().DebugString()));
  }
  absl::Status s = c->allocate_output(0, shape, out);
  if (!s.ok()) return s;
  ForEachBroadcast<2>(shape, strides, std::forward<Fn>(fn));
  return absl::OkStatus();
}
// GatherV2's work (also ResourceGather's): output 0 of `c` gets the slices
// of `params` along `axis` that `indices` name, the first `batch_dims` dims
// of both matched (negative: counted from the end of indices' dims).
// INVALID_ARGUMENT naming the first index out of range, or the bad axis.
absl::Status Gather(OpKernelContext* c, const Tensor& params,
                    const Tensor& indices, int64_t axis, int64_t batch_dims);

// Copies n elements from src (starting at element src_offset) into dst
// (starting at dst_offset). Both must have the same dtype.
void CopyElements(const Tensor& src, int64_t src_offset, const Tensor& dst,
                  int64_t dst_offset, int64_t n);

}  // namespace weft

#endif  // WEFT_OPS_CPU_ARRAY_UTIL_H_
