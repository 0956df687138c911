// State kernels are in two files: ref variables (state_kernels.cc, which also
// holds RegisterStateKernels) and resource variables
// (state_resource_kernels.cc).
#ifndef WEFT_OPS_CPU_STATE_KERNELS_H_
#define WEFT_OPS_CPU_STATE_KERNELS_H_

#include "ops/framework/kernel_registry.h"

namespace weft {

// VarHandleOp, ReadVariableOp, AssignVariableOp, AssignAdd/SubVariableOp,
// ResourceApplyGradientDescent, VarIsInitializedOp, DestroyResourceOp.
void RegisterResourceVariableKernels(KernelRegistry* r);
// ScatterUpdate and the other Scatter* ops on ref variables
// (scatter_kernels.cc).
void RegisterScatterKernels(KernelRegistry* r);

}  // namespace weft

#endif  // WEFT_OPS_CPU_STATE_KERNELS_H_
