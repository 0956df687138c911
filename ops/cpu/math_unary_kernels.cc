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
  RegisterUnary<Sin, T>(r, "Sin");
  RegisterUnary<Cos, T>(r, "Cos");
  RegisterUnary<Tan, T>(r, "Tan");
  RegisterUnary<Asin, T>(r, "Asin");
  RegisterUnary<Acos, T>(r, "Acos");
  RegisterUnary<Atan, T>(r, "Atan");
  RegisterUnary<Sinh, T>(r, "Sinh");
  RegisterUnary<Cosh, T>(r, "Cosh");
  RegisterUnary<Asinh, T>(r, "Asinh");
  RegisterUnary<Acosh, T>(r, "Acosh");
  RegisterUnary<Atanh, T>(r, "Atanh");
  RegisterUnary<Expm1, T>(r, "Expm1");
  RegisterUnary<Log1p, T>(r, "Log1p");
  RegisterUnary<Rint, T>(r, "Rint");
  RegisterCpuKernel<UnaryOp<IsFinite, T, bool>, T>(r, "IsFinite");
  RegisterCpuKernel<UnaryOp<IsNan, T, bool>, T>(r, "IsNan");
  RegisterCpuKernel<UnaryOp<IsInf, T, bool>, T>(r, "IsInf");
}

}  // namespace

void RegisterMathUnaryKernels(KernelRegistry* r) {
  RegisterFor<float>(r);
  RegisterFor<double>(r);
}

}  // namespace weft
