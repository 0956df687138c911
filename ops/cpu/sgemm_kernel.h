// The SGEMM's micro-kernel and packing (matmul_sgemm.cc), written once over
// an ISA traits type (simd_isa.h).
//
//   using K = sgemm_internal::Kernels<simd::NativeIsa>;
//   K::PackA<K::RowLayout>(a, m, k, i0, p0, depth, ap);   // 12 or 6 rows
//   K::PackB(b, /*tb=*/false, k, n, p0, depth, j0, bp);   // 32 or 16 cols
//   K::Kernel<K::RowLayout>(depth, ap, bp, c, ldc, /*accumulate=*/p0 > 0);
//
// A C tile is kRows x kCols (kCols = two vectors). B is packed into
// slivers [depth][kCols], 64-byte aligned; A into slivers of kRows rows in
// one of two layouts (below). Edge tiles go through EdgeKernel.
// Stateless; safe to call from any thread on disjoint outputs.
#ifndef WEFT_OPS_CPU_SGEMM_KERNEL_H_
#define WEFT_OPS_CPU_SGEMM_KERNEL_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "ops/cpu/simd_isa.h"

#if defined(WEFT_SIMD_ISA_AVAILABLE)

namespace weft {
namespace sgemm_internal {

template <typename Isa>
struct Kernels {
  using Vec = typename Isa::Vec;
  static constexpr int64_t kLanes = Isa::kLanes;
  static constexpr int64_t kRows = Isa::kRows;
  static constexpr int64_t kCols = 2 * kLanes;
  static constexpr int64_t kDepth = Isa::kDepth;
  static_assert(kRows <= 12, "the unroll pragmas below say 12");

  // How a packed A sliver is laid out. Row-major A packs by copying rows
  // ([kRows][kARowStride]: the kernel broadcasts from kRows row streams);
  // transposed A packs by copying its stored rows ([depth][kRows]). Either
  // way no transpose is needed, and both strides are compile-time
  // constants, so the kernel's broadcasts are loads at a fixed displacement
  // from one pointer.
  static constexpr int64_t kARowStride = kDepth + 16;  // pad: 4 KiB aliasing
  struct RowLayout {
    static constexpr int64_t kStep = 1, kRow = kARowStride;
  };
  struct StepLayout {
    static constexpr int64_t kStep = kRows, kRow = 1;
  };
  static constexpr int64_t kASliverFloats = kRows * kARowStride;  // both

