// The reduction kernel families, one per translation unit (compile time);
// RegisterReductionKernels (reduction_kernels.cc) calls them all.
#ifndef WEFT_OPS_CPU_REDUCTION_REGISTER_H_
#define WEFT_OPS_CPU_REDUCTION_REGISTER_H_

#include "ops/framework/kernel_registry.h"

namespace weft {

void RegisterReductionFloatKernels(KernelRegistry* r);  // float, double
void RegisterReductionIntKernels(KernelRegistry* r);    // int32, int64, bool
void RegisterReductionSmallIntKernels(KernelRegistry* r);  // int8..uint64
void RegisterReductionHalfKernels(KernelRegistry* r);   // half, bfloat16
void RegisterArgMinMaxKernels(KernelRegistry* r);       // ArgMax, ArgMin
void RegisterReductionComplexKernels(KernelRegistry* r);  // complex64/128

}  // namespace weft

#endif  // WEFT_OPS_CPU_REDUCTION_REGISTER_H_
