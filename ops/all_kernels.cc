#include "ops/cuda/gpu_kernels.h"
#include "ops/framework/kernel_registry.h"
#include "ops/registration.h"

namespace weft {

void RegisterRemoteCallKernel(KernelRegistry* r);  // cpu/remote_call_kernel.cc

const KernelRegistry& GlobalKernelRegistry() {
  static const KernelRegistry* const registry = [] {
    auto* r = new KernelRegistry;
    RegisterArrayKernels(r);
    RegisterCwiseKernels(r);
    RegisterReductionKernels(r);
    RegisterMatMulKernels(r);
    RegisterNnKernels(r);
    RegisterStateKernels(r);
    RegisterControlFlowKernels(r);
    RegisterRandomKernels(r);
    RegisterConvKernels(r);
    RegisterTrainingKernels(r);
    RegisterSendRecvKernels(r);
    RegisterNnActivationKernels(r);
    RegisterMathExtraKernels(r);
    RegisterArrayGradKernels(r);
    RegisterIoKernels(r);
    RegisterDatasetKernels(r);
    RegisterParseKernels(r);
    RegisterAccumulatorKernels(r);
    RegisterQueueKernels(r);
    RegisterStageKernels(r);
    RegisterTensorListKernels(r);
    RegisterTensorArrayKernels(r);
    RegisterCollectiveKernels(r);
    RegisterScatterNdKernels(r);
    RegisterEinsumKernels(r);
    RegisterArrayIndexKernels(r);
    RegisterBatchNormKernels(r);
    RegisterImageResizeKernels(r);
    RegisterMathCwiseKernels(r);
    RegisterLinalgKernels(r);
    RegisterNn3dKernels(r);
    RegisterRemoteCallKernel(r);
    RegisterGpuKernels(r);  // none in a build without CUDA
    return r;
  }();
  return *registry;
}

}  // namespace weft
