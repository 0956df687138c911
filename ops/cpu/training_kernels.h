// Optimizer kernels are in two files: ref variables (training_kernels.cc,
// which also holds RegisterTrainingKernels) and resource variables
// (training_resource_kernels.cc). Both use training_apply.h.
#ifndef WEFT_OPS_CPU_TRAINING_KERNELS_H_
#define WEFT_OPS_CPU_TRAINING_KERNELS_H_

#include "ops/framework/kernel_registry.h"

namespace weft {

// ResourceApplyMomentum, ResourceApplyAdam.
void RegisterResourceTrainingKernels(KernelRegistry* r);

// The optimizers of optimizer_ops.cc, every form (optimizer_kernels.cc).
void RegisterOptimizerRuleKernels(KernelRegistry* r);

}  // namespace weft

#endif  // WEFT_OPS_CPU_TRAINING_KERNELS_H_
