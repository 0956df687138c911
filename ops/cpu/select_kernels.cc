// InTopKV2 (is each row's target among its k largest predictions?) and
// NthElement (each row's n-th smallest, or with `reverse` largest, value),
// with TensorFlow's rules: a target out of range, or any non-finite
// prediction in its row, gives false; NthElement selects with
// std::nth_element on a copy of the row. Rows are shared out over the
// intra-op pool; half and bfloat16 select as float.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_index_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/float_convert.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

template <typename I>
class InTopKOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& pred = c->input(0);
    const Tensor& targets = c->input(1);
    const Tensor& k_in = c->input(2);
    OP_REQUIRES(c, pred.dims() == 2,
                absl::InvalidArgumentError("predictions must be 2-dimensional"));
    OP_REQUIRES(c, targets.dims() == 1,
                absl::InvalidArgumentError("targets must be 1-dimensional"));
    OP_REQUIRES(c, pred.dim_size(0) == targets.dim_size(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "First dimension of predictions ", pred.dim_size(0),
                    " must match length of targets ", targets.dim_size(0))));
    OP_REQUIRES(c, k_in.NumElements() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "k must be 0-D, got shape ", k_in.shape().DebugString())));
    const int64_t k = k_in.data<I>()[0];
    const int64_t rows = pred.dim_size(0), classes = pred.dim_size(1);
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({rows}), &out));
    const float* p = pred.data<float>();
    const I* t = targets.data<I>();
    bool* o = out->data<bool>();
    ParallelRange(c, rows, classes + 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const float* row = p + b * classes;
        const I target = t[b];
        bool unknown = target < 0 || target >= classes || !std::isfinite(row[target]);
        int64_t more = 0;
        for (int64_t i = 0; !unknown && i < classes; ++i) {
          if (!std::isfinite(row[i])) {
            unknown = true;
          } else if (row[i] > row[target] && ++more > k) {
            break;
          }
        }
        o[b] = !unknown && more < k;
      }
    });
  }
};

class NthElementOp : public OpKernel {
 public:
  explicit NthElementOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("reverse", &reverse_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    const Tensor& n_in = c->input(1);
    OP_REQUIRES(c, n_in.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "N must be scalar but has rank ", n_in.dims())));
    const int64_t n = n_in.data<int32_t>()[0];
    OP_REQUIRES(c, n >= 0,
                absl::InvalidArgumentError(absl::StrCat("n must be non-negative but is ", n)));
    OP_REQUIRES(c, in.dims() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input must be at least rank 1 but is rank ", in.dims())));
    const int64_t last = in.dim_size(in.dims() - 1);
    OP_REQUIRES(c, last > n,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input must have last dimension > n = ", n)));
    TensorShape shape = in.shape();
    shape.RemoveDim(shape.dims() - 1);
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const int64_t rows = shape.num_elements();
    const int64_t nth = reverse_ ? last - 1 - n : n;
    bool ok = false;
    auto by_type = [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (IsRealNumber<T>()) {
        using K = decltype(ToFloat(T{}));
        using Key = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>,
                                       K, T>;
        const T* x = in.data<T>();
        T* y = out->data<T>();
        ParallelRange(c, rows, last * 4, [&](int64_t begin, int64_t end) {
          std::vector<Key> buf(last);
          for (int64_t r = begin; r < end; ++r) {
            for (int64_t i = 0; i < last; ++i) {
              if constexpr (std::is_same_v<Key, T>) {
                buf[i] = x[r * last + i];
              } else {
                buf[i] = ToFloat(x[r * last + i]);
              }
            }
            std::nth_element(buf.begin(), buf.begin() + nth, buf.end());
            if constexpr (std::is_same_v<Key, T>) {
              y[r] = buf[nth];
            } else {
              y[r] = FromFloat<T>(buf[nth]);
            }
          }
        });
        return true;
      }
      return false;
    };
    WEFT_SWITCH_ALL_TYPES(in.dtype(), ok = by_type(TypeTag<T>{}), ok = false);
    OP_REQUIRES(c, ok, UnsupportedDtype(type_string(), in.dtype()));
  }

 private:
  bool reverse_ = false;
};

}  // namespace

void RegisterSelectKernels(KernelRegistry* r) {
  r->Register(KernelDef("InTopKV2", kDeviceTypeCpu).TypeConstraint("T", DT_INT32),
              MakeKernel<InTopKOp<int32_t>>);
  r->Register(KernelDef("InTopKV2", kDeviceTypeCpu).TypeConstraint("T", DT_INT64),
              MakeKernel<InTopKOp<int64_t>>);
  r->Register(KernelDef("NthElement", kDeviceTypeCpu).TypeConstraint("T", RealNumberTypes()),
              MakeKernel<NthElementOp>);
}

}  // namespace weft
