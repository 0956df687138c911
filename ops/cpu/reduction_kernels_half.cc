#include "ops/cpu/reduction_register.h"
#include "ops/cpu/reduction_widened.h"

namespace weft {

void RegisterReductionHalfKernels(KernelRegistry* r) {
  RegisterNarrowFloatReductions<Half>(r);
  RegisterNarrowFloatReductions<BFloat16>(r);
}

}  // namespace weft
