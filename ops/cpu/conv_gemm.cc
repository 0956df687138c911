#include "ops/cpu/conv_gemm.h"

#include <algorithm>
#include <array>
#include <utility>
#include <type_traits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <Eigen/Core>

namespace weft {
namespace {

template <typename T>
void EigenSmallGemm(int64_t m, int64_t n, int64_t k, const T* a,
                    const GemmALayout& la, const T* b, int64_t ldb, T* c,
                    int64_t ldc, bool accumulate) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Strides = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
  Eigen::Map<Matrix, 0, Eigen::OuterStride<>> cm(c, m, n, Eigen::OuterStride<>(ldc));
  // One product per segment of the depth, summed.
  const T* seg = a;
  for (int64_t p0 = 0; p0 < k; p0 += la.seg_len, seg += la.seg_stride) {
    const int64_t len = std::min(la.seg_len, k - p0);
    Eigen::Map<const Matrix, 0, Strides> am(seg, m, len, Strides(la.row, la.depth));
    Eigen::Map<const Matrix, 0, Eigen::OuterStride<>> bm(
        b + p0 * ldb, len, n, Eigen::OuterStride<>(ldb));
    if (accumulate || p0 > 0) {
      cm.noalias() += am * bm;
    } else {
      cm.noalias() = am * bm;
    }
  }
}

#if defined(__AVX512F__)

// The register tile: C rows [0, kRows) x columns [0, 16 * kVecs) (lanes past
// n masked off by m0/m1). kVecs == 2 holds 2 * kRows accumulators, so up to
// 14 rows fill 28 of the 32 zmm registers and leave the two B vectors and a
// broadcast. A's rows are read from one base pointer per three rows
// (base, base + row, base + 2 * row are one scaled-index address each):
// a pointer per row would need more general registers than x86 has, and the
// spilled pointers would cost a load per broadcast.
template <int kVecs, int kRows>
void Tile(int64_t k, const float* a, const GemmALayout& la, const float* b,
          int64_t ldb, float* c, int64_t ldc, __mmask16 m0, __mmask16 m1,
          bool accumulate) {
  constexpr int kGroups = (kRows + 2) / 3;
  const int64_t row = la.row;
  __m512 acc0[kRows], acc1[kRows];
#pragma GCC unroll 14
  for (int r = 0; r < kRows; ++r) {
    acc0[r] = _mm512_setzero_ps();
    if (kVecs == 2) acc1[r] = _mm512_setzero_ps();
  }
  const float* bp = b;
  // Segments are short in a filter gradient (one output row, 14 steps in
  // the CNN), so their starts are stepped, not computed with a division.
  const float* seg = a;
  for (int64_t p0 = 0; p0 < k; p0 += la.seg_len, seg += la.seg_stride) {
    const int64_t len = std::min(la.seg_len, k - p0);
    const float* g[kGroups];
#pragma GCC unroll 5
    for (int q = 0; q < kGroups; ++q) g[q] = seg + 3 * q * row;
    for (int64_t j = 0; j < len; ++j, bp += ldb) {
      const __m512 b0 = _mm512_maskz_loadu_ps(m0, bp);
      const __m512 b1 = kVecs == 2 ? _mm512_maskz_loadu_ps(m1, bp + 16) : b0;
#pragma GCC unroll 14
      for (int r = 0; r < kRows; ++r) {
        const __m512 av = _mm512_set1_ps(g[r / 3][(r % 3) * row]);
        acc0[r] = _mm512_fmadd_ps(av, b0, acc0[r]);
        if (kVecs == 2) acc1[r] = _mm512_fmadd_ps(av, b1, acc1[r]);
      }
#pragma GCC unroll 5
      for (int q = 0; q < kGroups; ++q) g[q] += la.depth;
    }
  }
#pragma GCC unroll 14
  for (int r = 0; r < kRows; ++r) {
    float* cr = c + r * ldc;
    if (accumulate) {
      acc0[r] = _mm512_add_ps(acc0[r], _mm512_maskz_loadu_ps(m0, cr));
      if (kVecs == 2) acc1[r] = _mm512_add_ps(acc1[r], _mm512_maskz_loadu_ps(m1, cr + 16));
    }
    _mm512_mask_storeu_ps(cr, m0, acc0[r]);
    if (kVecs == 2) _mm512_mask_storeu_ps(cr + 16, m1, acc1[r]);
  }
}

// Tile<kVecs, rows> for rows in [1, kMaxTileRows], through a table built at
// compile time.
constexpr int kMaxTileRows = 14;
using TileFn = void (*)(int64_t, const float*, const GemmALayout&, const float*,
                        int64_t, float*, int64_t, __mmask16, __mmask16, bool);
template <int kVecs, int... kRowsMinus1>
constexpr std::array<TileFn, sizeof...(kRowsMinus1)> TileTable(
    std::integer_sequence<int, kRowsMinus1...>) {
  return {&Tile<kVecs, kRowsMinus1 + 1>...};
}
constexpr auto kTiles1 = TileTable<1>(std::make_integer_sequence<int, kMaxTileRows>());
constexpr auto kTiles2 = TileTable<2>(std::make_integer_sequence<int, kMaxTileRows>());

inline __mmask16 Lanes(int64_t count) {
  if (count >= 16) return 0xFFFF;
  if (count <= 0) return 0;
  return static_cast<__mmask16>((1u << count) - 1);
}

// n == 1 with A's segments and B contiguous: one dot product per row of C,
// 16 depth steps at a time (a convolution down to one channel). kRows rows
// at once share B's loads and keep kRows FMA chains in flight (one chain
// waits on the FMA latency).
template <int kRows>
void AvxDotRowTile(int64_t k, const float* a, const GemmALayout& la,
                   const float* b, float* c, int64_t ldc, bool accumulate) {
  __m512 acc[kRows];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) acc[r] = _mm512_setzero_ps();
  const float* seg = a;
  for (int64_t p0 = 0; p0 < k; p0 += la.seg_len, seg += la.seg_stride) {
    const float* bs = b + p0;
    const int64_t len = std::min(la.seg_len, k - p0);
    for (int64_t j = 0; j < len; j += 16) {
      const __mmask16 lanes = Lanes(len - j);
      const __m512 bv = _mm512_maskz_loadu_ps(lanes, bs + j);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        acc[r] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(lanes, seg + r * la.row + j), bv,
                                 acc[r]);
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    const float dot = _mm512_reduce_add_ps(acc[r]);
    c[r * ldc] = accumulate ? c[r * ldc] + dot : dot;
  }
}

