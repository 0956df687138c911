// LowerBound and UpperBound (tf.searchsorted): for each value of row b of
// `values`, the first position in row b of `sorted_inputs` whose element
// is not less than it (LowerBound) or greater than it (UpperBound), by
// binary search (std::lower_bound / std::upper_bound, as TensorFlow). Both
// inputs are [batch, n]; rows are shared out over the intra-op pool. half
// and bfloat16 compare as float.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_index_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/float_convert.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

template <typename T>
auto Key(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return ToFloat(v);
  } else {
    return v;
  }
}

template <bool kUpper>
class SearchSortedOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& sorted = c->input(0);
    const Tensor& values = c->input(1);
    OP_REQUIRES(c, sorted.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "Shape must be rank 2 but is rank ", sorted.dims(),
                    " for `sorted_inputs` argument")));
    OP_REQUIRES(c, values.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "Shape must be rank 2 but is rank ", values.dims(),
                    " for `values` argument")));
    OP_REQUIRES(c, sorted.dim_size(0) == values.dim_size(0),
                absl::InvalidArgumentError("Leading dim_size of both tensors must match."));
    const bool int32_out = c->expected_output_dtype(0) == DT_INT32;
    OP_REQUIRES(c, !int32_out || sorted.dim_size(1) < std::numeric_limits<int32_t>::max(),
                absl::InvalidArgumentError(
                    "trailing dim_size must less than INT_MAX for int32 output type, "
                    "was " + std::to_string(sorted.dim_size(1))));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, values.shape(), &out));
    if (out->NumElements() == 0) return;
    const int64_t rows = sorted.dim_size(0), n = sorted.dim_size(1),
                  m = values.dim_size(1);
    bool ok = false;
    auto by_type = [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (IsRealNumber<T>()) {
        if (int32_out) {
          Search<T>(c, sorted.data<T>(), values.data<T>(), rows, n, m, out->data<int32_t>());
        } else {
          Search<T>(c, sorted.data<T>(), values.data<T>(), rows, n, m, out->data<int64_t>());
        }
        return true;
      }
      return false;
    };
    WEFT_SWITCH_ALL_TYPES(sorted.dtype(), ok = by_type(TypeTag<T>{}), ok = false);
    OP_REQUIRES(c, ok, UnsupportedDtype(type_string(), sorted.dtype()));
  }

 private:
  template <typename T, typename O>
  static void Search(OpKernelContext* c, const T* sorted, const T* values, int64_t rows,
                     int64_t n, int64_t m, O* out) {
    using K = decltype(Key(T{}));
    ParallelRange(c, rows * m, 8 * (1 + n / 64), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T* row = sorted + (i / m) * n;
        const K v = Key(values[i]);
        const T* found;
        if constexpr (kUpper) {
          found = std::upper_bound(row, row + n, v,
                                   [](const K& a, const T& b) { return a < Key(b); });
        } else {
          found = std::lower_bound(row, row + n, v,
                                   [](const T& a, const K& b) { return Key(a) < b; });
        }
        out[i] = static_cast<O>(found - row);
      }
    });
  }
};

}  // namespace

void RegisterSearchSortedKernels(KernelRegistry* r) {
  r->Register(KernelDef("LowerBound", kDeviceTypeCpu).TypeConstraint("T", RealNumberTypes()),
              MakeKernel<SearchSortedOp<false>>);
  r->Register(KernelDef("UpperBound", kDeviceTypeCpu).TypeConstraint("T", RealNumberTypes()),
              MakeKernel<SearchSortedOp<true>>);
}

}  // namespace weft
