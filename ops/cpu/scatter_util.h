// The element work of every scatter kernel (Scatter*, ResourceScatter*,
// ScatterNd*, TensorScatter*): slices of a target tensor combined with
// slices of `updates`, in order, so a slice named twice is changed twice.
//
// Arithmetic on half and bfloat16 goes through float; signed integers wrap
// as TensorFlow's do. kUpdate copies elements of any dtype; the other kinds
// take the arithmetic dtypes (bool, strings and complex are UNIMPLEMENTED).
#ifndef WEFT_OPS_CPU_SCATTER_UTIL_H_
#define WEFT_OPS_CPU_SCATTER_UTIL_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/tensor.h"

namespace weft {

enum class ScatterKind { kUpdate, kAdd, kSub, kMul, kDiv, kMin, kMax };

// For each i: target[offsets[i] + j] (kind)= updates[i * slice + j] for
// j < slice, or updates[0] when `updates` is a scalar. The caller has
// checked the offsets and shapes and owns `target`'s buffer (unshared).
// INVALID_ARGUMENT at an integer division by zero, naming updates[i] (the
// slices before it are changed); UNIMPLEMENTED, naming `op`, for a dtype
// the kind does not support (nothing changed).
absl::Status ApplySlices(ScatterKind kind, Tensor* target,
                         const std::vector<int64_t>& offsets, int64_t slice,
                         const Tensor& updates, absl::string_view op);

// The frame of the ref-variable scatter kernels: input 0 must be a ref
// (INVALID_ARGUMENT otherwise); `change` runs on its tensor under its
// mutex, after a FAILED_PRECONDITION naming `var_name` if the variable is
// uninitialized; then input 0 is forwarded to output 0. A failure is set
// on `c`.
void ChangeRefInput(OpKernelContext* c, absl::string_view var_name,
                    const std::function<absl::Status(Tensor*)>& change);

}  // namespace weft

#endif  // WEFT_OPS_CPU_SCATTER_UTIL_H_
