// im2col / col2im for NHWC convolutions, so Conv2D and its backprops reduce
// to GEMMs over L2-sized chunks of the col matrix (conv_gemm.h).
//
// The "col" matrix has one row per output pixel (b, oh, ow), rows numbered
// b * out_rows * out_cols + oh * out_cols + ow, and win_rows * win_cols *
// in_depth columns ordered (kh, kw, c), i.e. the filter's [KH, KW, C, OC]
// layout read as a [K, OC] matrix. Entries that fall in the padding are 0.
#ifndef WEFT_OPS_CPU_CONV_IM2COL_H_
#define WEFT_OPS_CPU_CONV_IM2COL_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

#include <Eigen/Core>

#include "ops/cpu/conv_geometry.h"
#include "ops/cpu/conv_im2col_rows.h"
#include "ops/cpu/conv_gemm.h"
#include "ops/cpu/conv_sliding.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/status.h"
#include "runtime/core/thread_pool.h"

namespace weft {


// dst[0, n) = src[0, n) and dst[0, n) += src[0, n), for any T (Eigen).
template <typename T>
inline void CopyRun(const T* src, int64_t n, T* dst) {
  using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
  Eigen::Map<Vec>(dst, n) = Eigen::Map<const Vec>(src, n);
}
template <typename T>
inline void AddRun(const T* src, int64_t n, T* dst) {
  using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
  Eigen::Map<Vec>(dst, n) += Eigen::Map<const Vec>(src, n);
}
template <typename T>
struct EigenRuns {
  static void Copy(const T* src, int64_t n, T* dst) { CopyRun(src, n, dst); }
  static void Add(const T* src, int64_t n, T* dst) { AddRun(src, n, dst); }
};

// The float loops, with the runs of the CPU's ISA (conv_im2col_simd.cc):
// the runs here are short (a window row, one pixel's channels: often 5 to
// 80 values), where a memcpy call or Eigen's alignment peeling costs more
// than the copy; AVX-512 and AVX2 use whole-vector moves with a masked
// tail.
void Im2ColFloat(const WindowDims& d, const float* in, int64_t row_begin,
                 int64_t row_end, float* col);
void Col2ImAddFloat(const WindowDims& d, const float* col, int64_t row_begin,
                    int64_t row_end, float* out);

// Writes rows [row_begin, row_end) of the col matrix of `in` to `col`
// (row_end - row_begin rows).
template <typename T>
void Im2Col(const WindowDims& d, const T* in, int64_t row_begin,
            int64_t row_end, T* col) {
  if constexpr (std::is_same_v<T, float>) {
    Im2ColFloat(d, in, row_begin, row_end, col);
  } else {
    baseline::Im2ColRows<T, EigenRuns<T>>(d, in, row_begin, row_end, col);
  }
}

// Adds rows [row_begin, row_end) of a col matrix (`col` holds those rows)
// back into the NHWC tensor `out` (which must start zeroed). Two calls may
// run concurrently only if their rows belong to different images.
template <typename T>
void Col2ImAdd(const WindowDims& d, const T* col, int64_t row_begin,
               int64_t row_end, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    Col2ImAddFloat(d, col, row_begin, row_end, out);
  } else {
    baseline::Col2ImAddRows<T, EigenRuns<T>>(d, col, row_begin, row_end, out);
  }
}


// Rows [r0, r0 + rows) of the col matrix: the input itself when
// ColIsInput(d) (pass col_is_input), else made by Im2Col into `scratch`.
template <typename T>
const T* ColRows(const WindowDims& d, const T* x, bool col_is_input,
                 int64_t r0, int64_t rows, T* scratch) {
  const int64_t k = d.win_rows * d.win_cols * d.in_depth;
  if (col_is_input) return x + r0 * k;
  Im2Col<T>(d, x, r0, r0 + rows, scratch);
  return scratch;
}

