#include "ops/cpu/reduction_register.h"
#include "ops/cpu/reduction_widened.h"

namespace weft {

void RegisterReductionIntKernels(KernelRegistry* r) {
  RegisterIntegerReductions<int32_t>(r);
  RegisterIntegerReductions<int64_t>(r);
  r->Register(KernelDef("All", kDeviceTypeCpu),
              MakeKernel<ReductionOp<AllReducer, bool>>);
  r->Register(KernelDef("Any", kDeviceTypeCpu),
              MakeKernel<ReductionOp<AnyReducer, bool>>);
}

}  // namespace weft
