#include "ops/cpu/state_update.h"

#include <cstring>
#include <type_traits>

#include <Eigen/Core>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/wrapping.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// Arithmetic in T, or in float for the 16-bit float types.
template <typename T>
void Update(UpdateKind kind, T* var, const T* value, int64_t n, const T* alpha) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    auto to_f = [](T v) { return Float16ToFloat(v); };
    auto from_f = [](float f) { return FloatToFloat16<T>(f); };
    const float a = alpha != nullptr ? to_f(*alpha) : 1.0f;
    for (int64_t i = 0; i < n; ++i) {
      const float v = to_f(value[i]);
      const float x = to_f(var[i]);
      var[i] = from_f(kind == UpdateKind::kAdd   ? x + v
                      : kind == UpdateKind::kSub ? x - v
                                                 : x - a * v);
    }
  } else {
    // Eigen array expressions: vectorised (GCC leaves the plain loops
    // scalar, as var and value might alias), and signed integers wrap as in
    // TensorFlow (wrapping.h).
    Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> w(var, n);
    Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> v(value, n);
    switch (kind) {
      case UpdateKind::kAdd:
        w = WrapAdd(w, v);
        break;
      case UpdateKind::kSub:
        w = WrapSub(w, v);
        break;
      case UpdateKind::kScaleSub: {
        const auto a = Eigen::Array<T, Eigen::Dynamic, 1>::Constant(n, *alpha);
        w = WrapSub(w, WrapMul(v, a));
        break;
      }
    }
  }
}

}  // namespace

DataTypeVector UpdatableTypes() {
  DataTypeVector v = ArithmeticTypes();
  v.push_back(DT_HALF);
  v.push_back(DT_BFLOAT16);
  v.push_back(DT_COMPLEX64);
  v.push_back(DT_COMPLEX128);
  return v;
}

absl::Status PrepareToWrite(Tensor* var, Writes writes) {
  if (writes == Writes::kInPlace) return absl::OkStatus();
  if (var->BufferIsUnique() || var->NumElements() == 0) return absl::OkStatus();
  Tensor copy = var->DeepCopy();
  if (!copy.IsInitialized()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "out of memory copying variable of shape ", var->shape().DebugString(),
        " for copy-on-write"));
  }
  *var = std::move(copy);
  return absl::OkStatus();
}

absl::Status AssignValue(Tensor* var, const Tensor& value, Writes writes) {
  const bool same = var->IsInitialized() && var->dtype() == value.dtype() &&
                    var->shape() == value.shape();
  if (same && var->SharesBufferWith(value)) return absl::OkStatus();
  if (same && value.NumElements() > 0 &&
      (writes == Writes::kInPlace || var->BufferIsUnique())) {
    CopyElements(value, 0, *var, 0, value.NumElements());
    return absl::OkStatus();
  }
  if (writes == Writes::kCopyOnWrite || value.NumElements() == 0) {
    *var = value;
    return absl::OkStatus();
  }
  Tensor own = value.DeepCopy();  // the variable's buffer is its own
  if (!own.IsInitialized()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "out of memory for a variable of shape ", value.shape().DebugString()));
  }
  *var = std::move(own);
  return absl::OkStatus();
}

absl::Status ApplyUpdate(UpdateKind kind, Tensor* var, const Tensor& value,
                         const Tensor* alpha, Writes writes) {
  absl::Status s = PrepareToWrite(var, writes);
  if (!s.ok()) return s;
  bool ok = false;
  const int64_t n = var->NumElements();
  WEFT_SWITCH_ALL_TYPES(
      var->dtype(),
      if constexpr ((std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) ||
                    kIsComplex<T>) {
        Update<T>(kind, var->data<T>(), value.data<T>(), n,
                  alpha ? alpha->data<T>() : nullptr);
        ok = true;
      } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        Update<T>(kind, var->data<T>(), value.data<T>(), n,
                  alpha ? alpha->data<T>() : nullptr);
        ok = true;
      },
      break);
  if (!ok) {
    return absl::UnimplementedError(absl::StrCat(
        "variable updates are not supported for dtype ",
        DataTypeString(var->dtype())));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> CountUp(Tensor* var, int64_t limit, const std::string& name,
                               Writes writes) {
  if (!var->IsInitialized()) {
    return absl::FailedPreconditionError(
        absl::StrCat("Attempting to use uninitialized value ", name));
  }
  if (var->dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CountUpTo: variable ", name, " must be a scalar, got shape ",
        var->shape().DebugString()));
  }
  int64_t before;
  if (var->dtype() == DT_INT32) {
    before = var->scalar<int32_t>();
  } else if (var->dtype() == DT_INT64) {
    before = var->scalar<int64_t>();
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "CountUpTo: variable ", name, " is ", DataTypeString(var->dtype()),
        ", not int32 or int64"));
  }
  if (before >= limit) {
    return absl::OutOfRangeError(absl::StrCat("Reached limit of ", limit));
  }
  // The value before: shares the old buffer (copy on write), or is a
  // copy of it (in place).
  Tensor out = writes == Writes::kInPlace ? var->DeepCopy() : *var;
  Tensor one = var->dtype() == DT_INT32 ? Tensor::Scalar<int32_t>(1)
                                        : Tensor::Scalar<int64_t>(1);
  WEFT_RETURN_IF_ERROR(ApplyUpdate(UpdateKind::kAdd, var, one, nullptr, writes));
  return out;
}

}  // namespace weft
