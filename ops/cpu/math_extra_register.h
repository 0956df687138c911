// The kernels behind ops/math_extra_ops.cc, one family per translation unit;
// RegisterMathExtraKernels (math_extra_kernels.cc) calls them all.
#ifndef WEFT_OPS_CPU_MATH_EXTRA_REGISTER_H_
#define WEFT_OPS_CPU_MATH_EXTRA_REGISTER_H_

#include "ops/framework/kernel_registry.h"

namespace weft {

void RegisterBatchMatMulKernels(KernelRegistry* r);  // math_batch_matmul.cc
void RegisterScanKernels(KernelRegistry* r);         // math_scan_kernels.cc
void RegisterSegmentKernels(KernelRegistry* r);      // math_segment_kernels.cc
// Called by RegisterSegmentKernels.
void RegisterSortedSegmentKernels(KernelRegistry* r);  // segment_sorted_kernels.cc
void RegisterSparseSegmentKernels(KernelRegistry* r);  // sparse_segment_kernels.cc

}  // namespace weft

#endif  // WEFT_OPS_CPU_MATH_EXTRA_REGISTER_H_
