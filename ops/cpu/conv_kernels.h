// Convolution and pooling kernels are split by family: Conv2D
// (conv_kernels.cc, which also holds RegisterConvKernels), its backprops
// (conv_backprop_kernels.cc), depthwise convolution
// (depthwise_conv_kernels.cc) and pooling (pool_kernels.cc). All are NHWC
// only; the geometry is in conv_geometry.h, im2col in conv_im2col.h.
#ifndef WEFT_OPS_CPU_CONV_KERNELS_H_
#define WEFT_OPS_CPU_CONV_KERNELS_H_

#include "ops/framework/kernel_registry.h"

namespace weft {

// Conv2DBackpropInput, Conv2DBackpropFilter.
void RegisterConvBackpropKernels(KernelRegistry* r);
// DepthwiseConv2dNative and its backprops (depthwise_conv_kernels.cc).
void RegisterDepthwiseConvKernels(KernelRegistry* r);
// MaxPool, MaxPoolGrad, MaxPoolGradGrad, AvgPool, AvgPoolGrad.
void RegisterPoolKernels(KernelRegistry* r);

}  // namespace weft

#endif  // WEFT_OPS_CPU_CONV_KERNELS_H_
