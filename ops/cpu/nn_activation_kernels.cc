// Relu6, LeakyRelu, Elu, Selu, Softplus, Softsign and their gradients, as
// element-wise functors (cwise_ops.h walks the tensors and shards the work).
// Formulas follow TensorFlow's CPU kernels so results agree to rounding:
// Softplus switches to x or exp(x) where log1p(exp(x)) would lose precision;
// EluGrad and SeluGrad take the op's output, not its input.
#include <cmath>
#include <limits>

#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/nn_register.h"
#include "ops/registration.h"

namespace weft {
namespace {

// ---- Forward ------------------------------------------------------------

struct Relu6 {
  static constexpr int kCost = 2;
  template <typename X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    return x.cwiseMax(T(0)).cwiseMin(T(6));
  }
};

struct Elu {
  static constexpr int kCost = 20;
  template <typename X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    return (x < T(0)).select(x.exp() - T(1), x);
  }
};

// SELU's constants (Klambauer et al., 2017).
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

struct Selu {
  static constexpr int kCost = 20;
  template <typename X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    return (x < T(0)).select((x.exp() - T(1)) * T(kSeluScale * kSeluAlpha),
                             x * T(kSeluScale));
  }
};

struct Softplus {
  static constexpr int kCost = 40;
  template <typename X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    // Beyond +-threshold, log1p(exp(x)) equals x (or exp(x)) to T's epsilon.
    const T threshold =
        std::log(std::numeric_limits<T>::epsilon()) + T(2);
    return (x > -threshold)
        .select(x, (x < threshold).select(x.exp(), x.exp().log1p()));
  }
};

struct Softsign {
  static constexpr int kCost = 5;
  template <typename X>
  static auto Apply(const X& x) {
    using T = typename X::Scalar;
    return x / (x.abs() + T(1));
  }
};

// ---- Gradients: Apply(gradients, features or outputs) ----------------------

struct Relu6Grad : BinaryFunctorBase {
  static constexpr int kCost = 2;
  template <typename G, typename F>
  static auto Apply(const G& g, const F& f) {
    using T = typename G::Scalar;
    return (f > T(0) && f < T(6)).select(g, T(0));
  }
};

struct EluGrad : BinaryFunctorBase {  // f is Elu's output
  static constexpr int kCost = 3;
  template <typename G, typename F>
  static auto Apply(const G& g, const F& y) {
    using T = typename G::Scalar;
    return (y < T(0)).select(g * (y + T(1)), g);
  }
};

struct SeluGrad : BinaryFunctorBase {  // f is Selu's output
  static constexpr int kCost = 3;
  template <typename G, typename F>
  static auto Apply(const G& g, const F& y) {
    using T = typename G::Scalar;
    return (y < T(0)).select(g * (y + T(kSeluScale * kSeluAlpha)),
                             g * T(kSeluScale));
  }
};

struct SoftplusGrad : BinaryFunctorBase {  // g * sigmoid(f)
  static constexpr int kCost = 20;
  template <typename G, typename F>
  static auto Apply(const G& g, const F& f) {
    using T = typename G::Scalar;
    return g / ((-f).exp() + T(1));
  }
};

struct SoftsignGrad : BinaryFunctorBase {  // g / (1 + |f|)^2
  static constexpr int kCost = 5;
  template <typename G, typename F>
  static auto Apply(const G& g, const F& f) {
    using T = typename G::Scalar;
    return g / (f.abs() + T(1)).square();
  }
};

// LeakyRelu and its gradient carry the attr `alpha`, so they are kernels of
// their own rather than stateless functors.
template <typename T>
class LeakyReluOp : public OpKernel {
 public:
  explicit LeakyReluOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("alpha", &alpha_));
  }
  void Compute(OpKernelContext* c) override {
    const T alpha = static_cast<T>(alpha_);
    ComputeUnary<T, T>(c, 2, [alpha](const T* in, T* o, int64_t n) {
      ConstArrayMap<T> v(in, n);
      ArrayMap<T>(o, n) = (v > T(0)).select(v, v * alpha);
    });
  }

 private:
  float alpha_ = 0.2f;
};

template <typename T>
class LeakyReluGradOp : public OpKernel {
 public:
  explicit LeakyReluGradOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("alpha", &alpha_));
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& g = c->input(0);
    const Tensor& f = c->input(1);
    OP_REQUIRES(c, g.NumElements() == f.NumElements(),
                absl::InvalidArgumentError(absl::StrCat(
                    "gradients and features must have the same size, got ",
                    g.shape().DebugString(), " and ", f.shape().DebugString())));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, ForwardOrAllocateOutput(c, {0, 1}, g.shape(), &out));
    const T* gp = g.data<T>();
    const T* fp = f.data<T>();
    T* o = out->data<T>();
    const T alpha = static_cast<T>(alpha_);
    ParallelRange(c, g.NumElements(), 2, [&](int64_t b, int64_t e) {
      ConstArrayMap<T> gv(gp + b, e - b);
      ArrayMap<T>(o + b, e - b) =
          (ConstArrayMap<T>(fp + b, e - b) > T(0)).select(gv, gv * alpha);
    });
  }

 private:
  float alpha_ = 0.2f;
};

template <typename T>
void RegisterFloatActivations(KernelRegistry* r) {
  RegisterUnary<Relu6, T>(r, "Relu6");
  RegisterUnary<Elu, T>(r, "Elu");
  RegisterUnary<Selu, T>(r, "Selu");
  RegisterUnary<Softplus, T>(r, "Softplus");
  RegisterUnary<Softsign, T>(r, "Softsign");
  RegisterCpuKernel<SameSizeBinaryOp<Relu6Grad, T>, T>(r, "Relu6Grad");
  RegisterCpuKernel<SameSizeBinaryOp<EluGrad, T>, T>(r, "EluGrad");
  RegisterCpuKernel<SameSizeBinaryOp<SeluGrad, T>, T>(r, "SeluGrad");
  RegisterCpuKernel<SameSizeBinaryOp<SoftplusGrad, T>, T>(r, "SoftplusGrad");
  RegisterCpuKernel<SameSizeBinaryOp<SoftsignGrad, T>, T>(r, "SoftsignGrad");
  RegisterCpuKernel<LeakyReluOp<T>, T>(r, "LeakyRelu");
  RegisterCpuKernel<LeakyReluGradOp<T>, T>(r, "LeakyReluGrad");
}

// Relu6 and its gradient on an integer type (TensorFlow's OpDefs take
// every real type; the other activations are float-only there).
template <typename T>
void RegisterIntegerRelu6(KernelRegistry* r) {
  RegisterUnary<Relu6, T>(r, "Relu6");
  RegisterCpuKernel<SameSizeBinaryOp<Relu6Grad, T>, T>(r, "Relu6Grad");
}

}  // namespace

void RegisterNnActivationKernels(KernelRegistry* r) {
  RegisterFloatActivations<float>(r);
  RegisterFloatActivations<double>(r);
  RegisterIntegerRelu6<int32_t>(r);
  RegisterIntegerRelu6<int64_t>(r);
  RegisterIntegerRelu6<int8_t>(r);
  RegisterIntegerRelu6<int16_t>(r);
  RegisterIntegerRelu6<uint8_t>(r);
  RegisterIntegerRelu6<uint16_t>(r);
  RegisterIntegerRelu6<uint32_t>(r);
  RegisterIntegerRelu6<uint64_t>(r);
  RegisterNnLossKernels(r);
}

}  // namespace weft
