// The kernel files of ops/math_cwise_ops.cc's ops, one dtype family each so
// that no file is slow to compile. RegisterMathCwiseKernels
// (math_cwise_kernels.cc) calls them all.
#ifndef WEFT_OPS_CPU_MATH_CWISE_REGISTER_H_
#define WEFT_OPS_CPU_MATH_CWISE_REGISTER_H_

#include "ops/framework/kernel_registry.h"

namespace weft {

void RegisterMathUnaryKernels(KernelRegistry* r);    // math_unary_kernels.cc
void RegisterMathBinaryKernels(KernelRegistry* r);   // math_binary_kernels.cc
void RegisterMathSpecialKernels(KernelRegistry* r);  // math_special_kernels.cc
void RegisterMathHalfKernels(KernelRegistry* r);     // math_half_kernels.cc
void RegisterMathBitwiseKernels(KernelRegistry* r);  // math_bitwise_kernels.cc

}  // namespace weft

#endif  // WEFT_OPS_CPU_MATH_CWISE_REGISTER_H_
