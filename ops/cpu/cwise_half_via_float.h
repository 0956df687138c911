// Element-wise kernels on half (float16) that compute in float: each chunk
// of half inputs is widened to float, a float functor of cwise_ops.h's kind
// (Apply over Eigen arrays, vectorised) runs on it, and the result is
// rounded to half once. That is what TensorFlow's Eigen::half does for one
// operation; a functor that is several operations in TensorFlow rounds its
// intermediate results with RoundToHalf where Eigen::half would.
//
//   r->Register(KernelDef("Sin", kDeviceTypeCpu).TypeConstraint("T", DT_HALF),
//               MakeKernel<HalfUnaryOp<functor::Sin>>);
//
// Include only from ops/cpu/*.cc.
#ifndef WEFT_OPS_CPU_CWISE_HALF_VIA_FLOAT_H_
#define WEFT_OPS_CPU_CWISE_HALF_VIA_FLOAT_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/broadcast.h"
#include "ops/cpu/cwise_ops.h"
#include "runtime/core/types.h"

namespace weft {

// v rounded to the nearest half and widened back, element-wise.
template <typename X>
auto RoundToHalf(const X& x) {
  return x.unaryExpr([](float v) { return HalfToFloat(FloatToHalf(v)); });
}

inline void HalvesToFloats(const Half* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = HalfToFloat(in[i]);
}

template <typename Tout>
inline void StoreFloats(const float* in, Tout* out, int64_t n) {
  if constexpr (std::is_same_v<Tout, Half>) {
    for (int64_t i = 0; i < n; ++i) out[i] = FloatToHalf(in[i]);
  } else {
    std::copy(in, in + n, out);
  }
}

// y = F(x) on half; Tout is Half, or bool for the predicates.
template <typename F, typename Tout = Half>
class HalfUnaryOp : public OpKernel {
 public:
  explicit HalfUnaryOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    ComputeUnary<Half, Tout>(c, F::kCost + 4,
                             [](const Half* in, Tout* out, int64_t n) {
      constexpr int64_t kChunk = 256;
      float buf[kChunk];
      for (int64_t b = 0; b < n; b += kChunk) {
        const int64_t m = std::min(kChunk, n - b);
        HalvesToFloats(in + b, buf, m);
        if constexpr (std::is_same_v<Tout, Half>) {
          ArrayMap<float>(buf, m) = F::Apply(ConstArrayMap<float>(buf, m));
          StoreFloats(buf, out + b, m);
        } else {
          ArrayMap<Tout>(out + b, m) = F::Apply(ConstArrayMap<float>(buf, m));
        }
      }
    });
  }
};

// z = F(x, y) on half with NumPy broadcasting: both inputs widened whole,
// computed by cwise_ops.h's float loops, rounded into the output. With
// kSameSize (the *Grad ops) the inputs need only equal element counts and
// the output has input 0's shape, as SameSizeBinaryOp.
template <typename F, bool kSameSize = false>
class HalfBinaryViaFloatOp : public OpKernel {
 public:
  explicit HalfBinaryViaFloatOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    const Tensor& y = c->input(1);
    BroadcastPlan plan;
    if (kSameSize) {
      OP_REQUIRES(c, x.NumElements() == y.NumElements(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "The two arguments to a cwise op must have same number "
                      "of elements, got ",
                      x.NumElements(), " and ", y.NumElements())));
      plan.out_shape = x.shape();
    } else {
      absl::StatusOr<BroadcastPlan> p = MakeBroadcastPlan(x.shape(), y.shape());
      OP_REQUIRES_OK(c, p.status());
      plan = *std::move(p);
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, ForwardOrAllocateOutput(c, {0, 1}, plan.out_shape, &out));
    const int64_t n = plan.out_shape.num_elements();
    if (n == 0) return;
    std::vector<float> xf(x.NumElements()), yf(y.NumElements()), zf(n);
    HalvesToFloats(x.data<Half>(), xf.data(), x.NumElements());
    HalvesToFloats(y.data<Half>(), yf.data(), y.NumElements());
    if (kSameSize || plan.rows() == 1) {
      const bool x_vec = kSameSize || plan.x_inner_contiguous();
      const bool y_vec = kSameSize || plan.y_inner_contiguous();
      BinaryFlat<F>(c, xf.data(), x_vec, yf.data(), y_vec, zf.data(), n);
    } else {
      BinaryBroadcast<F>(c, plan, xf.data(), yf.data(), zf.data());
    }
    StoreFloats(zf.data(), out->data<Half>(), n);
  }
};

template <typename F>
void RegisterHalfUnary(KernelRegistry* r, const char* op) {
  RegisterCpuKernel<HalfUnaryOp<F>, Half>(r, op);
}
template <typename F>
void RegisterHalfBinary(KernelRegistry* r, const char* op) {
  RegisterCpuKernel<HalfBinaryViaFloatOp<F>, Half>(r, op);
}
template <typename F>
void RegisterHalfSameSize(KernelRegistry* r, const char* op) {
  RegisterCpuKernel<HalfBinaryViaFloatOp<F, true>, Half>(r, op);
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_CWISE_HALF_VIA_FLOAT_H_
