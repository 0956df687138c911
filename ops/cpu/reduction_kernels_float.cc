#include "ops/cpu/reduction_kernels_numeric.h"
#include "ops/cpu/reduction_register.h"

namespace weft {

void RegisterReductionFloatKernels(KernelRegistry* r) {
  RegisterNumericReductions<float>(r);
  RegisterNumericReductions<double>(r);
}

}  // namespace weft
