// RegisterMathCwiseKernels: the CPU kernels of ops/math_cwise_ops.cc.
#include "ops/cpu/math_cwise_register.h"
#include "ops/registration.h"

namespace weft {

void RegisterMathCwiseKernels(KernelRegistry* r) {
  RegisterMathUnaryKernels(r);
  RegisterMathBinaryKernels(r);
  RegisterMathSpecialKernels(r);
  RegisterMathHalfKernels(r);
  RegisterMathBitwiseKernels(r);
}

}  // namespace weft
