// Blocked 2-D transposes over a thread pool: the Transpose kernel's common
// case (array_transpose_kernels.cc) and the filter transposes of the
// convolution backprops (conv_backprop_kernels.cc).
#ifndef WEFT_OPS_CPU_TRANSPOSE_2D_H_
#define WEFT_OPS_CPU_TRANSPOSE_2D_H_

#include <algorithm>
#include <cstdint>

#include "runtime/core/thread_pool.h"

namespace weft {

// Side of the square blocks: a block of both matrices stays in L1.
inline constexpr int64_t kTransposeBlock = 32;

// out[b][c][r] = in[b][r][c] for `batches` matrices of rows x cols, in
// kTransposeBlock-sized blocks (both sides read and written a cache line at
// a time), the row blocks spread over `pool`.
template <typename T>
void BatchTranspose2D(ThreadPool* pool, const T* in, T* out, int64_t batches,
                      int64_t rows, int64_t cols) {
  constexpr int64_t kBlock = kTransposeBlock;
  const int64_t row_blocks = (rows + kBlock - 1) / kBlock;
  pool->ParallelFor(batches * row_blocks, kBlock * cols * 4,
                    [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      const int64_t b = unit / row_blocks;
      const int64_t r0 = (unit % row_blocks) * kBlock;
      const int64_t r1 = std::min(rows, r0 + kBlock);
      const T* src = in + b * rows * cols;
      T* dst = out + b * rows * cols;
      for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
        const int64_t c1 = std::min(cols, c0 + kBlock);
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t c = c0; c < c1; ++c) dst[c * rows + r] = src[r * cols + c];
        }
      }
    }
  });
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_TRANSPOSE_2D_H_