// Rows of the col matrix per chunk: a multiple of 12 (splits evenly into
// SmallGemm's tiles of up to 14 rows) with about 64K elements (256 KB of floats), so a chunk, made and
// consumed on one thread, stays in that core's L2 between im2col and GEMM.
inline int64_t ConvChunkRows(const WindowDims& d) {
  const int64_t k = std::max<int64_t>(1, d.win_rows * d.win_cols * d.in_depth);
  return std::max<int64_t>(1, (int64_t{1} << 16) / k / 12) * 12;
}

// Calls fn(part) for part in [0, parts), each on its own thread of the pool
// (or the caller's); returns when all are done.
template <typename Fn>
void ForEachPart(ThreadPool* pool, int64_t parts, Fn fn) {
  if (parts <= 1) {
    if (parts == 1) fn(int64_t{0});
    return;
  }
  // A cost this high makes every part its own shard.
  pool->ParallelFor(parts, int64_t{1} << 30, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) fn(p);
  });
}

// How many parts to split `units` of work into: one per pool thread, no more
// than there are units.
inline int64_t PartsFor(ThreadPool* pool, int64_t units) {
  return std::max<int64_t>(1, std::min<int64_t>(units, pool->NumThreads()));
}

// The input as the windows read it, for convolutions that read windows in
// place (conv_gemm.h's segmented A) instead of copying them out: `data` holds
// `batch` images of rows x cols x in_depth whose (0, 0) is the top-left of
// output (0, 0)'s window. It is the input itself when no window reaches into
// padding, else a zero-padded copy in `storage`.
template <typename T>
struct WindowedInput {
  const T* data = nullptr;
  int64_t rows = 0, cols = 0;
  Tensor storage;
};

// True when the windowed readers apply: each window row is one contiguous
// run (no column dilation).
inline bool CanReadWindowsInPlace(const WindowDims& d) { return d.dil_cols == 1; }

template <typename T>
absl::Status MakeWindowedInput(OpKernelContext* c, const WindowDims& d,
                               const T* x, WindowedInput<T>* out) {
  const int64_t rows = (d.out_rows - 1) * d.stride_rows + (d.win_rows - 1) * d.dil_rows + 1;
  const int64_t cols = (d.out_cols - 1) * d.stride_cols + d.win_cols;
  const int64_t depth = d.in_depth;
  if (d.pad_top == 0 && d.pad_left == 0 && rows <= d.in_rows && cols <= d.in_cols) {
    out->data = x;
    out->rows = d.in_rows;
    out->cols = d.in_cols;
    return absl::OkStatus();
  }
  WEFT_RETURN_IF_ERROR(c->allocate_temp(DataTypeToEnum<T>::value,
                                        TensorShape({d.batch, rows, cols, depth}),
                                        &out->storage));
  T* p = out->storage.template data<T>();
  // Columns [q_lo, q_hi) of a padded row hold input columns from 0.
  const int64_t q_lo = std::min(cols, d.pad_left);
  const int64_t q_hi = std::min(cols, d.pad_left + d.in_cols);
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t r = 0; r < rows; ++r) {
      T* row = p + ((b * rows + r) * cols) * depth;
      const int64_t ih = r - d.pad_top;
      if (ih < 0 || ih >= d.in_rows || q_hi <= q_lo) {
        std::fill(row, row + cols * depth, T(0));
        continue;
      }
      std::fill(row, row + q_lo * depth, T(0));
      CopyRun(x + ((b * d.in_rows + ih) * d.in_cols) * depth, (q_hi - q_lo) * depth,
              row + q_lo * depth);
      std::fill(row + q_hi * depth, row + cols * depth, T(0));
    }
  }
  out->data = p;
  out->rows = rows;
  out->cols = cols;
  return absl::OkStatus();
}

// The L2 share a convolution's filter may take: a [k, n] filter within it
// is read in place by every output row; a larger one is worked on in column
// blocks of about this size (ConvColumnBlock), each packed once and run over
// many rows. Half of the 1 MiB L2 of the Zen 4 machine in doc/benchmarks.md
// (ResNet-50 batch 1: 65.4 -> 58.5 ms a step; 256 KiB did no better).
inline constexpr int64_t kConvFilterL2Bytes = int64_t{512} << 10;

