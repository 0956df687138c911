// Binary element-wise kernels for double.
#include "ops/cpu/cwise_binary_kernels.h"
#include "ops/cpu/cwise_register.h"

namespace weft {

void RegisterCwiseDoubleKernels(KernelRegistry* r) {
  RegisterFloatingBinaryKernels<double>(r);
}

}  // namespace weft
