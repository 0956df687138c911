// MirrorPad's paddings and index map (mirror_pad_kernels.cc), shared with
// FusedPadConv2D and FusedResizeAndPadConv2D (fused_pad_conv_kernels.cc).
#ifndef WEFT_OPS_CPU_MIRROR_PAD_H_
#define WEFT_OPS_CPU_MIRROR_PAD_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "ops/framework/op_kernel.h"

namespace weft {

// Reads paddings `p` (a [rank, 2] int32/int64 matrix) into `pads` (before,
// after per dim) and checks each row against the size of the dim it pads:
// `in`'s dims for a pad, the output's (`in` less the pads) for the
// gradient (`grad`). offset 1 (REFLECT) needs pads below the size, 0
// (SYMMETRIC) at most the size. INVALID_ARGUMENT naming the row otherwise.
absl::Status ReadMirrorPaddings(const Tensor& p, const TensorShape& in, int offset,
                                bool grad, std::vector<int64_t>* pads);

// The kernel's `mode` attr as an offset: REFLECT 1 (the edge is not
// repeated), SYMMETRIC 0; an error is set on `c`.
int MirrorModeOffset(OpKernelConstruction* c);

// The index in [0, n) that index i of a padded dim of size n mirrors to:
// i counts from the dim's first element, from -before to n + after - 1.
inline int64_t MirrorIndex(int64_t i, int64_t n, int offset) {
  return i < 0 ? -i - 1 + offset : i >= n ? 2 * n - 1 - offset - i : i;
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_MIRROR_PAD_H_
