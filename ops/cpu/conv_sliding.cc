// Compiled once per ISA (simd_target.h): the kernels of the AVX-512 and
// AVX2 compilations (weft::avx512::SlidingConvRow, ...), and in the
// baseline compilation the entry points, which call the ones for the CPU
// (cpu_isa.h) or decline.
#include "ops/cpu/conv_sliding.h"

#include "ops/cpu/simd_target.h"

#include <algorithm>
#include <array>
#include <utility>

#include "runtime/core/cpu_isa.h"

namespace weft {
WEFT_SIMD_DECLARE(decltype(::weft::SlidingConvRow), SlidingConvRow)
WEFT_SIMD_DECLARE(decltype(::weft::SlidingFilterGradRow), SlidingFilterGradRow)
}  // namespace weft

#if defined(WEFT_SIMD_HAS_ISA)

WEFT_SIMD_BEGIN
#include "ops/cpu/simd_isa.h"

namespace weft {
namespace WEFT_SIMD_NS {
namespace {

using Isa = simd::TargetIsa;
using Vec = Isa::Vec;

// kPixels output pixels (accumulators) of one row; input columns
// [0, kPixels + kWin - 1) are read from one base pointer per three columns,
// as in conv_gemm.cc's tiles (a pointer per column would not fit in the
// general registers). The filter's kWin vectors for a (kh, ch) come from two
// pointers, kw = 0..2 and 3..4, three filter columns apart.
template <int kWin, int kPixels>
void SlidingTile(int64_t win_rows, int64_t c, const float* x,
                 int64_t row_stride, const float* w, int64_t n,
                 Isa::Mask mask, float* y, int64_t ldy) {
  constexpr int kCols = kPixels + kWin - 1;
  constexpr int kGroups = (kCols + 2) / 3;
  const int64_t w_col = c * n;  // between filter columns kw and kw + 1
  Vec acc[kPixels];
#pragma GCC unroll 14
  for (int r = 0; r < kPixels; ++r) acc[r] = Isa::Zero();
  for (int64_t kh = 0; kh < win_rows; ++kh) {
    const float* g[kGroups];
#pragma GCC unroll 6
    for (int q = 0; q < kGroups; ++q) g[q] = x + kh * row_stride + 3 * q * c;
    const float* w0 = w + kh * kWin * w_col;
    const float* w3 = w0 + 3 * w_col;
    for (int64_t ch = 0; ch < c; ++ch, w0 += n, w3 += n) {
      Vec wv[kWin];
#pragma GCC unroll 5
      for (int kw = 0; kw < kWin; ++kw) {
        const float* p = kw < 3 ? w0 + kw * w_col : w3 + (kw - 3) * w_col;
        wv[kw] = Isa::MaskLoad(mask, p);
      }
#pragma GCC unroll 18
      for (int j = 0; j < kCols; ++j) {
        const Vec xv = Isa::Broadcast(g[j / 3][(j % 3) * c]);
#pragma GCC unroll 5
        for (int kw = 0; kw < kWin; ++kw) {
          const int r = j - kw;
          if (r >= 0 && r < kPixels) acc[r] = Isa::Fma(xv, wv[kw], acc[r]);
        }
      }
#pragma GCC unroll 6
      for (int q = 0; q < kGroups; ++q) ++g[q];
    }
  }
#pragma GCC unroll 14
  for (int r = 0; r < kPixels; ++r) Isa::MaskStore(y + r * ldy, mask, acc[r]);
}

// Pixels a tile: the accumulators, the kWin filter vectors and a broadcast
// fill the vector registers (AVX2: 10 for 5-wide windows), and no more
// than 14, which the general registers for the input's base pointers allow.
template <int kWin>
constexpr int kMaxPixels = std::min(14, Isa::kRegisters - kWin - 1);
using SlidingFn = void (*)(int64_t, int64_t, const float*, int64_t,
                           const float*, int64_t, Isa::Mask, float*, int64_t);
template <int kWin, int... kPixelsMinus1>
constexpr std::array<SlidingFn, sizeof...(kPixelsMinus1)> SlidingTable(
    std::integer_sequence<int, kPixelsMinus1...>) {
  return {&SlidingTile<kWin, kPixelsMinus1 + 1>...};
}
template <int kWin>
constexpr auto kSliding =
    SlidingTable<kWin>(std::make_integer_sequence<int, kMaxPixels<kWin>>());

template <int kWin>
void SlidingRow(int64_t m, int64_t n, int64_t win_rows, int64_t c,
                const float* x, int64_t row_stride, const float* w, float* y,
                int64_t ldy) {
  const Isa::Mask mask = Isa::Lanes(n);
  // Equal tiles of at most kMaxPixels (m = 16 runs 8 + 8, not 14 + 2).
  const int64_t tiles = (m + kMaxPixels<kWin> - 1) / kMaxPixels<kWin>;
  for (int64_t t = 0, i0 = 0; t < tiles; ++t) {
    const int64_t pixels = m * (t + 1) / tiles - i0;
    kSliding<kWin>[pixels - 1](win_rows, c, x + i0 * c, row_stride, w, n, mask,
                               y + i0 * ldy, ldy);
    i0 += pixels;
  }
}

#if defined(WEFT_SIMD_AVX512)

// The filter gradient's counterpart, for one window row kh and one input
// channel ch: dw[kw][ch][0:32] over output pixels ow < kPixels of `rows`
// rows, where input column j meets dy[j - kw]: each input value is
// broadcast once against the kWin dy vectors (of 2 x 16 channels) that it
// meets, which stay in registers while the window slides. n is fixed at 32
// so dy's pixels are immediate offsets (a register per pixel would spill).
template <int kWin, int kPixels>
void SlidingFilterTile(int64_t rows, int64_t c, const float* x, int64_t x_row,
                       const float* dy, int64_t dy_row, float* dw,
                       bool accumulate) {
  constexpr int n = 32;
  constexpr int kCols = kPixels + kWin - 1;
  constexpr int kGroups = (kCols + 2) / 3;
  for (int64_t ch = 0; ch < c; ++ch) {
    __m512 acc0[kWin], acc1[kWin];
#pragma GCC unroll 5
    for (int kw = 0; kw < kWin; ++kw) acc0[kw] = acc1[kw] = _mm512_setzero_ps();
    for (int64_t r = 0; r < rows; ++r) {
      const float* g[kGroups];
#pragma GCC unroll 6
      for (int q = 0; q < kGroups; ++q) g[q] = x + r * x_row + 3 * q * c + ch;
      const float* dr = dy + r * dy_row;
      __m512 d0[kPixels], d1[kPixels];
#pragma GCC unroll 18
      for (int j = 0; j < kCols; ++j) {
        if (j < kPixels) {
          d0[j] = _mm512_loadu_ps(dr + j * n);
          d1[j] = _mm512_loadu_ps(dr + j * n + 16);
        }
        const __m512 xv = _mm512_set1_ps(g[j / 3][(j % 3) * c]);
#pragma GCC unroll 5
        for (int kw = 0; kw < kWin; ++kw) {
          const int ow = j - kw;
          if (ow >= 0 && ow < kPixels) {
            acc0[kw] = _mm512_fmadd_ps(xv, d0[ow], acc0[kw]);
            acc1[kw] = _mm512_fmadd_ps(xv, d1[ow], acc1[kw]);
          }
        }
      }
    }
#pragma GCC unroll 5
    for (int kw = 0; kw < kWin; ++kw) {
      float* out = dw + (kw * c + ch) * n;
      if (accumulate) {
        acc0[kw] = _mm512_add_ps(acc0[kw], _mm512_loadu_ps(out));
        acc1[kw] = _mm512_add_ps(acc1[kw], _mm512_loadu_ps(out + 16));
      }
      _mm512_storeu_ps(out, acc0[kw]);
      _mm512_storeu_ps(out + 16, acc1[kw]);
    }
  }
}

using SlidingFilterFn = void (*)(int64_t, int64_t, const float*, int64_t,
                                 const float*, int64_t, float*, bool);
template <int kWin, int... kPixelsMinus1>
constexpr std::array<SlidingFilterFn, sizeof...(kPixelsMinus1)> SlidingFilterTable(
    std::integer_sequence<int, kPixelsMinus1...>) {
  return {&SlidingFilterTile<kWin, kPixelsMinus1 + 1>...};
}
constexpr int kMaxFilterPixels = 14;
constexpr auto kSlidingFilter3 =
    SlidingFilterTable<3>(std::make_integer_sequence<int, kMaxFilterPixels>());
constexpr auto kSlidingFilter5 =
    SlidingFilterTable<5>(std::make_integer_sequence<int, kMaxFilterPixels>());

#endif  // WEFT_SIMD_AVX512

}  // namespace

bool SlidingFilterGradRow(int64_t rows, int64_t m, int64_t n, int64_t win_cols,
                          int64_t c, const float* x, int64_t x_row,
                          const float* dy, int64_t dy_row, float* dw,
                          bool accumulate) {
#if defined(WEFT_SIMD_AVX512)
  if (n != 32 || m < 1 || m > kMaxFilterPixels || (win_cols != 3 && win_cols != 5)) {
    return false;
  }
  const auto& table = win_cols == 3 ? kSlidingFilter3 : kSlidingFilter5;
  table[m - 1](rows, c, x, x_row, dy, dy_row, dw, accumulate);
  return true;
#else
  (void)rows, (void)m, (void)n, (void)win_cols, (void)c, (void)x, (void)x_row,
      (void)dy, (void)dy_row, (void)dw, (void)accumulate;
  return false;
#endif
}

bool SlidingConvRow(int64_t m, int64_t n, int64_t win_rows, int64_t win_cols,
                    int64_t c, const float* x, int64_t row_stride,
                    const float* w, float* y, int64_t ldy) {
  if (n < 2 || n > Isa::kLanes || (win_cols != 3 && win_cols != 5)) return false;
  if (m <= 0) return true;
  if (win_cols == 3) {
    SlidingRow<3>(m, n, win_rows, c, x, row_stride, w, y, ldy);
  } else {
    SlidingRow<5>(m, n, win_rows, c, x, row_stride, w, y, ldy);
  }
  return true;
}

}  // namespace WEFT_SIMD_NS
}  // namespace weft
WEFT_SIMD_END

#else  // the baseline compilation: the dispatchers (no portable kernels)

namespace weft {

bool SlidingFilterGradRow(int64_t rows, int64_t m, int64_t n, int64_t win_cols,
                          int64_t c, const float* x, int64_t x_row,
                          const float* dy, int64_t dy_row, float* dw,
                          bool accumulate) {
  auto* f = WEFT_SIMD_CHOOSE(SlidingFilterGradRow);
  return f != nullptr &&
         f(rows, m, n, win_cols, c, x, x_row, dy, dy_row, dw, accumulate);
}

bool SlidingConvRow(int64_t m, int64_t n, int64_t win_rows, int64_t win_cols,
                    int64_t c, const float* x, int64_t row_stride,
                    const float* w, float* y, int64_t ldy) {
  auto* f = WEFT_SIMD_CHOOSE(SlidingConvRow);
  return f != nullptr && f(m, n, win_rows, win_cols, c, x, row_stride, w, y, ldy);
}

}  // namespace weft

#endif  // WEFT_SIMD_HAS_ISA
