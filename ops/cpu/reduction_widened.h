// Reductions computed in a wider type than their tensors hold, as
// TensorFlow computes them:
//
//   half, bfloat16      Sum, Mean, Prod, Max, Min fold in float; the result is
//                       rounded once (Max and Min are exact either way). Mean
//                       rounds the sum before dividing, so a sum past the
//                       type's range is inf, as TensorFlow's is.
//   int8..int32,        Mean folds in int64 (uint64 for the unsigned types),
//   uint8..uint32       so that the mean of [100, 100] in int8 is 100, not
//                       the mean of a wrapped sum.
//
// The input is widened into a temporary first (up to eight times its size,
// for int8), then reduced by reduction_ops.h's loops on the wide type: no
// new reduction code, and the float loops' vectorisation.
//
// TensorFlow folds the non-innermost axes of a half tensor in half, one
// element after another (the sum of 10000 ones down a column is 2048 there);
// Weft's float fold gives 10000 and agrees with it wherever TensorFlow's
// own result is accurate.
//
// Include only from ops/cpu/*.cc: it pulls in Eigen.
#ifndef WEFT_OPS_CPU_REDUCTION_WIDENED_H_
#define WEFT_OPS_CPU_REDUCTION_WIDENED_H_

#include <type_traits>

#include "ops/cpu/float_convert.h"
#include "ops/cpu/narrow_convert.h"
#include "ops/cpu/reduction_ops.h"

namespace weft {

// T reduced through Wide: R's fold on Wide, then back to T. With kMean the
// sum is converted back to T, then divided by the count in Wide.
template <typename R, typename T, typename Wide, bool kMean = false>
class WidenedReductionOp : public OpKernel {
 public:
  explicit WidenedReductionOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    std::optional<ReductionPlan> plan = PlanReduction(c, keep_dims_);
    if (!plan) return;
    Tensor wide_in, wide_out;
    OP_REQUIRES_OK(c, c->allocate_temp(DataTypeToEnum<Wide>::value,
                                       TensorShape({in.NumElements()}), &wide_in));
    const int64_t out_n = plan->out_shape.num_elements();
    OP_REQUIRES_OK(c, c->allocate_temp(DataTypeToEnum<Wide>::value,
                                       TensorShape({out_n}), &wide_out));
    WidenAll(c, in.data<T>(), wide_in.data<Wide>(), in.NumElements());
    OP_REQUIRES_OK(c, ReduceWithPlan<R>(c, *plan, wide_in.data<Wide>(), wide_out.data<Wide>()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, plan->out_shape, &out));
    const Wide* r = wide_out.data<Wide>();
    T* dst = out->data<T>();
    const int64_t count = plan->reduced_count;
    for (int64_t i = 0; i < out_n; ++i) {
      if constexpr (!kMean) {
        dst[i] = Narrow(r[i]);
      } else if constexpr (std::is_integral_v<Wide>) {
        dst[i] = count == 0 ? T(0) : static_cast<T>(r[i] / static_cast<Wide>(count));
      } else {
        dst[i] = Narrow(Widen(Narrow(r[i])) / static_cast<Wide>(count));
      }
    }
  }

 private:
  // in -> wide, element-wise, over the intra-op pool; half and bfloat16
  // through narrow_convert.h's vector loops.
  static void WidenAll(OpKernelContext* c, const T* in, Wide* out, int64_t n) {
    ParallelRange(c, n, 2, [&](int64_t b, int64_t e) {
      if constexpr (std::is_same_v<T, Half>) {
        HalfToFloatN(in + b, out + b, e - b);
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        BFloat16ToFloatN(in + b, out + b, e - b);
      } else {
        for (int64_t i = b; i < e; ++i) out[i] = Widen(in[i]);
      }
    });
  }
  static Wide Widen(T v) {
    if constexpr (std::is_integral_v<Wide>) {
      return static_cast<Wide>(v);
    } else {
      return ToFloat(v);
    }
  }
  static T Narrow(Wide v) {
    if constexpr (std::is_integral_v<Wide>) {
      return static_cast<T>(v);  // wraps, as TensorFlow's cast back does
    } else {
      return FromFloat<T>(v);
    }
  }

  bool keep_dims_ = false;
};

// Sum, Mean, Prod, Max and Min of half or bfloat16, folded in float.
template <typename T>
void RegisterNarrowFloatReductions(KernelRegistry* r) {
  RegisterCpuKernel<WidenedReductionOp<SumReducer, T, float>, T>(r, "Sum");
  RegisterCpuKernel<WidenedReductionOp<SumReducer, T, float, true>, T>(r, "Mean");
  RegisterCpuKernel<WidenedReductionOp<ProdReducer, T, float>, T>(r, "Prod");
  RegisterCpuKernel<WidenedReductionOp<MaxReducer, T, float>, T>(r, "Max");
  RegisterCpuKernel<WidenedReductionOp<MinReducer, T, float>, T>(r, "Min");
}

// Sum, Prod, Max and Min of an integer type in the type itself (wrapping);
// Mean through int64 or uint64.
template <typename T>
void RegisterIntegerReductions(KernelRegistry* r) {
  using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  RegisterCpuKernel<ReductionOp<SumReducer, T>, T>(r, "Sum");
  if constexpr (sizeof(T) < sizeof(Wide)) {
    RegisterCpuKernel<WidenedReductionOp<SumReducer, T, Wide, true>, T>(r, "Mean");
  } else {
    RegisterCpuKernel<ReductionOp<SumReducer, T, /*kMean=*/true>, T>(r, "Mean");
  }
  RegisterCpuKernel<ReductionOp<ProdReducer, T>, T>(r, "Prod");
  RegisterCpuKernel<ReductionOp<MaxReducer, T>, T>(r, "Max");
  RegisterCpuKernel<ReductionOp<MinReducer, T>, T>(r, "Min");
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_REDUCTION_WIDENED_H_
