// Shared by the GPU kernels' host code, so that each kernel reads as its
// checks and its launch: the GPU of the kernel's device made current on
// this thread, output 0 allocated, and launch errors as a Status naming the
// node.
//
//   void Compute(OpKernelContext* c) override {
//     const Tensor& x = c->input(0);
//     LaunchOnGpu(*this, c, x.shape(), [&](cudaStream_t stream, float* y) {
//       return cuda::LaunchRelu(x.data<float>(), y, x.NumElements(), stream);
//     });
//   }
//
// Kernels that need more than a stream (MatMul: the cuBLAS handle) use
// PrepareGpuOutput and report their own errors.
//
// Thread safety: as OpKernel::Compute; nothing here keeps state.
#ifndef WEFT_OPS_CUDA_GPU_KERNEL_UTIL_H_
#define WEFT_OPS_CUDA_GPU_KERNEL_UTIL_H_

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "runtime/gpu/cuda_status.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/core/status.h"

namespace weft {

// The families RegisterGpuKernels (register_gpu_kernels.cc) calls.
void RegisterMatMulGpuKernel(KernelRegistry* r);   // matmul_gpu_kernel.cc
void RegisterCwiseGpuKernels(KernelRegistry* r);   // cwise_gpu_kernels.cc

// The GPU context of the kernel's device, current on this thread.
inline absl::StatusOr<GpuContext*> ActiveGpu(OpKernelContext* c) {
  WEFT_ASSIGN_OR_RETURN(GpuContext * gpu, GpuDeviceContext(c->device()));
  WEFT_RETURN_IF_ERROR(gpu->Activate());
  return gpu;
}

// A launch error of `k`'s CUDA kernel, naming the op and node.
inline absl::Status LaunchStatus(const OpKernel& k, cudaError_t error) {
  return CudaStatus(error, absl::StrCat("launching the CUDA kernel of ",
                                        k.type_string(), " node '", k.name(), "'"));
}

// What a kernel launches into: its GPU (current) and output 0 (device memory).
struct GpuOutput {
  GpuContext* gpu;
  Tensor* tensor;
};

inline absl::StatusOr<GpuOutput> PrepareGpuOutput(OpKernelContext* c,
                                                  const TensorShape& shape) {
  WEFT_ASSIGN_OR_RETURN(GpuContext * gpu, ActiveGpu(c));
  Tensor* out = nullptr;
  WEFT_RETURN_IF_ERROR(c->allocate_output(0, shape, &out));
  return GpuOutput{gpu, out};
}

// Allocates output 0 (float, `shape`) and calls launch(stream, out), which
// queues the kernel and returns its cudaError_t; any failure is set on `c`.
// The caller has checked the inputs.
template <typename Launch>
void LaunchOnGpu(const OpKernel& k, OpKernelContext* c, const TensorShape& shape,
                 Launch&& launch) {
  absl::StatusOr<GpuOutput> out = PrepareGpuOutput(c, shape);
  OP_REQUIRES_OK(c, out.status());
  OP_REQUIRES_OK(c, LaunchStatus(k, launch(out->gpu->stream(),
                                           out->tensor->data<float>())));
}

}  // namespace weft

#endif  // WEFT_OPS_CUDA_GPU_KERNEL_UTIL_H_
