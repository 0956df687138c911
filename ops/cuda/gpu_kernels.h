// CUDA kernels (device type "GPU"), float32: MatMul (cuBLAS), BiasAdd
// (NHWC), Relu, ReluGrad, Add/AddV2/Sub/Mul (NumPy broadcasting up to rank
// 6), Identity, and the GPU ends of _Send/_Recv (ops/cpu/sendrecv_kernels.cc
// registers those). Everything else runs on the CPU: the placer puts a node
// without a GPU kernel there (with soft placement) and values cross through
// _Send/_Recv, which copy between host and device memory.
//
//   RegisterGpuKernels(&registry);   // called by GlobalKernelRegistry()
//
// A build without the CUDA toolkit registers nothing (no_gpu_kernels.cc),
// so the placer sees no GPU kernels; nor are there GPU devices to use them.
#ifndef WEFT_OPS_CUDA_GPU_KERNELS_H_
#define WEFT_OPS_CUDA_GPU_KERNELS_H_

#include "ops/framework/kernel_registry.h"

namespace weft {

void RegisterGpuKernels(KernelRegistry* r);

}  // namespace weft

#endif  // WEFT_OPS_CUDA_GPU_KERNELS_H_
