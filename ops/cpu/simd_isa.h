// The vector instruction sets Weft's CPU kernels are written for, as small
// traits types: the vector type and the handful of operations the kernels
// use (loads and stores, whole or masked to the first lanes, FMA, compare
// and select, a transpose), the register file's size, and the SGEMM's
// register tile and cache blocks for the machines with that ISA. A kernel
// is written once over a traits type and compiled, once per ISA, for
// TargetIsa, the ISA of that compilation (simd_target.h): AVX-512, or
// AVX2 + FMA. Include this header only between WEFT_SIMD_BEGIN and
// WEFT_SIMD_END.
//
//   #if defined(WEFT_SIMD_ISA_AVAILABLE)
//   using Isa = simd::TargetIsa;
//   Isa::Vec acc = Isa::Fma(Isa::Broadcast(a), Isa::Load(b), Isa::Zero());
//   Isa::Vec pos = Isa::Select(Isa::Less(Isa::Zero(), x), g, Isa::Zero());
//   #endif
//
// Users: the SGEMM's micro-kernel and packing (sgemm_kernel.h), the
// convolutions' register-tiled kernels (conv_gemm.cc, conv_sliding.cc,
// conv_im2col.h: the mask operations for partial vectors, kRegisters to size
// their tiles), the max-pooling gradients' arg max (pool_max_route.cc),
// ReluGrad (relu_grad.cc: compare and select), the optimizer updates
// (optimizer_update.cc: arithmetic, square root and division) and Sigmoid
// and Tanh (activation_simd.cc: min, max, rounding, powers of 2, signs).
//
// Add, Sub, Mul, Div and Sqrt are IEEE operations, correctly rounded as the
// scalar ones are, and the ISA compilations never fuse a multiply and an add
// the code did not ask to fuse (-ffp-contract=off, ops/simd.bzl): a loop
// written without Fma gives the same bits on every ISA.
//
// The SGEMM's C tile is kRows x (2 * kLanes) floats, held in 2 * kRows
// accumulators; each depth step loads 2 B vectors and broadcasts kRows A
// values, so the tile is sized to leave exactly that many registers free:
//   AVX-512: 12 x 32, 24 accumulators + 2 + 1 of 32 zmm registers;
//   AVX2:     6 x 16, 12 accumulators + 2 + 1 of 16 ymm registers
//            (the classic Haswell/Zen shape; 8x8 or 4x24 leave fewer
//            FMAs per load or spill).
// Stateless; every function is safe to call from any thread.
#ifndef WEFT_OPS_CPU_SIMD_ISA_H_
#define WEFT_OPS_CPU_SIMD_ISA_H_

#include "ops/cpu/simd_target.h"  // <immintrin.h>, <algorithm>, <cstdint>

// Defined in the compilations that have a traits type (TargetIsa): the
// AVX-512 and the AVX2 + FMA ones.
#if defined(WEFT_SIMD_HAS_ISA)
#define WEFT_SIMD_ISA_AVAILABLE 1
#endif

namespace weft {
namespace simd {

#if defined(WEFT_SIMD_AVX512)
struct Avx512 {
  using Vec = __m512;
  static constexpr int64_t kLanes = 16;
  static constexpr int kRegisters = 32;
  static constexpr int64_t kRows = 12;  // C tile rows (A sliver height)
  // Depth block: a 12 x 256 A sliver (13 KiB) stays in L1 while it meets a
  // column block of 16 B slivers (32 KiB each, 512 KiB) held in L2.
  static constexpr int64_t kDepth = 256;
  static constexpr int64_t kColBlock = 16;
  // B slivers per column panel (4096 columns, 4 MiB packed, shared in L3).
  static constexpr int64_t kPanelSlivers = 128;
  // A slivers per row block (96 rows).
  static constexpr int64_t kMaxBlockSlivers = 8;
  // Whole slivers of a transposed B per pack task (128 columns).
  static constexpr int64_t kPackSlivers = 4;

