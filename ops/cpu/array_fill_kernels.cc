// Kernels that create values: Fill, ZerosLike, OnesLike, Range, OneHot.
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

class FillOp : public OpKernel {
 public:
  explicit FillOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(c, ReadIntVector(c->input(0), "Fill's dims", &dims));
    const Tensor& value = c->input(1);
    OP_REQUIRES(c, value.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Fill's value must be a scalar, but has shape ",
                    value.shape().DebugString())));
    TensorShape shape;
    OP_REQUIRES_OK(c, ShapeFromDims(dims, "Fill's dims", &shape));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    VisitStorage(value.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::fill_n(out->data<T>(), out->NumElements(), value.scalar<T>());
    });
  }
};

template <typename T>
T One() {
  if constexpr (std::is_same_v<T, Half>) {
    return FloatToHalf(1.0f);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return FloatToBFloat16(1.0f);
  } else {
    return static_cast<T>(1);
  }
}

// ZerosLike (one = false) and OnesLike (one = true).
template <bool kOne>
class FillLikeOp : public OpKernel {
 public:
  explicit FillLikeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    Tensor* y;
    OP_REQUIRES_OK(c, c->forward_input_or_allocate_output(0, 0, x.shape(), &y));
    bool ok = true;
    WEFT_SWITCH_ALL_TYPES(
        x.dtype(),
        if constexpr (std::is_same_v<T, ResourceHandle>) {
          ok = false;
        } else if constexpr (kOne) {
          if constexpr (std::is_same_v<T, std::string>) {
            ok = false;
          } else {
            std::fill_n(y->data<T>(), y->NumElements(), One<T>());
          }
        } else {
          std::fill_n(y->data<T>(), y->NumElements(), T{});
        },
        ok = false);
    OP_REQUIRES(c, ok, UnsupportedDtype(type_string(), x.dtype()));
  }
};

// Integers print as numbers (not chars) in messages.
template <typename T>
auto Printable(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v;
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<int64_t>(v);
  } else {
    return static_cast<uint64_t>(v);
  }
}

template <typename T>
class RangeOp : public OpKernel {
 public:
  explicit RangeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const char* names[3] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; ++i) {
      OP_REQUIRES(c, c->input(i).NumElements() == 1 && c->input(i).dims() <= 1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Range's ", names[i], " must be a scalar, not shape ",
                      c->input(i).shape().DebugString())));
    }
    const T start = c->input(0).data<T>()[0];
    const T limit = c->input(1).data<T>()[0];
    const T delta = c->input(2).data<T>()[0];
    if constexpr (!std::is_integral_v<T>) {
      // NaN compares false with everything: say so, rather than claim a
      // failed order check.
      const T values[3] = {start, limit, delta};
      for (int i = 0; i < 3; ++i) {
        OP_REQUIRES(c, !std::isnan(values[i]),
                    absl::InvalidArgumentError(absl::StrCat(
                        "Range's ", names[i], " is NaN")));
      }
    }
    OP_REQUIRES(c, delta != T(0),
                absl::InvalidArgumentError("Range requires delta != 0"));
    if (delta > T(0)) {
      OP_REQUIRES(c, start <= limit,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Range requires start <= limit when delta > 0: ",
                      Printable(start), "/", Printable(limit))));
    } else {
      OP_REQUIRES(c, start >= limit,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Range requires start >= limit when delta < 0: ",
                      Printable(start), "/", Printable(limit))));
    }
    // The length: for integers in long double, so that limit - start cannot
    // overflow; for floats in T, as TensorFlow does, so that it matches to
    // the last ulp. Either may exceed any tensor (int64 min to max, or an
    // infinite float span), which is refused before the cast to int64.
    long double n;
    if constexpr (std::is_integral_v<T>) {
      const long double span = std::fabs(static_cast<long double>(limit) - start);
      n = std::ceil(span / std::fabs(static_cast<long double>(delta)));
    } else {
      n = std::ceil(std::fabs((limit - start) / delta));
    }
    OP_REQUIRES(c, n <= static_cast<long double>(INT64_MAX / 2),
                absl::InvalidArgumentError(absl::StrCat(
                    "Range would produce too many elements (",
                    static_cast<double>(n), ")")));
    const int64_t size = static_cast<int64_t>(n);
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({size}), &out));
    T* data = out->data<T>();
    if constexpr (std::is_integral_v<T>) {
      T value = start;
      for (int64_t i = 0; i < size; ++i) {
        data[i] = value;
        if (i + 1 < size) value += delta;
      }
    } else {
      // start + i * delta, rounded twice (no fused multiply-add), as
      // TensorFlow computes it: the values match to the last bit.
      for (int64_t i = 0; i < size; ++i) {
        volatile T step = static_cast<T>(i) * delta;
        data[i] = start + step;
      }
    }
  }
};

