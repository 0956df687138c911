// How variable kernels (ref and resource) change a variable's tensor.
//
// Every function here must be called with the variable's mutex held
// exclusively. What an update does to readers that still hold the
// variable's buffer differs between TensorFlow's two kinds of variables,
// and programs rely on each (Writes below).
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

// How an update treats a reader that still holds the variable's buffer.
//   kCopyOnWrite (resource variables): the update goes to a fresh copy when
//     the buffer is shared, so a value read before it (ReadVariableOp)
//     keeps its numbers.
//   kInPlace (reference variables, VariableV2): the update writes the
//     variable's own buffer, so a read taken earlier in the step (`v/read`,
//     an Identity of the ref) that is used after the update sees the new
//     numbers, as TensorFlow 1.x graphs expect: SyncReplicasOptimizer fills
//     its token queue from `global_step/read` after incrementing the step.
//     A reference variable's buffer is therefore always its own: Assign
//     copies the value in rather than sharing it.
enum class Writes { kCopyOnWrite, kInPlace };

// Dtypes ApplyUpdate supports.
DataTypeVector UpdatableTypes();

// Readies `var` for a write: with kCopyOnWrite, makes it the only holder
// of its buffer (copying if needed); with kInPlace, nothing.
absl::Status PrepareToWrite(Tensor* var, Writes writes = Writes::kCopyOnWrite);

// var = value. kCopyOnWrite: copies into var's own buffer when it is
// unshared and the same size; otherwise var shares value's buffer (later
// updates copy on write). kInPlace: copies into var's buffer when it has
// value's dtype and shape, shared or not; otherwise var gets a copy of
// value. RESOURCE_EXHAUSTED when that copy finds no memory.
absl::Status AssignValue(Tensor* var, const Tensor& value,
                         Writes writes = Writes::kCopyOnWrite);

// var (op)= value; `alpha` (a scalar) only for kScaleSub. Shapes must
// already match. UNIMPLEMENTED for dtypes outside UpdatableTypes().
absl::Status ApplyUpdate(UpdateKind kind, Tensor* var, const Tensor& value,
                         const Tensor* alpha = nullptr,
                         Writes writes = Writes::kCopyOnWrite);

// CountUpTo: the scalar int32 or int64 `var` before it is incremented by
// one; OUT_OF_RANGE "Reached limit of `limit`" (var unchanged) when it is
// at `limit` already. `name` names the variable in the other errors (not
// initialized, not a scalar, another dtype).
absl::StatusOr<Tensor> CountUp(Tensor* var, int64_t limit, const std::string& name,
                               Writes writes = Writes::kCopyOnWrite);

}  // namespace weft

#endif  // WEFT_OPS_CPU_STATE_UPDATE_H_
