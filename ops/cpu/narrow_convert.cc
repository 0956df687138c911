// Compiled once per ISA (simd_target.h); the baseline compilation holds the
// scalar loops (Eigen's casts) and the dispatchers (cpu_isa.h). AVX-512 has
// half conversions (vcvtph2ps, vcvtps2ph); the AVX2 compilation, whose CPU
// check does not include F16C, converts half one element at a time and
// bfloat16 with integer vectors.
#include "ops/cpu/narrow_convert.h"

#include "ops/cpu/simd_target.h"

#include <Eigen/Core>

#include "runtime/core/cpu_isa.h"

namespace weft {
namespace {

// Eigen's conversions (outside any ISA region: baseline code).
inline float WidenOne(Half v) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(v.bits));
}
inline Half NarrowHalf(float f) {
  return Half{Eigen::numext::bit_cast<uint16_t>(Eigen::half(f))};
}
inline float WidenOne(BFloat16 v) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(v.bits));
}
inline BFloat16 NarrowBFloat16(float f) {
  return BFloat16{Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(f))};
}

}  // namespace

WEFT_SIMD_DECLARE(decltype(::weft::HalfToFloatN), HalfToFloatN)
WEFT_SIMD_DECLARE(decltype(::weft::FloatToHalfN), FloatToHalfN)
WEFT_SIMD_DECLARE(decltype(::weft::BFloat16ToFloatN), BFloat16ToFloatN)
WEFT_SIMD_DECLARE(decltype(::weft::FloatToBFloat16N), FloatToBFloat16N)
}  // namespace weft

#if defined(WEFT_SIMD_HAS_ISA)

WEFT_SIMD_BEGIN
namespace weft {
namespace WEFT_SIMD_NS {

#if defined(WEFT_SIMD_AVX512)

void HalfToFloatN(const Half* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(h));
  }
  for (; i < n; ++i) out[i] = WidenOne(in[i]);
}

void FloatToHalfN(const float* in, Half* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = NarrowHalf(in[i]);
}

void BFloat16ToFloatN(const BFloat16* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    const __m512i w = _mm512_slli_epi32(_mm512_cvtepu16_epi32(b), 16);
    _mm512_storeu_ps(out + i, _mm512_castsi512_ps(w));
  }
  for (; i < n; ++i) out[i] = WidenOne(in[i]);
}

void FloatToBFloat16N(const float* in, BFloat16* out, int64_t n) {
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i bias = _mm512_set1_epi32(0x7fff);
  const __m512i sign = _mm512_set1_epi32(0x8000);
  const __m512i quiet_nan = _mm512_set1_epi32(0x7fc0);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(in + i);
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i high = _mm512_srli_epi32(bits, 16);
    // Round to nearest even: add 0x7fff and the kept part's lowest bit.
    __m512i r = _mm512_add_epi32(bits, _mm512_add_epi32(bias, _mm512_and_si512(high, one)));
    r = _mm512_srli_epi32(r, 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_and_si512(high, sign), quiet_nan));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtepi32_epi16(r));
  }
  for (; i < n; ++i) out[i] = NarrowBFloat16(in[i]);
}

#else  // AVX2

void HalfToFloatN(const Half* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = WidenOne(in[i]);
}

void FloatToHalfN(const float* in, Half* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = NarrowHalf(in[i]);
}

void BFloat16ToFloatN(const BFloat16* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16);
    _mm256_storeu_ps(out + i, _mm256_castsi256_ps(w));
  }
  for (; i < n; ++i) out[i] = WidenOne(in[i]);
}

void FloatToBFloat16N(const float* in, BFloat16* out, int64_t n) {
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i bias = _mm256_set1_epi32(0x7fff);
  const __m256i sign = _mm256_set1_epi32(0x8000);
  const __m256i quiet_nan = _mm256_set1_epi32(0x7fc0);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(in + i);
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i high = _mm256_srli_epi32(bits, 16);
    // Round to nearest even: add 0x7fff and the kept part's lowest bit.
    __m256i r = _mm256_add_epi32(bits, _mm256_add_epi32(bias, _mm256_and_si256(high, one)));
    r = _mm256_srli_epi32(r, 16);
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    r = _mm256_blendv_epi8(r, _mm256_or_si256(_mm256_and_si256(high, sign), quiet_nan), nan);
    // 8 values below 2^16 to 8 uint16: pack within lanes, then order them.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0xD8);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_castsi256_si128(packed));
  }
  for (; i < n; ++i) out[i] = NarrowBFloat16(in[i]);
}

#endif  // WEFT_SIMD_AVX512

}  // namespace WEFT_SIMD_NS
}  // namespace weft
WEFT_SIMD_END

#else  // the baseline compilation

namespace weft {

void HalfToFloatN(const Half* in, float* out, int64_t n) {
  if (auto* fn = WEFT_SIMD_CHOOSE(HalfToFloatN)) return fn(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = WidenOne(in[i]);
}

void FloatToHalfN(const float* in, Half* out, int64_t n) {
  if (auto* fn = WEFT_SIMD_CHOOSE(FloatToHalfN)) return fn(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = NarrowHalf(in[i]);
}

void BFloat16ToFloatN(const BFloat16* in, float* out, int64_t n) {
  if (auto* fn = WEFT_SIMD_CHOOSE(BFloat16ToFloatN)) return fn(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = WidenOne(in[i]);
}

void FloatToBFloat16N(const float* in, BFloat16* out, int64_t n) {
  if (auto* fn = WEFT_SIMD_CHOOSE(FloatToBFloat16N)) return fn(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = NarrowBFloat16(in[i]);
}

}  // namespace weft

#endif  // WEFT_SIMD_HAS_ISA
