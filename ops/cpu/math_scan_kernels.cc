// Cumsum and Cumprod (every real and complex type) along one axis,
// optionally exclusive (each output excludes its own element) and/or
// reversed (scanning from the end).
//
// The tensor is viewed as [outer, len, inner]: the scan walks len, and each
// step updates a whole contiguous row of `inner` elements at once, so the
// work is vectorised along inner and sharded over outer.
#include <algorithm>
#include <functional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/float_convert.h"
#include "ops/cpu/math_extra_register.h"
#include "ops/cpu/wrapping.h"

namespace weft {
namespace {

struct SumScan {
  static constexpr int kIdentity = 0;
  template <typename A, typename B>
  static void Step(A& acc, const B& x) { acc = WrapAdd(acc, x); }
  static float Apply(float acc, float x) { return acc + x; }
};

struct ProdScan {
  static constexpr int kIdentity = 1;
  template <typename A, typename B>
  static void Step(A& acc, const B& x) { acc = WrapMul(acc, x); }
  static float Apply(float acc, float x) { return acc * x; }
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
    const int64_t rank = x.dims();
    OP_REQUIRES(c, axis_value >= -rank && axis_value < rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "ScanOp: Expected scan axis in the range [", -rank, ", ", rank,
                    "), but got ", axis_value, " (x has shape ", x.shape().DebugString(),
                    ")")));
    const int axis = static_cast<int>(axis_value < 0 ? axis_value + rank : axis_value);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, x.shape(), &out));
    if (x.NumElements() == 0) return;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x.dim_size(d);
    for (int d = axis + 1; d < x.dims(); ++d) inner *= x.dim_size(d);
    const int64_t len = x.dim_size(axis);
    const T* in = x.data<T>();
    T* o = out->data<T>();
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      // As TensorFlow's scan in half or bfloat16: each step's sum (or
      // product) computed in float and rounded to T.
      ParallelRange(c, outer, len * inner * 2, [&](int64_t b, int64_t e) {
        std::vector<float> acc(inner);
        for (int64_t r = b; r < e; ++r) {
          std::fill(acc.begin(), acc.end(), static_cast<float>(Scan::kIdentity));
          for (int64_t step = 0; step < len; ++step) {
            const int64_t l = reverse_ ? len - 1 - step : step;
            const int64_t at = (r * len + l) * inner;
            for (int64_t i = 0; i < inner; ++i) {
              const float v = ToFloat(in[at + i]);
              const float next = ToFloat(FromFloat<T>(Scan::Apply(acc[i], v)));
              o[at + i] = FromFloat<T>(exclusive_ ? acc[i] : next);
              acc[i] = next;
            }
          }
        }
      });
    } else {
      ScanRows(c, outer, len, inner, in, o);
    }
  }

 private:
  // The scan for types Eigen computes in: whole rows of `inner` at a time.
  void ScanRows(OpKernelContext* c, int64_t outer, int64_t len, int64_t inner,
                const T* in, T* o) const {
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

// TensorFlow's CPU types for the scans but complex64 and complex128, which
// Weft has no dtype for.
void RegisterScanKernels(KernelRegistry* r) {
  Register<float>(r);
  Register<double>(r);
  Register<Half>(r);
  Register<BFloat16>(r);
  Register<int32_t>(r);
  Register<int64_t>(r);
  Register<int8_t>(r);
  Register<int16_t>(r);
  Register<uint8_t>(r);
  Register<uint16_t>(r);
  Register<uint32_t>(r);
  Register<uint64_t>(r);
  Register<Complex64>(r);
  Register<Complex128>(r);
}

}  // namespace weft