  // C[R, kCols] = (or +=) Ap * Bp over `depth` steps, for the first R (of
  // kRows) rows of the A sliver. Bp is [depth][kCols] and 64-byte aligned;
  // Ap is laid out as Layout says. With kPackedB false, Bp is instead kCols
  // columns of a row-major B read in place, its rows `ldb` floats apart
  // (DirectKernel).
  template <typename Layout, int R = kRows, bool kPackedB = true>
  static void Kernel(int64_t depth, const float* ap, const float* bp,
                     float* c, int64_t ldc, bool accumulate,
                     int64_t ldb = kCols) {
    Vec lo[R], hi[R];
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      lo[r] = Isa::Zero();
      hi[r] = Isa::Zero();
      // The C tile is read and written after the loop: start fetching it
      // into L2 now, so the loop hides a miss to memory.
      for (int64_t line = 0; line < kCols; line += 16) {
        _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + line),
                     _MM_HINT_T1);
      }
    }
    auto steps = [&](int64_t count) {
      for (int64_t p = 0; p < count; ++p) {
        const Vec b0 = kPackedB ? Isa::Load(bp) : Isa::LoadU(bp);
        const Vec b1 = kPackedB ? Isa::Load(bp + kLanes) : Isa::LoadU(bp + kLanes);
        _mm_prefetch(reinterpret_cast<const char*>(bp + 8 * ldb), _MM_HINT_T0);
#pragma GCC unroll 12
        for (int r = 0; r < R; ++r) {
          const Vec a = Isa::Broadcast(ap[r * Layout::kRow]);
          lo[r] = Isa::Fma(a, b0, lo[r]);
          hi[r] = Isa::Fma(a, b1, hi[r]);
        }
        ap += Layout::kStep;
        bp += kPackedB ? kCols : ldb;
      }
    };
    // Then into L1 near the end: fetched at the start, the lines would
    // have been pushed out of L1 by the slivers streaming through it.
    const int64_t tail = std::min<int64_t>(depth, 32);
    steps(depth - tail);
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      for (int64_t line = 0; line < kCols; line += 16) {
        _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + line),
                     _MM_HINT_ET0);
      }
    }
    steps(tail);
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      float* row = c + r * ldc;
      if (accumulate) {
        lo[r] = Isa::Add(lo[r], Isa::LoadU(row));
        hi[r] = Isa::Add(hi[r], Isa::LoadU(row + kLanes));
      }
      Isa::StoreU(row, lo[r]);
      Isa::StoreU(row + kLanes, hi[r]);
    }
  }

  // A tile at the bottom or right edge: only rows x cols of it are real.
  // Short tiles run a kernel of just their rows (an m of 64 leaves a 4-row
  // tile per 12-row band: computing all 12 would triple its cost).
  template <typename Layout, int R>
  static void ShortKernel(int64_t depth, const float* ap, const float* bp,
                          float* c, int64_t ldc, bool accumulate,
                          int64_t cols) {
    if (cols == kCols) {
      Kernel<Layout, R>(depth, ap, bp, c, ldc, accumulate);
      return;
    }
    alignas(64) float tile[R * kCols];
    Kernel<Layout, R>(depth, ap, bp, tile, kCols, false);
    for (int64_t r = 0; r < R; ++r) {
      for (int64_t j = 0; j < cols; ++j) {
        const float v = tile[r * kCols + j];
        c[r * ldc + j] = accumulate ? c[r * ldc + j] + v : v;
      }
    }
  }

  template <typename Layout>
  static void EdgeKernel(int64_t depth, const float* ap, const float* bp,
                         float* c, int64_t ldc, bool accumulate, int64_t rows,
                         int64_t cols) {
    EdgeKernelFor<Layout>(std::make_integer_sequence<int, kRows>(), depth, ap,
                          bp, c, ldc, accumulate, rows, cols);
  }

  // Rows [i0, i0 + kRows) x depth [p0, p0 + depth) of op(A) into `out`,
  // laid out as Layout says; rows past m are zero. RowLayout is for a
  // row-major A (copy each row's depth range), StepLayout for a transposed
  // A, stored [k, m] (copy each step's kRows contiguous values).
  template <typename Layout>
  static void PackA(const float* a, int64_t m, int64_t k, int64_t i0,
                    int64_t p0, int64_t depth, float* out) {
    const int64_t rows = std::min(kRows, m - i0);
    if constexpr (std::is_same_v<Layout, RowLayout>) {
      for (int64_t r = 0; r < rows; ++r) {
        std::memcpy(out + r * kARowStride, a + (i0 + r) * k + p0,
                    depth * sizeof(float));
      }
      for (int64_t r = rows; r < kRows; ++r) {
        std::memset(out + r * kARowStride, 0, depth * sizeof(float));
      }
    } else {
      for (int64_t p = 0; p < depth; ++p) {
        float* dst = out + p * kRows;
        std::memcpy(dst, a + (p0 + p) * m + i0, rows * sizeof(float));
        std::memset(dst + rows, 0, (kRows - rows) * sizeof(float));
      }
    }
  }

  // Depth [p0, p0 + depth) x columns [j0, j0 + kCols) of op(B) into
  // out[depth][kCols]; columns past n are zero. b is stored [n, k] when
  // tb (transposed).
  static void PackB(const float* b, bool tb, int64_t k, int64_t n, int64_t p0,
                    int64_t depth, int64_t j0, float* out) {
    const int64_t cols = std::min(kCols, n - j0);
    if (!tb && cols == kCols) {  // the common case: two vector copies a row
      for (int64_t p = 0; p < depth; ++p) {
        const float* src = b + (p0 + p) * n + j0;
        Isa::Store(out + p * kCols, Isa::LoadU(src));
        Isa::Store(out + p * kCols + kLanes, Isa::LoadU(src + kLanes));
      }
    } else if (tb && cols == kCols) {  // kLanes x kLanes transposes
      const int64_t whole = depth - depth % kLanes;
      for (int64_t half = 0; half < kCols; half += kLanes) {
        const float* src = b + (j0 + half) * k + p0;
        for (int64_t p = 0; p < whole; p += kLanes) {
          Isa::Transpose(src + p, k, out + p * kCols + half, kCols);
        }
        for (int64_t j = 0; j < kLanes; ++j) {
          for (int64_t p = whole; p < depth; ++p) {
            out[p * kCols + half + j] = src[j * k + p];
          }
        }
      }
    } else if (!tb) {
      for (int64_t p = 0; p < depth; ++p) {
        const float* src = b + (p0 + p) * n + j0;
        float* dst = out + p * kCols;
        std::memcpy(dst, src, cols * sizeof(float));
        std::memset(dst + cols, 0, (kCols - cols) * sizeof(float));
      }
    } else {
      for (int64_t j = 0; j < kCols; ++j) {
        if (j < cols) {
          const float* src = b + (j0 + j) * k + p0;
          for (int64_t p = 0; p < depth; ++p) out[p * kCols + j] = src[p];
        } else {
          for (int64_t p = 0; p < depth; ++p) out[p * kCols + j] = 0;
        }
      }
    }
  }

  // C[rows, kCols] = (or +=) Ap * B[:, j0 : j0 + kCols] for a row-major B
  // read in place (`b` points at its column j0 of the first depth step,
  // rows `ldb` apart): a small A (a few slivers) reuses each B value only a
  // few times, so packing B would cost about as much as the product.
  template <typename Layout>
  static void DirectKernel(int64_t depth, const float* ap, const float* b,
                           int64_t ldb, float* c, int64_t ldc,
                           bool accumulate, int64_t rows) {
    DirectKernelFor<Layout>(std::make_integer_sequence<int, kRows>(), depth,
                            ap, b, ldb, c, ldc, accumulate, rows);
  }

 private:
  template <typename Layout, int... Rs>
  static void DirectKernelFor(std::integer_sequence<int, Rs...>, int64_t depth,
                              const float* ap, const float* b, int64_t ldb,
                              float* c, int64_t ldc, bool accumulate,
                              int64_t rows) {
    ((rows == Rs + 1 ? Kernel<Layout, Rs + 1, false>(depth, ap, b, c, ldc,
                                                     accumulate, ldb)
                     : void()),
     ...);
  }

  template <typename Layout, int... Rs>
  static void EdgeKernelFor(std::integer_sequence<int, Rs...>, int64_t depth,
                            const float* ap, const float* bp, float* c,
                            int64_t ldc, bool accumulate, int64_t rows,
                            int64_t cols) {
    // Calls ShortKernel<Layout, rows>: Rs are 0 .. kRows - 1.
    ((rows == Rs + 1 ? ShortKernel<Layout, Rs + 1>(depth, ap, bp, c, ldc,
                                                   accumulate, cols)
                     : void()),
     ...);
  }
};

}  // namespace sgemm_internal
}  // namespace weft

#endif  // WEFT_SIMD_ISA_AVAILABLE

#endif  // WEFT_OPS_CPU_SGEMM_KERNEL_H_
