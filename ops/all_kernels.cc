#include "ops/cuda/gpu_kernels.h"
#include "ops/framework/kernel_registry.h"
#include "ops/registration.h"

namespace weft {

// ops/cpu/reader_kernels.cc and ops/cpu/file_io_kernels.cc (declared here
// rather than in ops/registration.h, which every kernel includes).
void RegisterReaderKernels(KernelRegistry* r);
void RegisterFileIoKernels(KernelRegistry* r);
// ops/cpu/summary_kernels.cc (likewise).
void RegisterSummaryKernels(KernelRegistry* r);
// ops/cpu/array_misc_kernels.cc and the files it names.
void RegisterArrayMiscKernels(KernelRegistry* r);
// The string and printing kernels, ops/cpu/string_*_kernels.cc (declared
// here, not in registration.h, which every kernel file includes).
void RegisterStringKernels(KernelRegistry* r);

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
    RegisterGpuKernels(r);  // none in a build without CUDA
    return r;
  }();
  return *registry;
}

}  // namespace weft
