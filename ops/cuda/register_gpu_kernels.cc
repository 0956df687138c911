#include "ops/cuda/gpu_kernel_util.h"
#include "ops/cuda/gpu_kernels.h"

namespace weft {

void RegisterGpuKernels(KernelRegistry* r) {
  RegisterMatMulGpuKernel(r);
  RegisterCwiseGpuKernels(r);
}

}  // namespace weft
