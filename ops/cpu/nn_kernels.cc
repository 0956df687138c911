// Relu and ReluGrad; the other nn families register from here too.
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/nn_register.h"
#include "ops/framework/kernel_checks.h"
#include "ops/registration.h"

namespace weft {
namespace {

// out[i] = f[i] > 0 ? g[i] : 0 over [0, n). `out` may be g or f. Eigen 3.4
// evaluates select() one scalar at a time, with a branch per element that
// random signs mispredict half the time; a masked move (AVX-512) or an AND
// with a compare (AVX2) does a vector at once.
template <typename T>
void ReluGradRange(const T* g, const T* f, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = f[i] > T(0) ? g[i] : T(0);
}
#if defined(__AVX512F__)
template <>
void ReluGradRange<float>(const float* g, const float* f, float* out,
                          int64_t n) {
  const __m512 zero = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __mmask16 pos =
        _mm512_cmp_ps_mask(_mm512_loadu_ps(f + i), zero, _CMP_GT_OQ);
    _mm512_storeu_ps(out + i, _mm512_maskz_loadu_ps(pos, g + i));
  }
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __mmask16 pos = _mm512_mask_cmp_ps_mask(
        tail, _mm512_maskz_loadu_ps(tail, f + i), zero, _CMP_GT_OQ);
    _mm512_mask_storeu_ps(out + i, tail, _mm512_maskz_loadu_ps(pos, g + i));
  }
}
#elif defined(__AVX2__)
template <>
void ReluGradRange<float>(const float* g, const float* f, float* out,
                          int64_t n) {
  const __m256 zero = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {  // g where f > 0: an AND with the compare
    const __m256 pos = _mm256_cmp_ps(_mm256_loadu_ps(f + i), zero, _CMP_GT_OQ);
    _mm256_storeu_ps(out + i, _mm256_and_ps(pos, _mm256_loadu_ps(g + i)));
  }
  for (; i < n; ++i) out[i] = f[i] > 0.0f ? g[i] : 0.0f;
}
#endif

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
  RegisterBiasKernels(r);
  RegisterSoftmaxKernels(r);
}

}  // namespace weft
