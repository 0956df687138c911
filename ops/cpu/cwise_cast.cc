// Cast: converts between the numeric types, bool, the 16-bit floats and
// the complex types.
//
// Conversions are C++ static_casts, except: float -> int truncates toward
// zero and saturates at the integer type's range, NaN giving 0 (XLA's rule;
// a plain cast is undefined there, and TensorFlow returns whatever the CPU
// does); to bool is `x != 0`; half and bfloat16 go through float, rounding
// to nearest even, or for bfloat16 with Truncate=true dropping the low 16
// bits of the float (NaN stays NaN). Complex to real keeps the real part
// (then as above); real to complex has a zero imaginary part; complex to
// bool is `x != 0`, true if either part is nonzero.
#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>

#include <Eigen/Core>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/cwise_register.h"
#include "runtime/core/numeric_cast.h"

namespace weft {
namespace {

// The value a stored element stands for, in a type C++ can compute with.
template <typename T>
inline auto Load(const T& v) {
  if constexpr (std::is_same_v<T, Half>) {
    return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(v.bits));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(v.bits));
  } else {
    return v;
  }
}

template <typename D, bool kTruncate, typename V>
inline D Store(V v) {
  if constexpr (kIsComplex<D>) {
    if constexpr (kIsComplex<V>) {
      return D(static_cast<typename D::value_type>(v.real()),
               static_cast<typename D::value_type>(v.imag()));
    } else {
      return D(static_cast<typename D::value_type>(v));
    }
  } else if constexpr (kIsComplex<V> && !std::is_same_v<D, bool>) {
    return Store<D, kTruncate>(v.real());
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != V(0);
  } else if constexpr (std::is_same_v<D, Half>) {
    return Half{Eigen::numext::bit_cast<uint16_t>(
        Eigen::half(static_cast<float>(v)))};
  } else if constexpr (std::is_same_v<D, BFloat16>) {
    const float f = static_cast<float>(v);
    if (kTruncate && !std::isnan(f)) {
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof(bits));
      return BFloat16{static_cast<uint16_t>(bits >> 16)};
    }
    return BFloat16{Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(f))};
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<V>) {
    return SaturatingCast<D>(v);
  } else {
    return static_cast<D>(v);
  }
}

using CastFn = void (*)(const void* src, void* dst, int64_t begin,
                        int64_t end);

template <typename S, typename D, bool kTruncate>
void CastRange(const void* src, void* dst, int64_t begin, int64_t end) {
  const S* s = static_cast<const S*>(src);
  D* d = static_cast<D*>(dst);
  for (int64_t i = begin; i < end; ++i) d[i] = Store<D, kTruncate>(Load(s[i]));
}

// Every type Cast handles, as X(enum, C++ type).
#define WEFT_CAST_TYPES(X)      \
  X(DT_FLOAT, float)            \
  X(DT_DOUBLE, double)          \
  X(DT_INT32, int32_t)          \
  X(DT_INT64, int64_t)          \
  X(DT_UINT8, uint8_t)          \
  X(DT_INT8, int8_t)            \
  X(DT_INT16, int16_t)          \
  X(DT_UINT16, uint16_t)        \
  X(DT_UINT32, uint32_t)        \
  X(DT_UINT64, uint64_t)        \
  X(DT_BOOL, bool)              \
  X(DT_HALF, ::weft::Half)      \
  X(DT_BFLOAT16, ::weft::BFloat16) \
  X(DT_COMPLEX64, ::weft::Complex64) \
  X(DT_COMPLEX128, ::weft::Complex128)

template <typename S>
CastFn PickDestination(DataType dst, bool truncate) {
  switch (dst) {
#define WEFT_CAST_CASE(ENUM, TYPE)                                     \
  case tensorflow::ENUM:                                               \
    return truncate ? &CastRange<S, TYPE, true> : &CastRange<S, TYPE, false>;
    WEFT_CAST_TYPES(WEFT_CAST_CASE)
#undef WEFT_CAST_CASE
    default:
      return nullptr;
  }
}

CastFn PickCast(DataType src, DataType dst, bool truncate) {
  switch (src) {
#define WEFT_CAST_CASE(ENUM, TYPE) \
  case tensorflow::ENUM:           \
    return PickDestination<TYPE>(dst, truncate);
    WEFT_CAST_TYPES(WEFT_CAST_CASE)
#undef WEFT_CAST_CASE
    default:
      return nullptr;
  }
}

DataTypeVector CastTypes() {
  DataTypeVector types;
#define WEFT_CAST_CASE(ENUM, TYPE) types.push_back(tensorflow::ENUM);
  WEFT_CAST_TYPES(WEFT_CAST_CASE)
#undef WEFT_CAST_CASE
  return types;
}

class CastOp : public OpKernel {
 public:
  explicit CastOp(OpKernelConstruction* c) : OpKernel(c) {
    DataType src, dst;
    bool truncate = false;
    c->SetStatus(c->GetAttr("SrcT", &src));
    c->SetStatus(c->GetAttr("DstT", &dst));
    c->SetStatus(c->GetAttr("Truncate", &truncate));
    if (!c->status().ok()) return;
    identity_ = src == dst;
    fn_ = PickCast(src, dst, truncate);
    if (fn_ == nullptr && !identity_) {
      c->SetStatus(absl::UnimplementedError(
          absl::StrCat("Cast from ", DataTypeString(src), " to ",
                       DataTypeString(dst), " is not supported")));
    }
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    if (identity_) {
      c->set_output(0, x);
      return;
    }
    Tensor* y = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, x.shape(), &y));
    const void* src = x.raw_data();
    void* dst = y->raw_data();
    ParallelRange(c, x.NumElements(), 2,
                  [&](int64_t b, int64_t e) { fn_(src, dst, b, e); });
  }

 private:
  bool identity_ = false;
  CastFn fn_ = nullptr;
};

#undef WEFT_CAST_TYPES

}  // namespace

void RegisterCastKernels(KernelRegistry* r) {
  r->Register(KernelDef("Cast", kDeviceTypeCpu)
                  .TypeConstraint("SrcT", CastTypes())
                  .TypeConstraint("DstT", CastTypes()),
              MakeKernel<CastOp>);
}

}  // namespace weft
