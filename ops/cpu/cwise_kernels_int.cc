// Binary element-wise kernels for int32 and int64.
#include "ops/cpu/cwise_binary_kernels.h"
#include "ops/cpu/cwise_register.h"

namespace weft {

void RegisterCwiseIntKernels(KernelRegistry* r) {
  RegisterIntegerBinaryKernels<int32_t>(r);
  RegisterIntegerBinaryKernels<int64_t>(r);
}

}  // namespace weft
