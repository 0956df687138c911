#include "ops/cpu/cwise_register.h"
#include "ops/registration.h"

namespace weft {

void RegisterCwiseKernels(KernelRegistry* r) {
  RegisterCwiseFloatKernels(r);
  RegisterCwiseDoubleKernels(r);
  RegisterCwiseHalfKernels(r);
  RegisterCwiseIntKernels(r);
  RegisterCwiseSmallIntKernels(r);
  RegisterCwiseBoolKernels(r);
  RegisterCwiseComplexKernels(r);
  RegisterCwiseUnaryKernels(r);
  RegisterCastKernels(r);
  RegisterAddNKernels(r);
}

}  // namespace weft
