// The kernel families RegisterNn3dKernels (conv3d_kernels.cc) registers
// besides Conv3D's: the 3-D pools, LRN and the arg max pools.
#ifndef WEFT_OPS_CPU_NN3D_KERNELS_H_
#define WEFT_OPS_CPU_NN3D_KERNELS_H_

#include "ops/framework/kernel_registry.h"

namespace weft {

// MaxPool3D, AvgPool3D, MaxPool3DGrad, AvgPool3DGrad, MaxPool3DGradGrad
// (pool3d_kernels.cc).
void RegisterPool3DKernels(KernelRegistry* r);
// LRN, LRNGrad (lrn_kernels.cc).
void RegisterLrnKernels(KernelRegistry* r);
// MaxPoolWithArgmax, MaxPoolGradWithArgmax (pool_argmax_kernels.cc).
void RegisterPoolArgmaxKernels(KernelRegistry* r);

}  // namespace weft

#endif  // WEFT_OPS_CPU_NN3D_KERNELS_H_
