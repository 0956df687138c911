// RegisterMathCwiseKernels: the CPU kernels of ops/math_cwise_ops.cc.
#include "ops/cpu/math_cwise_register.h"
#include "ops/registration.h"

namespace weft {

// Declared here rather than in math_cwise_register.h, which every kernel
// file sees.
void RegisterMathBesselKernels(KernelRegistry* r);    // math_bessel_kernels.cc
void RegisterMathIntegralKernels(KernelRegistry* r);  // math_integral_kernels.cc

void RegisterMathCwiseKernels(KernelRegistry* r) {
  RegisterMathUnaryKernels(r);
  RegisterMathBinaryKernels(r);
  RegisterMathSpecialKernels(r);
  RegisterMathBesselKernels(r);
  RegisterMathIntegralKernels(r);
  RegisterMathHalfKernels(r);
  RegisterMathBitwiseKernels(r);
}

}  // namespace weft
