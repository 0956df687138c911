// Unary float and double kernels: the trigonometric and hyperbolic
// functions, Expm1, Log1p, Rint and the IsFinite/IsNan/IsInf predicates,
// through Eigen's array functions (TensorFlow's own, so the numbers agree).
#include "ops/cpu/math_cwise_functors.h"
#include "ops/cpu/math_cwise_register.h"

namespace weft {
namespace {

template <typename T>
void RegisterFor(KernelRegistry* r) {
  using namespace functor;  // NOLINT: the functors are the op names
#define WEFT_REGISTER(F) RegisterUnary<F, T>(r, #F);
  WEFT_MATH_UNARY_FUNCTIONS(WEFT_REGISTER)
#undef WEFT_REGISTER
#define WEFT_REGISTER(F) RegisterCpuKernel<UnaryOp<F, T, bool>, T>(r, #F);
  WEFT_MATH_PREDICATES(WEFT_REGISTER)
#undef WEFT_REGISTER
  RegisterUnary<Rint, T>(r, "Rint");
}

}  // namespace

void RegisterMathUnaryKernels(KernelRegistry* r) {
  RegisterFor<float>(r);
  RegisterFor<double>(r);
}

}  // namespace weft