void AvxDotRows(int64_t m, int64_t k, const float* a, const GemmALayout& la,
                const float* b, float* c, int64_t ldc, bool accumulate) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    AvxDotRowTile<4>(k, a + i * la.row, la, b, c + i * ldc, ldc, accumulate);
  }
  for (; i < m; ++i) {
    AvxDotRowTile<1>(k, a + i * la.row, la, b, c + i * ldc, ldc, accumulate);
  }
}

void AvxSmallGemm(int64_t m, int64_t n, int64_t k, const float* a,
                  const GemmALayout& la, const float* b, int64_t ldb,
                  float* c, int64_t ldc, bool accumulate) {
  if (n == 1 && la.depth == 1 && ldb == 1) {
    AvxDotRows(m, k, a, la, b, c, ldc, accumulate);
    return;
  }
  // Rows in equal tiles of at most kMaxTileRows (m = 16 runs 8 + 8, not
  // 14 + 2: a short tile does as many loads per FMA as rows).
  const int64_t tiles = (m + kMaxTileRows - 1) / kMaxTileRows;
  for (int64_t j0 = 0; j0 < n; j0 += 32) {
    const int64_t cols = std::min<int64_t>(32, n - j0);
    const __mmask16 m0 = Lanes(cols), m1 = Lanes(cols - 16);
    const auto& table = cols > 16 ? kTiles2 : kTiles1;
    for (int64_t t = 0, i0 = 0; t < tiles; ++t) {
      const int64_t rows = m * (t + 1) / tiles - i0;
      table[rows - 1](k, a + i0 * la.row, la, b + j0, ldb, c + i0 * ldc + j0,
                      ldc, m0, m1, accumulate);
      i0 += rows;
    }
  }
}

#endif  // __AVX512F__

}  // namespace

template <typename T>
void SmallGemm(int64_t m, int64_t n, int64_t k, const T* a,
               const GemmALayout& a_layout, const T* b, int64_t ldb, T* c,
               int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (!accumulate) {
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    }
    return;
  }
  GemmALayout la = a_layout;
  if (la.seg_len <= 0) la.seg_len = k;
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) {
    AvxSmallGemm(m, n, k, a, la, b, ldb, c, ldc, accumulate);
    return;
  }
#endif
  EigenSmallGemm(m, n, k, a, la, b, ldb, c, ldc, accumulate);
}

template void SmallGemm<float>(int64_t, int64_t, int64_t, const float*,
                                 const GemmALayout&, const float*, int64_t,
                                 float*, int64_t, bool);
template void SmallGemm<double>(int64_t, int64_t, int64_t, const double*,
                                 const GemmALayout&, const double*, int64_t,
                                 double*, int64_t, bool);
template void SmallGemm<int32_t>(int64_t, int64_t, int64_t, const int32_t*,
                                 const GemmALayout&, const int32_t*, int64_t,
                                 int32_t*, int64_t, bool);

}  // namespace weft
