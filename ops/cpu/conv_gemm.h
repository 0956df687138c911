// A small single-threaded GEMM for the convolutions' row chunks.
//
// The convolutions run their im2col matrices in L2-sized chunks, one chunk
// per thread at a time, so each chunk is multiplied on the thread that made
// it (the pool is busy with the other chunks). Their shapes are narrow: the
// output depth (often 16-64) is one side and the chunk another. The MatMul
// GEMM (matmul_gemm.h) packs A and B first, which for a 32-wide output costs
// as much as the product; this one reads A in place through two strides (so
// a transposed im2col chunk needs no copy) and B row by row.
//
//   // y[rows, n] = col[rows, k] * w[k, n]
//   SmallGemm<float>(rows, n, k, col, /*a_row=*/k, /*a_depth=*/1,
//                    w, /*ldb=*/n, y, /*ldc=*/n, /*accumulate=*/false);
//
// C(i, j) (=, or += when accumulate) sum_p A(i, p) * B(p, j), where
// A(i, p) = a[i * a_row + p * a_depth], B(p, j) = b[p * ldb + j] and
// C(i, j) = c[i * ldc + j]. m, n, k >= 0; C must not overlap A or B.
//
// The depth of A may also come in equal segments that start anywhere
// (GemmALayout), which lets a convolution read its windows straight from the
// (padded) input: for one output row, window row kh is a segment, and the
// output pixels are rows `stride * depth` apart. No im2col copy at all.
// Float on AVX-512 and AVX2 builds uses register tiles of up to 14 rows x 32
// columns (AVX-512) or 6 x 16 (AVX2), m split into equal tiles (the ISA
// types of simd_isa.h); other types and builds use Eigen's
// (single-threaded) product. Narrow stride-1 convolutions have a faster
// direct path (conv_sliding.h).
// Thread safety: reentrant; concurrent calls must write disjoint C.
#ifndef WEFT_OPS_CPU_CONV_GEMM_H_
#define WEFT_OPS_CPU_CONV_GEMM_H_

#include <cstdint>

namespace weft {

// A(i, p) = a[i * row + (p / seg_len) * seg_stride + (p % seg_len) * depth].
struct GemmALayout {
  int64_t row = 0;         // between rows of A
  int64_t depth = 1;       // between depth steps within a segment
  int64_t seg_len = 0;     // depth steps per segment (> 0, divides k)
  int64_t seg_stride = 0;  // between the starts of segments
};

template <typename T>
void SmallGemm(int64_t m, int64_t n, int64_t k, const T* a,
               const GemmALayout& a_layout, const T* b, int64_t ldb, T* c,
               int64_t ldc, bool accumulate);

// One segment: A(i, p) = a[i * a_row + p * a_depth].
template <typename T>
void SmallGemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_row,
               int64_t a_depth, const T* b, int64_t ldb, T* c, int64_t ldc,
               bool accumulate) {
  SmallGemm<T>(m, n, k, a, GemmALayout{a_row, a_depth, k > 0 ? k : 1, 0}, b,
               ldb, c, ldc, accumulate);
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_CONV_GEMM_H_
