// RaggedBincount: per row of a ragged tensor (splits + values), how often
// each value in [0, size) occurs (or the sum of its weights, or 1 when
// binary_output). Values >= size are dropped and negative ones refused, as
// TensorFlow does. The splits are checked before any value is read: they
// must start at 0, never decrease and end at the number of values (TensorFlow
// checks only the ends); weights must be shaped as values or be empty.
#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

template <typename T, typename I>
class RaggedBincountOp : public OpKernel {
 public:
  explicit RaggedBincountOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("binary_output", &binary_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& splits = c->input(0);
    const Tensor& values = c->input(1);
    const Tensor& size_in = c->input(2);
    const Tensor& weights = c->input(3);
    OP_REQUIRES(c, size_in.dims() == 0,
                absl::InvalidArgumentError(
                    absl::StrCat("size must be a scalar, got shape ", size_in.shape().DebugString())));
    const int64_t size = size_in.data<I>()[0];
    OP_REQUIRES(c, size >= 0, absl::InvalidArgumentError(
                                  absl::StrCat("size (", size, ") must be non-negative")));
    OP_REQUIRES(c, splits.dims() == 1 && splits.NumElements() > 0,
                absl::InvalidArgumentError("Splits must be non-empty"));
    OP_REQUIRES(c, values.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat("values must be a vector, got shape ",
                                                        values.shape().DebugString())));
    const int64_t n = values.NumElements();
    const int64_t* s = splits.data<int64_t>();
    const int64_t rows = splits.NumElements() - 1;
    OP_REQUIRES(c, s[0] == 0, absl::InvalidArgumentError(absl::StrCat(
                                  "Splits must start with 0, not with ", s[0])));
    OP_REQUIRES(c, s[rows] == n,
                absl::InvalidArgumentError(absl::StrCat(
                    "Splits must end with the number of values, got ", s[rows],
                    " instead of ", n)));
    for (int64_t r = 0; r < rows; ++r) {
      OP_REQUIRES(c, s[r + 1] >= s[r],
                  absl::InvalidArgumentError(absl::StrCat(
                      "Splits must not decrease, got ", s[r], " then ", s[r + 1],
                      " at index ", r + 1)));
    }
    const T* w = nullptr;
    if (weights.NumElements() > 0) {
      OP_REQUIRES(c, weights.shape() == values.shape(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "weights must be the same shape as values or a length-0 tensor, got ",
                      weights.shape().DebugString(), " for values ",
                      values.shape().DebugString())));
      w = weights.data<T>();
    }
    const I* v = values.data<I>();
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(c, v[i] >= 0, absl::InvalidArgumentError("Input must be non-negative"));
    }
    absl::StatusOr<TensorShape> shape = TensorShape::Build({rows, size});
    OP_REQUIRES_OK(c, shape.status());
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, *shape, &out));
    T* o = out->data<T>();
    std::fill(o, o + out->NumElements(), T(0));
    for (int64_t r = 0; r < rows; ++r) {
      T* row = o + r * size;
      for (int64_t i = s[r]; i < s[r + 1]; ++i) {
        if (static_cast<int64_t>(v[i]) >= size) continue;
        if (binary_) {
          row[v[i]] = T(1);
        } else {
          row[v[i]] += w != nullptr ? w[i] : T(1);
        }
      }
    }
  }

 private:
  bool binary_ = false;
};

template <typename T>
void RegisterFor(KernelRegistry* r) {
  auto def = [](DataType idx) {
    return KernelDef("RaggedBincount", kDeviceTypeCpu)
        .TypeConstraint("T", DataTypeToEnum<T>::value)
        .TypeConstraint("Tidx", idx);
  };
  r->Register(def(DT_INT32), MakeKernel<RaggedBincountOp<T, int32_t>>);
  r->Register(def(DT_INT64), MakeKernel<RaggedBincountOp<T, int64_t>>);
}

}  // namespace

void RegisterRaggedBincountKernels(KernelRegistry* r) {
  RegisterFor<int32_t>(r);
  RegisterFor<int64_t>(r);
  RegisterFor<float>(r);
  RegisterFor<double>(r);
}

}  // namespace weft
