// How variable kernels (ref and resource) change a variable's tensor.
//
// Every function here must be called with the variable's mutex held
// exclusively. Updates are copy-on-write: when some reader still holds the
// variable's buffer (a snapshot taken by ReadVariableOp or a ref input), the
// update goes to a fresh copy and the reader keeps the old values; otherwise
// it is done in place.
#ifndef WEFT_OPS_CPU_STATE_UPDATE_H_
#define WEFT_OPS_CPU_STATE_UPDATE_H_

#include <cstdint>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/core/tensor.h"
#include "runtime/core/types.h"

namespace weft {

enum class UpdateKind {
  kAdd,       // var += value
  kSub,       // var -= value
  kScaleSub,  // var -= alpha * value (gradient descent)
};

// The 16-bit float types to float and back, as variable arithmetic on
// them runs in float. T is Half or BFloat16.
template <typename T>
float Float16ToFloat(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return HalfToFloat(v);
  } else {
    return BFloat16ToFloat(v);
  }
}
template <typename T>
T FloatToFloat16(float f) {
  if constexpr (std::is_same_v<T, Half>) {
    return FloatToHalf(f);
  } else {
    return FloatToBFloat16(f);
  }
}

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

// CountUpTo: the scalar int32 or int64 `var` before it is incremented by
// one; OUT_OF_RANGE "Reached limit of `limit`" (var unchanged) when it is
// at `limit` already. `name` names the variable in the other errors (not
// initialized, not a scalar, another dtype).
absl::StatusOr<Tensor> CountUp(Tensor* var, int64_t limit, const std::string& name);

}  // namespace weft

#endif  // WEFT_OPS_CPU_STATE_UPDATE_H_
