// Relu and ReluGrad; the other nn families register from here too.
#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/nn_register.h"
#include "ops/registration.h"

namespace weft {
namespace {

// ReluGrad(gradients, features): gradients where features > 0, else 0.
template <typename T>
class ReluGradOp : public OpKernel {
 public:
  explicit ReluGradOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& g = c->input(0);
    const Tensor& f = c->input(1);
    OP_REQUIRES(c, g.shape() == f.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "gradients and features must have the same shape, got ",
                    g.shape().DebugString(), " and ",
                    f.shape().DebugString())));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, ForwardOrAllocateOutput(c, {0, 1}, g.shape(), &out));
    BinaryFlat<functor::ReluGrad>(c, g.data<T>(), true, f.data<T>(), true,
                                  out->data<T>(), g.NumElements());
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
  RegisterBiasKernels(r);
  RegisterSoftmaxKernels(r);
}

}  // namespace weft
