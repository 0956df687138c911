// The im2col and col2im loops of conv_im2col.h, over a policy for moving
// the short runs of values they copy (a window row, one pixel's channels):
//   Runs::Copy(const T* src, int64_t n, T* dst)   dst[0, n) = src[0, n)
//   Runs::Add(const T* src, int64_t n, T* dst)    dst[0, n) += src[0, n)
// Written once, compiled in the baseline and in each ISA's compilation
// (conv_im2col_simd.cc) with that ISA's runs; hence the ISA-named
// namespace (WEFT_SIMD_NS, simd_target.h: weft::baseline in other files):
// each compilation's copies are its own symbols.
// Include it after conv_geometry.h and, in an ISA's compilation, between
// WEFT_SIMD_BEGIN and WEFT_SIMD_END.
#ifndef WEFT_OPS_CPU_CONV_IM2COL_ROWS_H_
#define WEFT_OPS_CPU_CONV_IM2COL_ROWS_H_

#include <algorithm>
#include <cstdint>

#include "ops/cpu/conv_geometry.h"
#include "ops/cpu/simd_target.h"

namespace weft {
namespace WEFT_SIMD_NS {

// The output pixel (b, oh, ow) of col row r, stepped row by row: three
// divisions per row cost more than copying a small window.
struct PixelWalk {
  PixelWalk(const WindowDims& d, int64_t r)
      : out_rows(d.out_rows), out_cols(d.out_cols) {
    const int64_t pixels = std::max<int64_t>(1, out_rows * out_cols);
    b = r / pixels;
    oh = (r % pixels) / std::max<int64_t>(1, out_cols);
    ow = r % std::max<int64_t>(1, out_cols);
  }
  void Next() {
    if (++ow < out_cols) return;
    ow = 0;
    if (++oh < out_rows) return;
    oh = 0;
    ++b;
  }
  int64_t out_rows, out_cols;
  int64_t b, oh, ow;
};

// Writes rows [row_begin, row_end) of the col matrix of `in` to `col`
// (row_end - row_begin rows), moving runs of values with Runs::Copy.
template <typename T, typename Runs>
void Im2ColRows(const WindowDims& d, const T* in, int64_t row_begin,
            int64_t row_end, T* col) {
  const int64_t c = d.in_depth;
  const int64_t k = d.win_rows * d.win_cols * c;
  PixelWalk px(d, row_begin);
  for (int64_t r = row_begin; r < row_end; ++r, px.Next()) {
    const int64_t oh = px.oh, ow = px.ow;
    const T* image = in + px.b * d.in_rows * d.in_cols * c;
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
        Runs::Copy(image + (ih * d.in_cols + iw0) * c, d.win_cols * c, dst);
        dst += d.win_cols * c;
        continue;
      }
      for (int64_t kw = 0; kw < d.win_cols; ++kw, dst += c) {
        const int64_t iw = iw0 + kw * d.dil_cols;
        if (iw < 0 || iw >= d.in_cols) {
          std::fill(dst, dst + c, T(0));
        } else {
          Runs::Copy(image + (ih * d.in_cols + iw) * c, c, dst);
        }
      }
    }
  }
}

// Adds rows [row_begin, row_end) of a col matrix (`col` holds those rows)
// back into the NHWC tensor `out` (which must start zeroed), with
// Runs::Add. Two calls may run concurrently only if their rows belong to
// different images.
template <typename T, typename Runs>
void Col2ImAddRows(const WindowDims& d, const T* col, int64_t row_begin,
               int64_t row_end, T* out) {
  const int64_t c = d.in_depth;
  const int64_t k = d.win_rows * d.win_cols * c;
  PixelWalk px(d, row_begin);
  for (int64_t r = row_begin; r < row_end; ++r, px.Next()) {
    const int64_t oh = px.oh, ow = px.ow;
    T* image = out + px.b * d.in_rows * d.in_cols * c;
    const T* src = col + (r - row_begin) * k;
    const int64_t iw0 = ow * d.stride_cols - d.pad_left;
    // As in Im2ColRows: a window row inside the input is one contiguous run.
    const bool contiguous = d.dil_cols == 1 && iw0 >= 0 &&
                            iw0 + d.win_cols <= d.in_cols;
    for (int64_t kh = 0; kh < d.win_rows; ++kh) {
      const int64_t ih = oh * d.stride_rows - d.pad_top + kh * d.dil_rows;
      if (ih < 0 || ih >= d.in_rows) {
        src += d.win_cols * c;
        continue;
      }
      if (contiguous) {
        Runs::Add(src, d.win_cols * c, image + (ih * d.in_cols + iw0) * c);
        src += d.win_cols * c;
        continue;
      }
      for (int64_t kw = 0; kw < d.win_cols; ++kw, src += c) {
        const int64_t iw = iw0 + kw * d.dil_cols;
        if (iw < 0 || iw >= d.in_cols) continue;
        Runs::Add(src, c, image + (ih * d.in_cols + iw) * c);
      }
    }
  }
}

}  // namespace WEFT_SIMD_NS
}  // namespace weft

#endif  // WEFT_OPS_CPU_CONV_IM2COL_ROWS_H_
