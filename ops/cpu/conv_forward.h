// Conv2D's forward pass as a function (conv_kernels.cc), for the kernels
// that convolve an image they made first: FusedPadConv2D and
// FusedResizeAndPadConv2D (fused_pad_conv_kernels.cc).
#ifndef WEFT_OPS_CPU_CONV_FORWARD_H_
#define WEFT_OPS_CPU_CONV_FORWARD_H_

#include "absl/status/status.h"
#include "ops/cpu/conv_geometry.h"
#include "ops/framework/op_kernel.h"

namespace weft {

// Convolves NHWC `x` with HWIO `w` of geometry `d` into `y` (NHWC, d's
// output shape), on c's intra-op pool. T: float, double or int32.
template <typename T>
absl::Status Conv2DForward(OpKernelContext* c, const WindowDims& d, const T* x,
                           const T* w, T* y);

}  // namespace weft

#endif  // WEFT_OPS_CPU_CONV_FORWARD_H_