  static Vec Zero() { return _mm512_setzero_ps(); }
  static Vec Broadcast(float x) { return _mm512_set1_ps(x); }
  static Vec Load(const float* p) { return _mm512_load_ps(p); }  // aligned
  static Vec LoadU(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, Vec v) { _mm512_store_ps(p, v); }  // aligned
  static void StoreU(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec Fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static Vec Add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static Vec Sub(Vec a, Vec b) { return _mm512_sub_ps(a, b); }
  static Vec Mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  static Vec Div(Vec a, Vec b) { return _mm512_div_ps(a, b); }
  static Vec Sqrt(Vec a) { return _mm512_sqrt_ps(a); }  // correctly rounded
  static Vec Min(Vec a, Vec b) { return _mm512_min_ps(a, b); }
  static Vec Max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
  // To the nearest integer (ties to even), as a float.
  static Vec Round(Vec a) {
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // 2^n for integer-valued n in [-126, 127], through the exponent bits.
  static Vec Pow2(Vec n) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(
        _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
  }
  static Vec Abs(Vec a) {
    return _mm512_castsi512_ps(
        _mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7fffffff)));
  }
  // |mag| with the sign of `sign`.
  static Vec CopySign(Vec mag, Vec sign) {
    return _mm512_castsi512_ps(_mm512_or_si512(
        _mm512_castps_si512(Abs(mag)),
        _mm512_and_si512(_mm512_castps_si512(sign),
                         _mm512_set1_epi32(static_cast<int32_t>(0x80000000u)))));
  }

