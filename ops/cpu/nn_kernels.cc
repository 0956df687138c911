// Relu and ReluGrad; the other nn families register from here too.
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/nn_register.h"
#include "ops/cpu/relu_grad.h"
#include "ops/framework/kernel_checks.h"
#include "ops/registration.h"

namespace weft {
namespace {

// out[i] = f[i] > 0 ? g[i] : 0 over [0, n); float has a vector loop
// (relu_grad.h).
template <typename T>
void ReluGradRange(const T* g, const T* f, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    ReluGradFloat(g, f, out, n);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = f[i] > T(0) ? g[i] : T(0);
  }
}

// ReluGrad(gradients, features): gradients where features > 0, else 0.
template <typename T>
class ReluGradOp : public OpKernel {
 public:
  explicit ReluGradOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& g = c->input(0);
    const Tensor& f = c->input(1);
    OP_REQUIRES_OK(c, CheckSameShape("gradients", g, "features", f));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, ForwardOrAllocateOutput(c, {0, 1}, g.shape(), &out));
    const T* gp = g.data<T>();
    const T* fp = f.data<T>();
    T* op = out->data<T>();
    ParallelRange(c, g.NumElements(), functor::ReluGrad::kCost,
                  [&](int64_t b, int64_t e) {
                    ReluGradRange(gp + b, fp + b, op + b, e - b);
                  });
  }
};

template <typename T>
void RegisterRelu(KernelRegistry* r) {
  RegisterUnary<functor::Relu, T>(r, "Relu");
  RegisterCpuKernel<ReluGradOp<T>, T>(r, "ReluGrad");
}

}  // namespace

void RegisterNnKernels(KernelRegistry* r) {
  RegisterRelu<float>(r);
  RegisterRelu<double>(r);
  RegisterRelu<int32_t>(r);
  RegisterRelu<int64_t>(r);
  RegisterRelu<int8_t>(r);
  RegisterRelu<int16_t>(r);
  RegisterRelu<uint8_t>(r);
  RegisterRelu<uint16_t>(r);
  RegisterRelu<uint32_t>(r);
  RegisterRelu<uint64_t>(r);
  RegisterBiasKernels(r);
  RegisterSoftmaxKernels(r);
  RegisterViaFloatKernels(r);
}

}  // namespace weft
