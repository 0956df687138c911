// The element-wise kernel families, one per translation unit so that the
// heavy Eigen instantiations compile in parallel and none takes long.
// RegisterCwiseKernels (cwise_kernels.cc) calls them all.
#ifndef WEFT_OPS_CPU_CWISE_REGISTER_H_
#define WEFT_OPS_CPU_CWISE_REGISTER_H_

#include "ops/framework/kernel_registry.h"

namespace weft {

void RegisterCwiseFloatKernels(KernelRegistry* r);   // cwise_kernels_float.cc
void RegisterCwiseDoubleKernels(KernelRegistry* r);  // cwise_kernels_double.cc
void RegisterCwiseHalfKernels(KernelRegistry* r);    // cwise_kernels_half.cc
void RegisterCwiseIntKernels(KernelRegistry* r);     // cwise_kernels_int.cc
void RegisterCwiseSmallIntKernels(KernelRegistry* r);  // cwise_kernels_small_int.cc
void RegisterCwiseBoolKernels(KernelRegistry* r);    // cwise_kernels_bool.cc
void RegisterCwiseComplexKernels(KernelRegistry* r);  // cwise_kernels_complex.cc
void RegisterCwiseUnaryKernels(KernelRegistry* r);   // cwise_kernels_unary.cc
void RegisterCastKernels(KernelRegistry* r);         // cwise_cast.cc
void RegisterAddNKernels(KernelRegistry* r);         // cwise_addn.cc

}  // namespace weft

#endif  // WEFT_OPS_CPU_CWISE_REGISTER_H_
