// Compiled once per ISA (simd_target.h): the float kernel of the AVX-512
// and AVX2 compilations (weft::avx512::VectorSmallGemm, ...), and in the
// baseline compilation SmallGemm, which calls the one for the CPU
// (cpu_isa.h), or Eigen's product.
#include "ops/cpu/conv_gemm.h"

#include "ops/cpu/simd_target.h"

#include <algorithm>
#include <array>
#include <utility>
#include <type_traits>

#include <Eigen/Core>

#include "runtime/core/cpu_isa.h"

namespace weft {
using VectorSmallGemmFn = void(int64_t m, int64_t n, int64_t k, const float* a,
                               const GemmALayout& la, const float* b,
                               int64_t ldb, float* c, int64_t ldc,
                               bool accumulate);
WEFT_SIMD_DECLARE(VectorSmallGemmFn, VectorSmallGemm)
}  // namespace weft

#if defined(WEFT_SIMD_HAS_ISA)

WEFT_SIMD_BEGIN
#include "ops/cpu/simd_isa.h"

namespace weft {
namespace WEFT_SIMD_NS {
namespace {

using Isa = simd::TargetIsa;
using Vec = Isa::Vec;
using Mask = Isa::Mask;
constexpr int64_t kLanes = Isa::kLanes;

// The register tile: C rows [0, kRows) x columns [0, kLanes * kVecs) (lanes
// past n masked off by m0/m1 when kMasked; whole vectors otherwise, which
// AVX2's masked moves make worth a separate path). kVecs == 2 holds
// 2 * kRows accumulators beside the two B vectors and a broadcast: up to 14
// rows in AVX-512's 32 registers, 6 in AVX2's 16. A's rows are read from
// one base pointer per three rows (base, base + row, base + 2 * row are one
// scaled-index address each): a pointer per row would need more general
// registers than x86 has, and the spilled pointers would cost a load per
// broadcast.
template <int kVecs, int kRows, bool kMasked>
void Tile(int64_t k, const float* a, const GemmALayout& la, const float* b,
          int64_t ldb, float* c, int64_t ldc, Mask m0, Mask m1,
          bool accumulate) {
  constexpr int kGroups = (kRows + 2) / 3;
  const int64_t row = la.row;
  auto load = [&](Mask m, const float* p) {
    return kMasked ? Isa::MaskLoad(m, p) : Isa::LoadU(p);
  };
  Vec acc0[kRows], acc1[kRows];
#pragma GCC unroll 14
  for (int r = 0; r < kRows; ++r) {
    acc0[r] = Isa::Zero();
    if (kVecs == 2) acc1[r] = Isa::Zero();
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
      const Vec b0 = load(m0, bp);
      const Vec b1 = kVecs == 2 ? load(m1, bp + kLanes) : b0;
#pragma GCC unroll 14
      for (int r = 0; r < kRows; ++r) {
        const Vec av = Isa::Broadcast(g[r / 3][(r % 3) * row]);
        acc0[r] = Isa::Fma(av, b0, acc0[r]);
        if (kVecs == 2) acc1[r] = Isa::Fma(av, b1, acc1[r]);
      }
#pragma GCC unroll 5
      for (int q = 0; q < kGroups; ++q) g[q] += la.depth;
    }
  }
#pragma GCC unroll 14
  for (int r = 0; r < kRows; ++r) {
    float* cr = c + r * ldc;
    if (accumulate) {
      acc0[r] = Isa::Add(acc0[r], load(m0, cr));
      if (kVecs == 2) acc1[r] = Isa::Add(acc1[r], load(m1, cr + kLanes));
    }
    if (kMasked) {
      Isa::MaskStore(cr, m0, acc0[r]);
      if (kVecs == 2) Isa::MaskStore(cr + kLanes, m1, acc1[r]);
    } else {
      Isa::StoreU(cr, acc0[r]);
      if (kVecs == 2) Isa::StoreU(cr + kLanes, acc1[r]);
    }
  }
}

// Tile<kVecs, rows, kMasked> for rows in [1, kMaxTileRows], through tables
// built at compile time.
constexpr int kMaxTileRows = (Isa::kRegisters - 3) / 2;
using TileFn = void (*)(int64_t, const float*, const GemmALayout&, const float*,
                        int64_t, float*, int64_t, Mask, Mask, bool);
template <int kVecs, bool kMasked, int... kRowsMinus1>
constexpr std::array<TileFn, sizeof...(kRowsMinus1)> TileTable(
    std::integer_sequence<int, kRowsMinus1...>) {
  return {&Tile<kVecs, kRowsMinus1 + 1, kMasked>...};
}
template <int kVecs, bool kMasked>
constexpr auto kTiles =
    TileTable<kVecs, kMasked>(std::make_integer_sequence<int, kMaxTileRows>());

// n == 1 with A's segments and B contiguous: one dot product per row of C,
// kLanes depth steps at a time (a convolution down to one channel). kRows
// rows at once share B's loads and keep kRows FMA chains in flight (one
// chain waits on the FMA latency).
template <int kRows>
void DotRowTile(int64_t k, const float* a, const GemmALayout& la,
                const float* b, float* c, int64_t ldc, bool accumulate) {
  Vec acc[kRows];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) acc[r] = Isa::Zero();
  const float* seg = a;
  for (int64_t p0 = 0; p0 < k; p0 += la.seg_len, seg += la.seg_stride) {
    const float* bs = b + p0;
    const int64_t len = std::min(la.seg_len, k - p0);
    int64_t j = 0;
    for (; j + kLanes <= len; j += kLanes) {
      const Vec bv = Isa::LoadU(bs + j);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        acc[r] = Isa::Fma(Isa::LoadU(seg + r * la.row + j), bv, acc[r]);
      }
    }
    if (j < len) {
      const Mask lanes = Isa::Lanes(len - j);
      const Vec bv = Isa::MaskLoad(lanes, bs + j);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        acc[r] = Isa::Fma(Isa::MaskLoad(lanes, seg + r * la.row + j), bv, acc[r]);
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    const float dot = Isa::ReduceAdd(acc[r]);
    c[r * ldc] = accumulate ? c[r * ldc] + dot : dot;
  }
}

void DotRows(int64_t m, int64_t k, const float* a, const GemmALayout& la,
             const float* b, float* c, int64_t ldc, bool accumulate) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    DotRowTile<4>(k, a + i * la.row, la, b, c + i * ldc, ldc, accumulate);
  }
  for (; i < m; ++i) {
    DotRowTile<1>(k, a + i * la.row, la, b, c + i * ldc, ldc, accumulate);
  }
}
}  // namespace

