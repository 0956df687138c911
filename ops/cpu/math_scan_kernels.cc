// Cumsum and Cumprod along one axis, optionally exclusive (each output
// excludes its own element) and/or reversed (scanning from the end).
//
// The tensor is viewed as [outer, len, inner]: the scan walks len, and each
// step updates a whole contiguous row of `inner` elements at once, so the
// work is vectorised along inner and sharded over outer.
#include <functional>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/math_extra_register.h"
#include "ops/cpu/wrapping.h"

namespace weft {
namespace {

struct SumScan {
  static constexpr int kIdentity = 0;
  template <typename A, typename B>
  static void Step(A& acc, const B& x) { acc = WrapAdd(acc, x); }
};

struct ProdScan {
  static constexpr int kIdentity = 1;
  template <typename A, typename B>
  static void Step(A& acc, const B& x) { acc = WrapMul(acc, x); }
};

template <typename Scan, typename T>
class ScanOp : public OpKernel {
 public:
  explicit ScanOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("exclusive", &exclusive_));
    c->SetStatus(c->GetAttr("reverse", &reverse_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    int64_t axis_value = 0;
    OP_REQUIRES(c, c->input(1).dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "axis must be a scalar, got shape ",
                    c->input(1).shape().DebugString())));
    OP_REQUIRES_OK(c, ReadIntScalar(c->input(1), "axis", &axis_value));
    int axis = 0;
    OP_REQUIRES_OK(c, CanonicalAxis(axis_value, x.dims(), "axis", &axis));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, x.shape(), &out));
    if (x.NumElements() == 0) return;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x.dim_size(d);
    for (int d = axis + 1; d < x.dims(); ++d) inner *= x.dim_size(d);
    const int64_t len = x.dim_size(axis);
    const T* in = x.data<T>();
    T* o = out->data<T>();
    ParallelRange(c, outer, len * inner * 2, [&](int64_t b, int64_t e) {
      EigenArray<T> acc(inner);
      for (int64_t r = b; r < e; ++r) {
        acc.setConstant(T(Scan::kIdentity));
        for (int64_t step = 0; step < len; ++step) {
          const int64_t l = reverse_ ? len - 1 - step : step;
          const int64_t at = (r * len + l) * inner;
          ConstArrayMap<T> row(in + at, inner);
          if (exclusive_) {
            ArrayMap<T>(o + at, inner) = acc;
            Scan::Step(acc, row);
          } else {
            Scan::Step(acc, row);
            ArrayMap<T>(o + at, inner) = acc;
          }
        }
      }
    });
  }

 private:
  bool exclusive_ = false;
  bool reverse_ = false;
};

template <typename T>
void Register(KernelRegistry* r) {
  auto def = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu)
        .TypeConstraint("T", DataTypeToEnum<T>::value);
  };
  r->Register(def("Cumsum"), MakeKernel<ScanOp<SumScan, T>>);
  r->Register(def("Cumprod"), MakeKernel<ScanOp<ProdScan, T>>);
}

}  // namespace

void RegisterScanKernels(KernelRegistry* r) {
  Register<float>(r);
  Register<double>(r);
  Register<int32_t>(r);
  Register<int64_t>(r);
}

}  // namespace weft
