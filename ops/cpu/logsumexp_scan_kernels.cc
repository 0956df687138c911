// CumulativeLogsumexp: log(cumsum(exp(x))) along one axis, optionally
// exclusive and/or reversed, without overflow: each step is TensorFlow's
// pairwise log-sum-exp, acc' = max + log1p(exp(min - max)) (acc' = max
// when max is -inf), from acc = -inf. half and bfloat16 round to their
// type after each operation, as Eigen's 16-bit arithmetic does. The tensor
// is viewed as [outer, len, inner] and outer rows are shared out over the
// intra-op pool.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/float_convert.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

// C: the type arithmetic is done in (float for the 16-bit types); each
// result is rounded through T.
template <typename T, typename C>
C Round(C v) {
  if constexpr (std::is_same_v<T, C>) {
    return v;
  } else {
    return ToFloat(FromFloat<T>(v));
  }
}

template <typename T, typename C>
C LogSumExpStep(C acc, C x) {
  const C mi = x < acc ? x : acc;
  const C ma = acc < x ? x : acc;
  if (ma < std::numeric_limits<C>::lowest()) return ma;
  const C e = Round<T, C>(std::exp(Round<T, C>(mi - ma)));
  return Round<T, C>(Round<T, C>(std::log1p(e)) + ma);
}

template <typename T>
class CumulativeLogsumexpOp : public OpKernel {
 public:
  explicit CumulativeLogsumexpOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("exclusive", &exclusive_));
    if (c->status().ok()) c->SetStatus(c->GetAttr("reverse", &reverse_));
  }

  void Compute(OpKernelContext* c) override {
    using C = decltype(ToFloat(T{}));
    using Calc = std::conditional_t<std::is_same_v<T, double>, double, C>;
    const Tensor& x = c->input(0);
    OP_REQUIRES(c, c->input(1).dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "ScanOp: axis must be a scalar, not ",
                    c->input(1).shape().DebugString())));
    int64_t axis_value = 0;
    OP_REQUIRES_OK(c, ReadIntScalar(c->input(1), "axis", &axis_value));
    int axis = 0;
    OP_REQUIRES_OK(c, CanonicalAxis(axis_value, x.dims(), "axis", &axis));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, x.shape(), &out));
    if (x.NumElements() == 0) return;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x.dim_size(d);
    for (int d = axis + 1; d < x.dims(); ++d) inner *= x.dim_size(d);
    const int64_t len = x.dim_size(axis);
    const T* in = x.data<T>();
    T* o = out->data<T>();
    auto load = [](T v) -> Calc {
      if constexpr (std::is_same_v<T, Calc>) {
        return v;
      } else {
        return ToFloat(v);
      }
    };
    auto store = [](Calc v) -> T {
      if constexpr (std::is_same_v<T, Calc>) {
        return v;
      } else {
        return FromFloat<T>(v);
      }
    };
    ParallelRange(c, outer, len * inner * 40, [&](int64_t begin, int64_t end) {
      std::vector<Calc> acc(inner);
      for (int64_t r = begin; r < end; ++r) {
        std::fill(acc.begin(), acc.end(), -std::numeric_limits<Calc>::infinity());
        for (int64_t step = 0; step < len; ++step) {
          const int64_t l = reverse_ ? len - 1 - step : step;
          const int64_t at = (r * len + l) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            const Calc v = load(in[at + i]);
            if (exclusive_) {
              o[at + i] = store(acc[i]);
              acc[i] = LogSumExpStep<T, Calc>(acc[i], v);
            } else {
              acc[i] = LogSumExpStep<T, Calc>(acc[i], v);
              o[at + i] = store(acc[i]);
            }
          }
        }
      }
    });
  }

 private:
  bool exclusive_ = false;
  bool reverse_ = false;
};

}  // namespace

void RegisterLogsumexpScanKernels(KernelRegistry* r) {
  auto def = [](DataType t) {
    return KernelDef("CumulativeLogsumexp", kDeviceTypeCpu).TypeConstraint("T", t);
  };
  r->Register(def(DT_FLOAT), MakeKernel<CumulativeLogsumexpOp<float>>);
  r->Register(def(DT_DOUBLE), MakeKernel<CumulativeLogsumexpOp<double>>);
  r->Register(def(DT_HALF), MakeKernel<CumulativeLogsumexpOp<Half>>);
  r->Register(def(DT_BFLOAT16), MakeKernel<CumulativeLogsumexpOp<BFloat16>>);
}

}  // namespace weft