void VectorSmallGemm(int64_t m, int64_t n, int64_t k, const float* a,
                     const GemmALayout& la, const float* b, int64_t ldb,
                     float* c, int64_t ldc, bool accumulate) {
  if (n == 1 && la.depth == 1 && ldb == 1) {
    DotRows(m, k, a, la, b, c, ldc, accumulate);
    return;
  }
  // Rows in equal tiles of at most kMaxTileRows (m = 16 runs 8 + 8, not
  // 14 + 2: a short tile does as many loads per FMA as rows).
  const int64_t tiles = (m + kMaxTileRows - 1) / kMaxTileRows;
  constexpr int64_t kTileCols = 2 * kLanes;
  for (int64_t j0 = 0; j0 < n; j0 += kTileCols) {
    const int64_t cols = std::min<int64_t>(kTileCols, n - j0);
    const Mask m0 = Isa::Lanes(cols), m1 = Isa::Lanes(cols - kLanes);
    const bool whole = cols % kLanes == 0;
    const auto& table = cols > kLanes ? (whole ? kTiles<2, false> : kTiles<2, true>)
                                      : (whole ? kTiles<1, false> : kTiles<1, true>);
    for (int64_t t = 0, i0 = 0; t < tiles; ++t) {
      const int64_t rows = m * (t + 1) / tiles - i0;
      table[rows - 1](k, a + i0 * la.row, la, b + j0, ldb, c + i0 * ldc + j0,
                      ldc, m0, m1, accumulate);
      i0 += rows;
    }
  }
}

}  // namespace WEFT_SIMD_NS
}  // namespace weft
WEFT_SIMD_END

#else  // the baseline compilation: Eigen's product and the dispatcher

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
  if constexpr (std::is_same_v<T, float>) {
    if (auto* f = WEFT_SIMD_CHOOSE(VectorSmallGemm)) {
      f(m, n, k, a, la, b, ldb, c, ldc, accumulate);
      return;
    }
  }
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

#endif  // WEFT_SIMD_HAS_ISA
