// ResizeBilinear's source table (image_resize_kernels.cc), shared with
// FusedResizeAndPadConv2D (fused_pad_conv_kernels.cc).
#ifndef WEFT_OPS_CPU_BILINEAR_SOURCES_H_
#define WEFT_OPS_CPU_BILINEAR_SOURCES_H_

#include <cstdint>

namespace weft {

// For each of `out` indices resized from `in` by `scale` (legacy, no
// half-pixel centres): the lower and upper source index and the weight of
// the upper. The arrays hold `out` entries.
void BilinearSources(int64_t out, int64_t in, float scale, int64_t* lower,
                     int64_t* upper, float* lerp);

}  // namespace weft

#endif  // WEFT_OPS_CPU_BILINEAR_SOURCES_H_