class OneHotOp : public OpKernel {
 public:
  explicit OneHotOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("axis", &axis_));
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& indices = c->input(0);
    const Tensor& on = c->input(2);
    const Tensor& off = c->input(3);
    int64_t depth;
    OP_REQUIRES_OK(c, ReadIntScalar(c->input(1), "OneHot's depth", &depth));
    OP_REQUIRES(c, depth >= 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "OneHot's depth must be non-negative, got ", depth)));
    OP_REQUIRES(c, on.dims() == 0 && off.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "OneHot's on_value and off_value must be scalars, got shapes ",
                    on.shape().DebugString(), " and ", off.shape().DebugString())));
    const int rank = indices.dims();
    OP_REQUIRES(c, axis_ >= -1 && axis_ <= rank,
                absl::InvalidArgumentError(absl::StrCat(
                    "OneHot's axis ", axis_, " must be -1 or in [0, ", rank,
                    "] for indices of shape ", indices.shape().DebugString())));
    const int axis = axis_ == -1 ? rank : static_cast<int>(axis_);
    TensorShape shape = indices.shape();
    shape.InsertDim(axis, depth);
    absl::StatusOr<TensorShape> checked = TensorShape::Build(shape.dim_sizes());
    OP_REQUIRES(c, checked.ok(),
                absl::InvalidArgumentError(absl::StrCat(
                    "OneHot output is too large: ", checked.status().message())));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    std::vector<int64_t> idx;
    OP_REQUIRES_OK(c, ReadIntVector(indices.Reshaped(TensorShape({indices.NumElements()})),
                                    "OneHot's indices", &idx));
    int64_t prefix = 1, suffix = 1;
    for (int i = 0; i < rank; ++i) {
      (i < axis ? prefix : suffix) *= indices.dim_size(i);
    }
    VisitStorage(on.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* o = out->data<T>();
      const T on_v = on.scalar<T>();
      const T off_v = off.scalar<T>();
      std::fill_n(o, out->NumElements(), off_v);
      for (int64_t p = 0; p < prefix; ++p) {
        for (int64_t s = 0; s < suffix; ++s) {
          const int64_t k = idx[p * suffix + s];
          if (k >= 0 && k < depth) o[(p * depth + k) * suffix + s] = on_v;
        }
      }
    });
  }

 private:
  int64_t axis_ = -1;
};

}  // namespace

void RegisterArrayFillKernels(KernelRegistry* r) {
  r->Register(KernelDef("Fill", kDeviceTypeCpu).TypeConstraint("T", PodAndStringTypes()),
              MakeKernel<FillOp>);
  r->Register(
      KernelDef("ZerosLike", kDeviceTypeCpu).TypeConstraint("T", PodAndStringTypes()),
      MakeKernel<FillLikeOp<false>>);
  r->Register(KernelDef("OnesLike", kDeviceTypeCpu).TypeConstraint("T", PodTypes()),
              MakeKernel<FillLikeOp<true>>);
#define WEFT_REGISTER_RANGE(TYPE)                                  \
  r->Register(KernelDef("Range", kDeviceTypeCpu)                   \
                  .TypeConstraint("Tidx", DataTypeToEnum<TYPE>::value), \
              MakeKernel<RangeOp<TYPE>>);
  WEFT_REGISTER_RANGE(float)
  WEFT_REGISTER_RANGE(double)
  WEFT_REGISTER_RANGE(int32_t)
  WEFT_REGISTER_RANGE(int64_t)
  WEFT_REGISTER_RANGE(int8_t)
  WEFT_REGISTER_RANGE(int16_t)
  WEFT_REGISTER_RANGE(uint16_t)
  WEFT_REGISTER_RANGE(uint32_t)
  WEFT_REGISTER_RANGE(uint64_t)
#undef WEFT_REGISTER_RANGE
  r->Register(KernelDef("OneHot", kDeviceTypeCpu).TypeConstraint("T", PodAndStringTypes()),
              MakeKernel<OneHotOp>);
}

}  // namespace weft
