#include "ops/cpu/reduction_kernels_numeric.h"
#include "ops/cpu/reduction_register.h"

namespace weft {

void RegisterReductionIntKernels(KernelRegistry* r) {
  RegisterNumericReductions<int32_t>(r);
  RegisterNumericReductions<int64_t>(r);
  r->Register(KernelDef("All", kDeviceTypeCpu),
              MakeKernel<ReductionOp<AllReducer, bool>>);
  r->Register(KernelDef("Any", kDeviceTypeCpu),
              MakeKernel<ReductionOp<AnyReducer, bool>>);
}

}  // namespace weft
