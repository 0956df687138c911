// How variable kernels (ref and resource) change a variable's tensor.
//
// Every function here must be called with the variable's mutex held
// exclusively. Updates are copy-on-write: when some reader still holds the
// variable's buffer (a snapshot taken by ReadVariableOp or a ref input), the
// update goes to a fresh copy and the reader keeps the old values; otherwise
// it is done in place.
#ifndef WEFT_OPS_CPU_STATE_UPDATE_H_
#define WEFT_OPS_CPU_STATE_UPDATE_H_

#include "absl/status/status.h"
#include "runtime/core/tensor.h"
#include "runtime/core/types.h"

namespace weft {

enum class UpdateKind {
  kAdd,       // var += value
  kSub,       // var -= value
  kScaleSub,  // var -= alpha * value (gradient descent)
};

// Dtypes ApplyUpdate supports.
DataTypeVector UpdatableTypes();

// Makes `var` the only holder of its buffer, copying if needed.
absl::Status MakeBufferUnique(Tensor* var);

// var = value. Copies into var's own buffer when it is unshared and the same
// size; otherwise var shares value's buffer (later updates copy on write).
void AssignValue(Tensor* var, const Tensor& value);

// var (op)= value; `alpha` (a scalar) only for kScaleSub. Shapes must
// already match. UNIMPLEMENTED for dtypes outside UpdatableTypes().
absl::Status ApplyUpdate(UpdateKind kind, Tensor* var, const Tensor& value,
                         const Tensor* alpha = nullptr);

}  // namespace weft

#endif  // WEFT_OPS_CPU_STATE_UPDATE_H_