template <typename T>
bool ConvFilterExceedsL2(int64_t k, int64_t n) {
  return k * n * static_cast<int64_t>(sizeof(T)) > kConvFilterL2Bytes;
}

// The filter columns a windowed convolution's task works on at once: all n
// when the [k, n] filter fits kConvFilterL2Bytes, else a multiple of 32
// columns (two AVX-512 vectors, the GEMM tile's width) whose k rows fit it.
template <typename T>
int64_t ConvColumnBlock(int64_t k, int64_t n) {
  if (!ConvFilterExceedsL2<T>(k, n)) return n;
  const int64_t fit = kConvFilterL2Bytes / (k * static_cast<int64_t>(sizeof(T)));
  return std::min(n, std::max<int64_t>(32, fit / 32 * 32));
}

// y[batch, out_rows, out_cols, out_depth] = the convolution of x with w
// ([win_rows, win_cols, in_depth, out_depth]), reading windows in place: one
// GEMM per output row, output pixel ow being A's row ow and window row kh a
// segment of the depth. Needs CanReadWindowsInPlace(d).
template <typename T>
absl::Status ConvWindowed(OpKernelContext* c, const WindowDims& d, const T* x,
                          const T* w, T* y) {
  WindowedInput<T> in;
  WEFT_RETURN_IF_ERROR(MakeWindowedInput(c, d, x, &in));
  const int64_t c_in = d.in_depth, n = d.out_depth;
  const int64_t k = d.win_rows * d.win_cols * c_in;
  const GemmALayout la{d.stride_cols * c_in, 1, d.win_cols * c_in,
                       d.dil_rows * in.cols * c_in};
  const int64_t rows = d.batch * d.out_rows;
  const int64_t nb = ConvColumnBlock<T>(k, n);
  if (nb < n) {
    // A filter larger than the L2 budget: each task packs a column block of
    // it (contiguous, nb wide) once and runs it over consecutive output rows,
    // instead of every output row streaming the whole filter from L3 or DRAM.
    const int64_t blocks = (n + nb - 1) / nb;
    c->intra_op_pool()->ParallelFor(
        blocks * rows, d.out_cols * k * nb, [&](int64_t b, int64_t e) {
          std::unique_ptr<T[]> packed(new T[k * nb]);
          int64_t packed_block = -1;
          for (int64_t i = b; i < e; ++i) {
            const int64_t block = i / rows, r = i % rows;
            const int64_t j0 = block * nb, cols = std::min(nb, n - j0);
            if (block != packed_block) {
              for (int64_t p = 0; p < k; ++p) {
                std::copy(w + p * n + j0, w + p * n + j0 + cols, packed.get() + p * cols);
              }
              packed_block = block;
            }
            const int64_t image = r / d.out_rows, oh = r % d.out_rows;
            const T* a = in.data + ((image * in.rows + oh * d.stride_rows) * in.cols) * c_in;
            SmallGemm<T>(d.out_cols, cols, k, a, la, packed.get(), cols,
                         y + r * d.out_cols * n + j0, n, false);
          }
        });
    return absl::OkStatus();
  }
  c->intra_op_pool()->ParallelFor(
      rows, d.out_cols * k * n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t image = i / d.out_rows, oh = i % d.out_rows;
          const T* a = in.data + ((image * in.rows + oh * d.stride_rows) * in.cols) * c_in;
          T* yi = y + i * d.out_cols * n;
          // Narrow outputs with stride 1 reuse each input value across the
          // window's columns (conv_sliding.h).
          if constexpr (std::is_same_v<T, float>) {
            if (d.stride_cols == 1 &&
                SlidingConvRow(d.out_cols, n, d.win_rows, d.win_cols, c_in, a,
                               la.seg_stride, w, yi, n)) {
              continue;
            }
          }
          SmallGemm<T>(d.out_cols, n, k, a, la, w, n, yi, n, false);
        }
      });
  return absl::OkStatus();
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
