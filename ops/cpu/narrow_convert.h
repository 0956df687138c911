// Bulk conversions between float and half / bfloat16, vectorized per ISA
// (simd_target.h): widening is exact; narrowing rounds to nearest even, as
// Eigen's casts (runtime/core/types.h) do, a NaN giving a quiet NaN of its
// sign. Thread-safe; no state.
//
//   HalfToFloatN(h, f, n);   // f[i] = float(h[i]) over [0, n)
#ifndef WEFT_OPS_CPU_NARROW_CONVERT_H_
#define WEFT_OPS_CPU_NARROW_CONVERT_H_

#include <cstdint>

#include "runtime/core/types.h"

namespace weft {

void HalfToFloatN(const Half* in, float* out, int64_t n);
void FloatToHalfN(const float* in, Half* out, int64_t n);
void BFloat16ToFloatN(const BFloat16* in, float* out, int64_t n);
void FloatToBFloat16N(const float* in, BFloat16* out, int64_t n);

}  // namespace weft

#endif  // WEFT_OPS_CPU_NARROW_CONVERT_H_
