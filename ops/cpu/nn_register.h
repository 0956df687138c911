// The nn kernel families, one per translation unit; RegisterNnKernels
// (nn_kernels.cc) calls them all.
#ifndef WEFT_OPS_CPU_NN_REGISTER_H_
#define WEFT_OPS_CPU_NN_REGISTER_H_

#include "ops/framework/kernel_registry.h"

namespace weft {

void RegisterBiasKernels(KernelRegistry* r);     // nn_bias_kernels.cc
void RegisterSoftmaxKernels(KernelRegistry* r);  // nn_softmax_kernels.cc
// L2Loss, SoftmaxCrossEntropyWithLogits (nn_loss_kernels.cc); called from
// RegisterNnActivationKernels (nn_activation_kernels.cc).
void RegisterNnLossKernels(KernelRegistry* r);
// Ops on half and bfloat16 through their float kernels (via_float_kernel.cc):
// the nn, pooling, matmul and convolution ops, AddN, element-wise math on
// bfloat16, and a few others.
void RegisterViaFloatKernels(KernelRegistry* r);

}  // namespace weft

#endif  // WEFT_OPS_CPU_NN_REGISTER_H_
