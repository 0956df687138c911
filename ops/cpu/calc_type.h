// Kernels that compute half and bfloat16 in float: CalcType<T> is the type
// a kernel computes T in (float for the 16-bit floats, T otherwise), and
// CalcInput / CalcOutput hand it a tensor's values as that type: the
// tensor's own buffer when T is CalcType<T>, else a widened float copy (and
// an output written back, rounded to nearest even, by FinishCalcOutput).
//
//   CalcBuffer<T> x;
//   OP_REQUIRES_OK(c, CalcInput<T>(c, input, &x));      // x.data: const C*
//   CalcBuffer<T> y;
//   OP_REQUIRES_OK(c, CalcOutput<T>(c, out, &y));       // y.out: C*
//   ... compute into y.out ...
//   FinishCalcOutput<T>(y, out);
#ifndef WEFT_OPS_CPU_CALC_TYPE_H_
#define WEFT_OPS_CPU_CALC_TYPE_H_

#include <type_traits>

#include "ops/cpu/float_convert.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/types.h"

namespace weft {

template <typename T>
using CalcType = std::conditional_t<
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <typename T>
struct CalcBuffer {
  using C = CalcType<T>;
  const C* data = nullptr;  // inputs
  C* out = nullptr;         // outputs
  Tensor storage;           // the float copy, when T is 16-bit
};

template <typename T>
absl::Status CalcInput(OpKernelContext* c, const Tensor& t, CalcBuffer<T>* b) {
  using C = CalcType<T>;
  if constexpr (std::is_same_v<C, T>) {
    b->data = t.data<T>();
  } else {
    absl::Status s = c->allocate_temp(DT_FLOAT, t.shape(), &b->storage);
    if (!s.ok()) return s;
    float* f = b->storage.template data<float>();
    const T* src = t.data<T>();
    for (int64_t i = 0; i < t.NumElements(); ++i) f[i] = ToFloat(src[i]);
    b->data = f;
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status CalcOutput(OpKernelContext* c, Tensor* t, CalcBuffer<T>* b) {
  using C = CalcType<T>;
  if constexpr (std::is_same_v<C, T>) {
    b->out = t->data<T>();
  } else {
    absl::Status s = c->allocate_temp(DT_FLOAT, t->shape(), &b->storage);
    if (!s.ok()) return s;
    b->out = b->storage.template data<float>();
  }
  return absl::OkStatus();
}

template <typename T>
void FinishCalcOutput(const CalcBuffer<T>& b, Tensor* t) {
  if constexpr (!std::is_same_v<CalcType<T>, T>) {
    T* dst = t->data<T>();
    for (int64_t i = 0; i < t->NumElements(); ++i) dst[i] = FromFloat<T>(b.out[i]);
  }
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_CALC_TYPE_H_
