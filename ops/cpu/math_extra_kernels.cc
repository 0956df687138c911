// ClipByValue, DivNoNan and ReciprocalGrad; RegisterMathExtraKernels also
// registers the other math_extra families (math_extra_register.h).
#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/math_extra_register.h"
#include "ops/registration.h"

namespace weft {
namespace {

// x / y, but 0 where y == 0 (even for x == 0 or inf).
struct DivNoNan : BinaryFunctorBase {
  static constexpr int kCost = 5;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    using T = typename X::Scalar;
    return (y == T(0)).select(T(0), x / y);
  }
};

// -dy * y^2, y = 1/x; 0 where dy is 0 (even for y inf or NaN), as
// TensorFlow's.
struct ReciprocalGrad : BinaryFunctorBase {
  static constexpr int kCost = 3;
  template <typename Y, typename D>
  static auto Apply(const Y& y, const D& dy) {
    using T = typename Y::Scalar;
    return (dy == T(0)).select(T(0), -dy * y * y);
  }
};

// ClipByValue(t, lo, hi): min(max(t, lo), hi). lo and hi are each a scalar
// or a tensor of t's shape (TensorFlow allows no other broadcasting).
template <typename T>
class ClipByValueOp : public OpKernel {
 public:
  explicit ClipByValueOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& t = c->input(0);
    const Tensor& lo = c->input(1);
    const Tensor& hi = c->input(2);
    for (const Tensor* bound : {&lo, &hi}) {
      OP_REQUIRES(c, bound->dims() == 0 || bound->shape() == t.shape(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "clip_value_min and clip_value_max must be scalars or "
                      "have the shape of t ", t.shape().DebugString(),
                      "; got ", lo.shape().DebugString(), " and ",
                      hi.shape().DebugString())));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, ForwardOrAllocateOutput(c, {0}, t.shape(), &out));
    const T* x = t.data<T>();
    const T* lp = lo.data<T>();
    const T* hp = hi.data<T>();
    const bool lo_vec = lo.dims() != 0, hi_vec = hi.dims() != 0;
    T* o = out->data<T>();
    ParallelRange(c, t.NumElements(), 3, [&](int64_t b, int64_t e) {
      const int64_t n = e - b;
      ArrayMap<T> res(o + b, n);
      res = ConstArrayMap<T>(x + b, n);
      if (lo_vec) {
        res = res.max(ConstArrayMap<T>(lp + b, n));
      } else {
        res = res.max(lp[0]);
      }
      if (hi_vec) {
        res = res.min(ConstArrayMap<T>(hp + b, n));
      } else {
        res = res.min(hp[0]);
      }
    });
  }
};

template <typename T>
void RegisterFloat(KernelRegistry* r) {
  RegisterBinary<DivNoNan, T>(r, "DivNoNan");
  RegisterCpuKernel<SameSizeBinaryOp<ReciprocalGrad, T>, T>(r, "ReciprocalGrad");
}

}  // namespace

void RegisterMathExtraKernels(KernelRegistry* r) {
  RegisterFloat<float>(r);
  RegisterFloat<double>(r);
  // Complex DivNoNan is the same; its ReciprocalGrad conjugates
  // (cwise_kernels_complex.cc).
  RegisterBinary<DivNoNan, Complex64>(r, "DivNoNan");
  RegisterBinary<DivNoNan, Complex128>(r, "DivNoNan");
  RegisterCpuKernel<ClipByValueOp<float>, float>(r, "ClipByValue");
  RegisterCpuKernel<ClipByValueOp<double>, double>(r, "ClipByValue");
  RegisterCpuKernel<ClipByValueOp<int32_t>, int32_t>(r, "ClipByValue");
  RegisterCpuKernel<ClipByValueOp<int64_t>, int64_t>(r, "ClipByValue");
  RegisterCpuKernel<ClipByValueOp<int8_t>, int8_t>(r, "ClipByValue");
  RegisterCpuKernel<ClipByValueOp<int16_t>, int16_t>(r, "ClipByValue");
  RegisterCpuKernel<ClipByValueOp<uint8_t>, uint8_t>(r, "ClipByValue");
  RegisterCpuKernel<ClipByValueOp<uint16_t>, uint16_t>(r, "ClipByValue");
  RegisterBatchMatMulKernels(r);
  RegisterScanKernels(r);
  RegisterSegmentKernels(r);
}

}  // namespace weft
