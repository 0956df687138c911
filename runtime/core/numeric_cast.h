// Floating-point to integer conversions that are defined for every input.
//
// static_cast<I>(v) for a floating-point v is undefined behaviour when v,
// truncated toward zero, does not fit in I: NaN, the infinities, 1e30 to
// int32, -1 to uint8. Compilers optimise on the assumption that it never
// happens, and UBSan reports it. Tensor values, feeds and attributes come
// from users, so code that turns them into integers goes through one of
// these. Header-only; SaturatingCast is cheap enough for a kernel's inner
// loop (compares and selects, which the compiler vectorises).
#ifndef WEFT_RUNTIME_CORE_NUMERIC_CAST_H_
#define WEFT_RUNTIME_CORE_NUMERIC_CAST_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace weft {
namespace numeric_cast_internal {

// 2^digits, one past I's largest value: a power of two, so exact in F.
template <typename I, typename F>
inline F UpperExclusive() {
  return F(2) * static_cast<F>(uint64_t{1} << (std::numeric_limits<I>::digits - 1));
}

// I's smallest value, exact in F (0 or minus a power of two).
template <typename I, typename F>
inline F LowerInclusive() {
  if constexpr (std::is_signed_v<I>) {
    return -UpperExclusive<I, F>();
  } else {
    return F(0);
  }
}

}  // namespace numeric_cast_internal

// Whether static_cast<I>(v) is defined: v is not NaN and trunc(v) lies in
// I's range.
template <typename I, typename F>
inline bool TruncatesInto(F v) {
  static_assert(std::is_integral_v<I> && std::is_floating_point_v<F>);
  const F t = std::trunc(v);  // NaN stays NaN and fails both compares
  return t >= numeric_cast_internal::LowerInclusive<I, F>() &&
         t < numeric_cast_internal::UpperExclusive<I, F>();
}

// v truncated toward zero, clamped to I's range; NaN gives 0. This is XLA's
// rule for converting floats to integers (TensorFlow leaves it to the CPU:
// x86 gives INT_MIN for any of these).
template <typename I, typename F>
inline I SaturatingCast(F v) {
  static_assert(std::is_integral_v<I> && std::is_floating_point_v<F>);
  if (v != v) return I(0);
  if (v >= numeric_cast_internal::UpperExclusive<I, F>()) {
    return std::numeric_limits<I>::max();
  }
  if (v <= numeric_cast_internal::LowerInclusive<I, F>()) {
    return std::numeric_limits<I>::min();
  }
  return static_cast<I>(v);
}

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_NUMERIC_CAST_H_
