#include "ops/cpu/state_update.h"

#include <cstring>
#include <type_traits>

#include <Eigen/Core>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/wrapping.h"

namespace weft {
namespace {

// Arithmetic in T, or in float for the 16-bit float types.
template <typename T>
void Update(UpdateKind kind, T* var, const T* value, int64_t n, const T* alpha) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    auto to_f = [](T v) {
      if constexpr (std::is_same_v<T, Half>) {
        return HalfToFloat(v);
      } else {
        return BFloat16ToFloat(v);
      }
    };
    auto from_f = [](float f) {
      if constexpr (std::is_same_v<T, Half>) {
        return FloatToHalf(f);
      } else {
        return FloatToBFloat16(f);
      }
    };
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
  return v;
}

absl::Status MakeBufferUnique(Tensor* var) {
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

void AssignValue(Tensor* var, const Tensor& value) {
  if (var->IsInitialized() && var->dtype() == value.dtype() &&
      var->shape() == value.shape() && var->BufferIsUnique() &&
      !var->SharesBufferWith(value) && value.NumElements() > 0) {
    CopyElements(value, 0, *var, 0, value.NumElements());
    return;
  }
  *var = value;
}

absl::Status ApplyUpdate(UpdateKind kind, Tensor* var, const Tensor& value,
                         const Tensor* alpha) {
  absl::Status s = MakeBufferUnique(var);
  if (!s.ok()) return s;
  bool ok = false;
  const int64_t n = var->NumElements();
  WEFT_SWITCH_ALL_TYPES(
      var->dtype(),
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
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

}  // namespace weft
