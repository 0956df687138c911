// Element conversions for kernels that compute in float whatever their
// tensors hold: half and bfloat16 through their exact widening and
// round-to-nearest-even narrowing (what Eigen::half / bfloat16 casts do),
// every other type by static_cast.
//
//   out[i] = FromFloat<T>(ToFloat(a[i]) * k);
//
// Kernels that compute in T itself except for the narrow floats use
// FloatIfNarrow<T> (float for half and bfloat16, T otherwise):
//
//   FloatIfNarrow<T> acc = ToFloatIfNarrow(a[0]);  ...;  out = FromFloatIfNarrow<T>(acc);
#ifndef WEFT_OPS_CPU_FLOAT_CONVERT_H_
#define WEFT_OPS_CPU_FLOAT_CONVERT_H_

#include <type_traits>

#include "runtime/core/types.h"

namespace weft {

template <typename T>
inline float ToFloat(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return HalfToFloat(v);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16ToFloat(v);
  } else {
    return static_cast<float>(v);
  }
}

template <typename T>
inline T FromFloat(float v) {
  if constexpr (std::is_same_v<T, Half>) {
    return FloatToHalf(v);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return FloatToBFloat16(v);
  } else {
    return static_cast<T>(v);
  }
}

// float for half and bfloat16, T itself for every other type.
template <typename T>
using FloatIfNarrow =
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <typename T>
inline FloatIfNarrow<T> ToFloatIfNarrow(T v) {
  if constexpr (std::is_same_v<FloatIfNarrow<T>, T>) {
    return v;
  } else {
    return ToFloat(v);
  }
}

template <typename T>
inline T FromFloatIfNarrow(FloatIfNarrow<T> v) {
  if constexpr (std::is_same_v<FloatIfNarrow<T>, T>) {
    return v;
  } else {
    return FromFloat<T>(v);
  }
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_FLOAT_CONVERT_H_