  // The first `count` lanes (all for count >= kLanes, none for count <= 0);
  // masked-off lanes load as 0 and are not stored.
  using Mask = __mmask16;
  static Mask Lanes(int64_t count) {
    if (count >= kLanes) return 0xFFFF;
    return count <= 0 ? 0 : static_cast<Mask>((1u << count) - 1);
  }
  static Vec MaskLoad(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  static void MaskStore(float* p, Mask m, Vec v) { _mm512_mask_storeu_ps(p, m, v); }
  static float ReduceAdd(Vec v) { return _mm512_reduce_add_ps(v); }

  // Lane-wise a < b and a == b (false where either is NaN), and m ? a : b.
  static Mask Less(Vec a, Vec b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static Mask Equal(Vec a, Vec b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static Mask IsNan(Vec a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static Vec Select(Mask m, Vec a, Vec b) { return _mm512_mask_blend_ps(m, b, a); }

  // Transposes the 16 x 16 block whose rows start at src[i * ld] into
  // dst[i * ldd] (dst row i = source column i), in registers.
  static void Transpose(const float* src, int64_t ld, float* dst,
                        int64_t ldd) {
    __m512 r[16], t[16];
    for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * ld);
    // Interleave pairs of rows, then pairs of pairs: 4 x 4 blocks
    // transposed inside each 128-bit lane.
    for (int i = 0; i < 16; i += 2) {
      t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
      r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
      r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
      r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
      r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    // Then move the 128-bit lanes across vectors, in two rounds.
    for (int i = 0; i < 4; ++i) {
      t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
      t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xDD);
      t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
      t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xDD);
    }
    for (int i = 0; i < 8; ++i) {
      r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
      r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
    }
    for (int i = 0; i < 16; ++i) _mm512_storeu_ps(dst + i * ldd, r[i]);
  }
};
#endif  // WEFT_SIMD_AVX512

#if defined(WEFT_SIMD_AVX2)
struct Avx2 {
  using Vec = __m256;
  static constexpr int64_t kLanes = 8;
  static constexpr int kRegisters = 16;
  static constexpr int64_t kRows = 6;
  // Sized for Zen 3 (32 KiB L1d, 512 KiB L2 a core, L3 shared): a 6 x 256 A
  // sliver (6.4 KiB) stays in L1 while it meets a column block of 16 B
  // slivers (16 KiB each, 256 KiB) in L2, beside the packed A block.
  static constexpr int64_t kDepth = 256;
  static constexpr int64_t kColBlock = 16;
  // 4096 columns a panel, as on AVX-512 (4 MiB packed, in L3).
  static constexpr int64_t kPanelSlivers = 256;
  // 96 rows a row block, as on AVX-512.
  static constexpr int64_t kMaxBlockSlivers = 16;
  static constexpr int64_t kPackSlivers = 8;  // 128 columns of B^T a task

  static Vec Zero() { return _mm256_setzero_ps(); }
  static Vec Broadcast(float x) { return _mm256_set1_ps(x); }
  static Vec Load(const float* p) { return _mm256_load_ps(p); }  // aligned
  static Vec LoadU(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, Vec v) { _mm256_store_ps(p, v); }  // aligned
  static void StoreU(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec Fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static Vec Add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static Vec Sub(Vec a, Vec b) { return _mm256_sub_ps(a, b); }
  static Vec Mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  static Vec Div(Vec a, Vec b) { return _mm256_div_ps(a, b); }
  static Vec Sqrt(Vec a) { return _mm256_sqrt_ps(a); }  // correctly rounded
  // As Avx512's.
  static Vec Min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
  static Vec Max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
  static Vec Round(Vec a) {
    return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  static Vec Pow2(Vec n) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
  }
  static Vec Abs(Vec a) {
    return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
  }
  static Vec CopySign(Vec mag, Vec sign) {
    const __m256 bit = _mm256_castsi256_ps(
        _mm256_set1_epi32(static_cast<int32_t>(0x80000000u)));
    return _mm256_or_ps(Abs(mag), _mm256_and_ps(sign, bit));
  }

  // As Avx512's; the mask is a vector with all bits set in the lanes kept.
  using Mask = __m256i;
  static Mask Lanes(int64_t count) {
    const int32_t c = static_cast<int32_t>(std::clamp<int64_t>(count, 0, kLanes));
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(c),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Vec MaskLoad(Mask m, const float* p) { return _mm256_maskload_ps(p, m); }
  static void MaskStore(float* p, Mask m, Vec v) { _mm256_maskstore_ps(p, m, v); }
  // As Avx512's: compares give all bits set in the lanes where true.
  static Mask Less(Vec a, Vec b) {
    return _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_LT_OQ));
  }
  static Mask Equal(Vec a, Vec b) {
    return _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_EQ_OQ));
  }
  static Mask IsNan(Vec a) {
    return _mm256_castps_si256(_mm256_cmp_ps(a, a, _CMP_UNORD_Q));
  }
  static Vec Select(Mask m, Vec a, Vec b) {
    return _mm256_blendv_ps(b, a, _mm256_castsi256_ps(m));
  }
  static float ReduceAdd(Vec v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
  }

  // Transposes the 8 x 8 block whose rows start at src[i * ld] into
  // dst[i * ldd], in registers: 4 x 4 blocks inside each 128-bit lane
  // first, as above, then one exchange of lanes between rows i and i + 4.
  static void Transpose(const float* src, int64_t ld, float* dst,
                        int64_t ldd) {
    __m256 r[8], t[8];
    for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ld);
    for (int i = 0; i < 8; i += 2) {
      t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
      r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
      r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
      r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
      r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    // r[i] (i < 4) holds columns i and i + 4 of rows 0-3, r[i + 4] the same
    // of rows 4-7.
    for (int i = 0; i < 4; ++i) {
      _mm256_storeu_ps(dst + i * ldd,
                       _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
      _mm256_storeu_ps(dst + (i + 4) * ldd,
                       _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
    }
  }
};
#endif  // WEFT_SIMD_AVX2

#if defined(WEFT_SIMD_AVX512)
using TargetIsa = Avx512;
#elif defined(WEFT_SIMD_AVX2)
using TargetIsa = Avx2;
#endif

}  // namespace simd
}  // namespace weft

#endif  // WEFT_OPS_CPU_SIMD_ISA_H_
