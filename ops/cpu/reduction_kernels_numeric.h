// Sum, Mean, Prod, Max, Min for float or double (reduction_kernels_float.cc);
// the integer and half types are in reduction_widened.h.
#ifndef WEFT_OPS_CPU_REDUCTION_KERNELS_NUMERIC_H_
#define WEFT_OPS_CPU_REDUCTION_KERNELS_NUMERIC_H_

#include "ops/cpu/reduction_ops.h"

namespace weft {

template <typename T>
void RegisterNumericReductions(KernelRegistry* r) {
  RegisterCpuKernel<ReductionOp<SumReducer, T>, T>(r, "Sum");
  RegisterCpuKernel<ReductionOp<SumReducer, T, /*kMean=*/true>, T>(r, "Mean");
  RegisterCpuKernel<ReductionOp<ProdReducer, T>, T>(r, "Prod");
  RegisterCpuKernel<ReductionOp<MaxReducer, T>, T>(r, "Max");
  RegisterCpuKernel<ReductionOp<MinReducer, T>, T>(r, "Min");
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_REDUCTION_KERNELS_NUMERIC_H_
