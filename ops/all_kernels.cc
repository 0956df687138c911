#include "ops/cuda/gpu_kernels.h"
#include "ops/framework/kernel_registry.h"
#include "ops/registration.h"

namespace weft {

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
    RegisterReaderKernels(r);
    RegisterFileIoKernels(r);
    RegisterSummaryKernels(r);
    RegisterStageKernels(r);
    RegisterTensorListKernels(r);
    RegisterTensorArrayKernels(r);
    RegisterCollectiveKernels(r);
    RegisterScatterNdKernels(r);
    RegisterEinsumKernels(r);
    RegisterArrayIndexKernels(r);
    RegisterBatchNormKernels(r);
    RegisterImageResizeKernels(r);
    RegisterImageColorKernels(r);
    RegisterImageDrawKernels(r);
    RegisterImageNmsKernels(r);
    RegisterImageCropKernels(r);
    RegisterImageResampleKernels(r);
    RegisterImageScaleKernels(r);
    RegisterImagePatchesKernels(r);
    RegisterMathCwiseKernels(r);
    RegisterLinalgKernels(r);
    RegisterNn3dKernels(r);
    RegisterArrayMiscKernels(r);
    RegisterLookupKernels(r);
    RegisterStringKernels(r);
    RegisterRaggedKernels(r);
    RegisterSetKernels(r);
    RegisterFusedPadConvKernels(r);
    RegisterImageCodecKernels(r);
    RegisterComplexKernels(r);
    RegisterFftKernels(r);
    RegisterRemoteCallKernel(r);
    RegisterGpuKernels(r);  // none in a build without CUDA
    return r;
  }();
  return *registry;
}

}  // namespace weft
