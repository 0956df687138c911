#include "ops/cpu/reduction_register.h"
#include "ops/registration.h"

namespace weft {

void RegisterReductionKernels(KernelRegistry* r) {
  RegisterReductionFloatKernels(r);
  RegisterReductionIntKernels(r);
  RegisterReductionSmallIntKernels(r);
  RegisterReductionHalfKernels(r);
  RegisterArgMinMaxKernels(r);
  RegisterReductionComplexKernels(r);
}

}  // namespace weft
