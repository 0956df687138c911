// Binary arithmetic on half (float16): Add, AddV2, Sub, Mul, RealDiv, Div,
// Maximum and Minimum, and the comparisons (Greater, GreaterEqual, Less,
// LessEqual, Equal, NotEqual), with NumPy broadcasting. Each element is computed in
// float and rounded to half once, which is what TensorFlow's Eigen::half
// arithmetic does (float's 24 bits hold every correctly rounded half sum,
// difference, product and quotient, so the one rounding gives its bits).
// Element by element, not vectorised: what mixed-precision graphs need to
// run, not yet their speed.
#include <algorithm>
#include <array>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_register.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/types.h"

namespace weft {
namespace {

template <typename Fn>
class HalfBinaryOp : public OpKernel {
 public:
  explicit HalfBinaryOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Half* a = c->input(0).data<Half>();
    const Half* b = c->input(1).data<Half>();
    const Fn fn;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, BroadcastBinary(c, &out, [&](int64_t i, const std::array<int64_t, 2>& off) {
      out->data<Half>()[i] = FloatToHalf(fn(HalfToFloat(a[off[0]]), HalfToFloat(b[off[1]])));
    }));
  }
};

struct AddFn {
  float operator()(float a, float b) const { return a + b; }
};
struct SubFn {
  float operator()(float a, float b) const { return a - b; }
};
struct MulFn {
  float operator()(float a, float b) const { return a * b; }
};
struct DivFn {
  float operator()(float a, float b) const { return a / b; }
};
// NaN propagates, as TensorFlow's Maximum and Minimum do on CPU.
struct MaxFn {
  float operator()(float a, float b) const {
    return a != a || b != b ? a + b : std::max(a, b);
  }
};
struct MinFn {
  float operator()(float a, float b) const {
    return a != a || b != b ? a + b : std::min(a, b);
  }
};

// A comparison, its bool element computed on the floats (exact: every half
// is a float). Equal and NotEqual with incompatible_shape_error false give
// a scalar false / true for shapes that do not broadcast, as TensorFlow's.
template <typename Fn>
class HalfCompareOp : public OpKernel {
 public:
  explicit HalfCompareOp(OpKernelConstruction* c) : OpKernel(c) {
    if (c->def().attr().contains("incompatible_shape_error")) {
      c->SetStatus(c->GetAttr("incompatible_shape_error", &shape_error_));
    }
  }
  void Compute(OpKernelContext* c) override {
    const Half* a = c->input(0).data<Half>();
    const Half* b = c->input(1).data<Half>();
    const Fn fn;
    Tensor* out = nullptr;
    absl::Status s = BroadcastBinary(c, &out, [&](int64_t i, const std::array<int64_t, 2>& off) {
      out->data<bool>()[i] = fn(HalfToFloat(a[off[0]]), HalfToFloat(b[off[1]]));
    });
    if (!s.ok() && !shape_error_ && absl::IsInvalidArgument(s)) {
      c->set_output(0, Tensor::Scalar<bool>(type_string() == "NotEqual"));
      return;
    }
    OP_REQUIRES_OK(c, s);
  }

 private:
  bool shape_error_ = true;
};

struct GreaterFn {
  bool operator()(float a, float b) const { return a > b; }
};
struct GreaterEqualFn {
  bool operator()(float a, float b) const { return a >= b; }
};
struct LessFn {
  bool operator()(float a, float b) const { return a < b; }
};
struct LessEqualFn {
  bool operator()(float a, float b) const { return a <= b; }
};
struct EqualFn {
  bool operator()(float a, float b) const { return a == b; }
};
struct NotEqualFn {
  bool operator()(float a, float b) const { return a != b; }
};

template <typename Fn, template <typename> class Kernel = HalfBinaryOp>
void Register(KernelRegistry* r, const char* op) {
  r->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_HALF),
              MakeKernel<Kernel<Fn>>);
}

}  // namespace

void RegisterCwiseHalfKernels(KernelRegistry* r) {
  Register<AddFn>(r, "Add");
  Register<AddFn>(r, "AddV2");
  Register<SubFn>(r, "Sub");
  Register<MulFn>(r, "Mul");
  Register<DivFn>(r, "RealDiv");
  Register<DivFn>(r, "Div");
  Register<MaxFn>(r, "Maximum");
  Register<MinFn>(r, "Minimum");
  Register<GreaterFn, HalfCompareOp>(r, "Greater");
  Register<GreaterEqualFn, HalfCompareOp>(r, "GreaterEqual");
  Register<LessFn, HalfCompareOp>(r, "Less");
  Register<LessEqualFn, HalfCompareOp>(r, "LessEqual");
  Register<EqualFn, HalfCompareOp>(r, "Equal");
  Register<NotEqualFn, HalfCompareOp>(r, "NotEqual");
}

}  // namespace weft
