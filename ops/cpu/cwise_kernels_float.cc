// Binary element-wise kernels for float.
#include "ops/cpu/cwise_binary_kernels.h"
#include "ops/cpu/cwise_register.h"

namespace weft {

void RegisterCwiseFloatKernels(KernelRegistry* r) {
  RegisterFloatingBinaryKernels<float>(r);
}

}  // namespace weft
