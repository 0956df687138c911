// One output row of a stride-1 convolution with a narrow output (2 to 16
// channels on AVX-512, 2 to 8 on AVX2: one vector), and a stride-1 filter gradient's window row,
// computed directly rather than as GEMMs.
//
// As a GEMM (conv_gemm.h), each output pixel's row of A broadcasts its own
// copy of every input value, so a 16-wide output does one load per FMA. The
// windows of neighbouring pixels overlap, though: input column j meets
// output pixel j - kw through filter column kw. Here each input value is
// broadcast once and multiplied into every pixel it reaches (up to win_cols
// FMAs), with the filter's win_cols vectors for one (kh, channel) held in
// registers: about 3 FMAs per load for 5x5 windows.
//
//   // y[i, :] (i < m) = sum over kh, kw, ch of
//   //     x[kh * row_stride + (i + kw) * c + ch] * w[((kh * win_cols + kw) * c + ch) * n + :]
//   if (!SlidingConvRow(m, n, win_rows, win_cols, c, x, row_stride, w, y, ldy)) {
//     ... fall back to SmallGemm ...
//   }
//
// Returns false (and writes nothing) where it does not apply: a CPU (or a
// WEFT_MAX_CPU_ISA cap, runtime/core/cpu_isa.h) with neither AVX-512 nor AVX2 +
// FMA, n outside [2, one vector's lanes: 16 on
// AVX-512, 8 on AVX2], or win_cols other than 3 or 5.
// Thread safety: reentrant; concurrent calls must write disjoint y.
#ifndef WEFT_OPS_CPU_CONV_SLIDING_H_
#define WEFT_OPS_CPU_CONV_SLIDING_H_

#include <cstdint>

namespace weft {

bool SlidingConvRow(int64_t m, int64_t n, int64_t win_rows, int64_t win_cols,
                    int64_t c, const float* x, int64_t row_stride,
                    const float* w, float* y, int64_t ldy);

// The same reuse for a stride-1 filter gradient, one window row at a time:
//   dw[(kw * c + ch) * n + :] (=, or += when accumulate) sum over r < rows,
//       ow < m of x[r * x_row + (ow + kw) * c + ch] * dy[r * dy_row + ow * n + :]
// for kw < win_cols, ch < c. False (nothing written) unless the CPU runs AVX-512,
// n == 32, 1 <= m <= 14 and win_cols is 3 or 5.
bool SlidingFilterGradRow(int64_t rows, int64_t m, int64_t n, int64_t win_cols,
                          int64_t c, const float* x, int64_t x_row,
                          const float* dy, int64_t dy_row, float* dw,
                          bool accumulate);

}  // namespace weft

#endif  // WEFT_OPS_CPU_CONV_SLIDING_H_
