// A build without CUDA has no GPU kernels (see gpu_kernels.h).
#include "ops/cuda/gpu_kernels.h"

namespace weft {

void RegisterGpuKernels(KernelRegistry*) {}

}  // namespace weft
