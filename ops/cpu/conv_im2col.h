// im2col / col2im for NHWC convolutions, so Conv2D and its backprops reduce
// to the MatMul GEMM (matmul_gemm.h).
//
// The "col" matrix has one row per output pixel (b, oh, ow), rows numbered
// b * out_rows * out_cols + oh * out_cols + ow, and win_rows * win_cols *
// in_depth columns ordered (kh, kw, c), i.e. the filter's [KH, KW, C, OC]
// layout read as a [K, OC] matrix. Entries that fall in the padding are 0.
#ifndef WEFT_OPS_CPU_CONV_IM2COL_H_
#define WEFT_OPS_CPU_CONV_IM2COL_H_

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ops/cpu/conv_geometry.h"

namespace weft {

// Writes rows [row_begin, row_end) of the col matrix of `in` to `col`
// (row_end - row_begin rows).
template <typename T>
void Im2Col(const WindowDims& d, const T* in, int64_t row_begin,
            int64_t row_end, T* col) {
  const int64_t c = d.in_depth;
  const int64_t k = d.win_rows * d.win_cols * c;
  const int64_t pixels = d.out_rows * d.out_cols;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t b = r / pixels;
    const int64_t oh = (r % pixels) / d.out_cols;
    const int64_t ow = r % d.out_cols;
    const T* image = in + b * d.in_rows * d.in_cols * c;
    T* dst = col + (r - row_begin) * k;
    const int64_t iw0 = ow * d.stride_cols - d.pad_left;
    // With no column dilation and the window inside the input's columns, a
    // window row is one contiguous run of win_cols * c input values.
    const bool contiguous = d.dil_cols == 1 && iw0 >= 0 &&
                            iw0 + d.win_cols <= d.in_cols;
    for (int64_t kh = 0; kh < d.win_rows; ++kh) {
      const int64_t ih = oh * d.stride_rows - d.pad_top + kh * d.dil_rows;
      if (ih < 0 || ih >= d.in_rows) {
        std::fill(dst, dst + d.win_cols * c, T(0));
        dst += d.win_cols * c;
        continue;
      }
      if (contiguous) {
        std::memcpy(dst, image + (ih * d.in_cols + iw0) * c,
                    d.win_cols * c * sizeof(T));
        dst += d.win_cols * c;
        continue;
      }
      for (int64_t kw = 0; kw < d.win_cols; ++kw, dst += c) {
        const int64_t iw = iw0 + kw * d.dil_cols;
        if (iw < 0 || iw >= d.in_cols) {
          std::fill(dst, dst + c, T(0));
        } else {
          std::memcpy(dst, image + (ih * d.in_cols + iw) * c, c * sizeof(T));
        }
      }
    }
  }
}

// Adds rows [row_begin, row_end) of a col matrix (`col` holds those rows)
// back into the NHWC tensor `out` (which must start zeroed). Two calls may
// run concurrently only if their rows belong to different images.
template <typename T>
void Col2ImAdd(const WindowDims& d, const T* col, int64_t row_begin,
               int64_t row_end, T* out) {
  const int64_t c = d.in_depth;
  const int64_t k = d.win_rows * d.win_cols * c;
  const int64_t pixels = d.out_rows * d.out_cols;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t b = r / pixels;
    const int64_t oh = (r % pixels) / d.out_cols;
    const int64_t ow = r % d.out_cols;
    T* image = out + b * d.in_rows * d.in_cols * c;
    const T* src = col + (r - row_begin) * k;
    for (int64_t kh = 0; kh < d.win_rows; ++kh) {
      const int64_t ih = oh * d.stride_rows - d.pad_top + kh * d.dil_rows;
      for (int64_t kw = 0; kw < d.win_cols; ++kw, src += c) {
        const int64_t iw = ow * d.stride_cols - d.pad_left + kw * d.dil_cols;
        if (ih < 0 || ih >= d.in_rows || iw < 0 || iw >= d.in_cols) continue;
        T* dst = image + (ih * d.in_cols + iw) * c;
        for (int64_t i = 0; i < c; ++i) dst[i] += src[i];
      }
    }
  }
}

// Rows of col matrix per chunk, so a chunk's scratch stays near 8M elements
// (and, when `whole_images`, a chunk holds whole images).
inline int64_t ColChunkRows(const WindowDims& d, bool whole_images) {
  const int64_t k = std::max<int64_t>(1, d.win_rows * d.win_cols * d.in_depth);
  int64_t rows = std::max<int64_t>(1, (int64_t{8} << 20) / k);
  if (whole_images) {
    const int64_t pixels = std::max<int64_t>(1, d.out_rows * d.out_cols);
    rows = std::max<int64_t>(1, rows / pixels) * pixels;
  }
  return rows;
}

// True when the col matrix equals the input itself (1x1 window, stride 1,
// no padding), so im2col can be skipped.
inline bool ColIsInput(const WindowDims& d) {
  return d.win_rows == 1 && d.win_cols == 1 && d.stride_rows == 1 &&
         d.stride_cols == 1 && d.pad_top == 0 && d.pad_left == 0 &&
         d.out_rows == d.in_rows && d.out_cols == d.in_cols;
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_CONV_IM2COL_H_
