// Unary element-wise kernels (Neg, Exp, Tanh, ...) for every dtype.
#include <type_traits>

#include "ops/cpu/activation_simd.h"
#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/cwise_register.h"

namespace weft {
namespace {

// Sigmoid and Tanh of float: the per-ISA loops (activation_simd.h).
template <void (*kFn)(const float*, float*, int64_t)>
class FloatActivationOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    ComputeUnary<float, float>(c, functor::Tanh::kCost, kFn);
  }
};

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
  if constexpr (std::is_same_v<T, float>) {
    RegisterCpuKernel<FloatActivationOp<TanhFloat>, T>(r, "Tanh");
    RegisterCpuKernel<FloatActivationOp<SigmoidFloat>, T>(r, "Sigmoid");
  } else {
    RegisterUnary<functor::Tanh, T>(r, "Tanh");
    RegisterUnary<functor::Sigmoid, T>(r, "Sigmoid");
  }
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
