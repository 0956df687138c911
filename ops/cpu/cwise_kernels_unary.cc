// Unary element-wise kernels (Neg, Exp, Tanh, ...) for every dtype.
#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/cwise_register.h"

namespace weft {
namespace {

template <typename T>
void RegisterSignedUnary(KernelRegistry* r) {
  RegisterUnary<functor::Neg, T>(r, "Neg");
  RegisterUnary<functor::Square, T>(r, "Square");
  RegisterUnary<functor::Abs, T>(r, "Abs");
  RegisterUnary<functor::Sign, T>(r, "Sign");
}

template <typename T>
void RegisterFloatingUnary(KernelRegistry* r) {
  RegisterSignedUnary<T>(r);
  RegisterUnary<functor::Sqrt, T>(r, "Sqrt");
  RegisterUnary<functor::Rsqrt, T>(r, "Rsqrt");
  RegisterUnary<functor::Exp, T>(r, "Exp");
  RegisterUnary<functor::Log, T>(r, "Log");
  RegisterUnary<functor::Tanh, T>(r, "Tanh");
  RegisterUnary<functor::Sigmoid, T>(r, "Sigmoid");
  RegisterUnary<functor::Reciprocal, T>(r, "Reciprocal");
  RegisterUnary<functor::Floor, T>(r, "Floor");
  RegisterUnary<functor::Ceil, T>(r, "Ceil");
  RegisterUnary<functor::Round, T>(r, "Round");
}

template <typename T>
void RegisterIntegerUnary(KernelRegistry* r) {
  RegisterSignedUnary<T>(r);
  RegisterUnary<functor::Identity, T>(r, "Round");
}

}  // namespace

void RegisterCwiseUnaryKernels(KernelRegistry* r) {
  RegisterFloatingUnary<float>(r);
  RegisterFloatingUnary<double>(r);
  RegisterIntegerUnary<int32_t>(r);
  RegisterIntegerUnary<int64_t>(r);
}

}  // namespace weft
