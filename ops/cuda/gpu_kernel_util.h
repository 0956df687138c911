// Shared by the GPU kernels' host code: the GPU context of the kernel's
// device, made current on this thread, and launch errors as Status naming
// the node.
//
//   absl::StatusOr<GpuContext*> gpu = ActiveGpu(c);
//   OP_REQUIRES_OK(c, gpu.status());
//   OP_REQUIRES_OK(c, LaunchStatus(*this, LaunchRelu(x, y, n, (*gpu)->stream())));
#ifndef WEFT_OPS_CUDA_GPU_KERNEL_UTIL_H_
#define WEFT_OPS_CUDA_GPU_KERNEL_UTIL_H_

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "runtime/gpu/cuda_status.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/status.h"

namespace weft {

// The families RegisterGpuKernels (register_gpu_kernels.cc) calls.
void RegisterMatMulGpuKernel(KernelRegistry* r);   // matmul_gpu_kernel.cc
void RegisterCwiseGpuKernels(KernelRegistry* r);   // cwise_gpu_kernels.cc

inline absl::StatusOr<GpuContext*> ActiveGpu(OpKernelContext* c) {
  WEFT_ASSIGN_OR_RETURN(GpuContext * gpu, GpuDeviceContext(c->device()));
  WEFT_RETURN_IF_ERROR(gpu->Activate());
  return gpu;
}

inline absl::Status LaunchStatus(const OpKernel& k, cudaError_t error) {
  return CudaStatus(error, absl::StrCat("launching the CUDA kernel of ",
                                        k.type_string(), " node '", k.name(), "'"));
}

}  // namespace weft

#endif  // WEFT_OPS_CUDA_GPU_KERNEL_UTIL_H_
