// TopKV2: the k largest entries of each row (the last dim), largest first,
// equal values in index order, with their indices. Each row is selected
// with std::nth_element over an index array and then only the k chosen are
// sorted (O(n + k log k) a row instead of a full sort), under the total
// order "greater value, then lower index" that TensorFlow's stable
// comparison defines, so the result is the same whichever way it is found.
// Rows are shared out over the intra-op pool. half and bfloat16 compare as
// float. sorted=false returns the sorted order too (TensorFlow leaves the
// order unspecified).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_index_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

float Key(Half h) { return HalfToFloat(h); }
float Key(BFloat16 b) { return BFloat16ToFloat(b); }
template <typename T>
T Key(T v) {
  return v;
}

// Fills idx[0, k) with the row's top-k positions in output order.
template <typename K>
void SelectRow(const K* keys, int64_t n, int64_t k, std::vector<int64_t>* idx) {
  if (k == 1) {  // a scan: the first of the largest
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i) {
      if (keys[i] > keys[best]) best = i;
    }
    (*idx)[0] = best;
    return;
  }
  idx->resize(n);
  std::iota(idx->begin(), idx->end(), int64_t{0});
  auto before = [keys](int64_t a, int64_t b) {
    if (keys[b] < keys[a]) return true;
    if (keys[a] < keys[b]) return false;
    return a < b;
  };
  if (k < n) std::nth_element(idx->begin(), idx->begin() + (k - 1), idx->end(), before);
  std::sort(idx->begin(), idx->begin() + k, before);
}

template <typename T, typename I>
void TopKRows(OpKernelContext* c, const T* in, int64_t rows, int64_t n,
              int64_t k, T* values, I* indices) {
  using K = decltype(Key(T{}));
  const int64_t cost = n * 8 + k * 16;
  ParallelRange(c, rows, cost, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(k);
    std::vector<K> converted;
    for (int64_t r = begin; r < end; ++r) {
      const T* row = in + r * n;
      const K* keys;
      if constexpr (std::is_same_v<K, T>) {
        keys = row;
      } else {
        converted.resize(n);
        for (int64_t i = 0; i < n; ++i) converted[i] = Key(row[i]);
        keys = converted.data();
      }
      SelectRow(keys, n, k, &idx);
      for (int64_t j = 0; j < k; ++j) {
        values[r * k + j] = row[idx[j]];
        indices[r * k + j] = static_cast<I>(idx[j]);
      }
    }
  });
}

class TopKOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    const Tensor& k_in = c->input(1);
    OP_REQUIRES(c, k_in.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "k must be 0-D, got shape ", k_in.shape().DebugString())));
    int64_t k = 0;
    switch (k_in.dtype()) {
      case DT_INT16: k = k_in.data<int16_t>()[0]; break;
      case DT_INT32: k = k_in.data<int32_t>()[0]; break;
      default: k = k_in.data<int64_t>()[0]; break;
    }
    OP_REQUIRES(c, k >= 0,
                absl::InvalidArgumentError(absl::StrCat("Need k >= 0, got ", k)));
    OP_REQUIRES(c, in.dims() >= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must be >= 1-D, got shape ", in.shape().DebugString())));
    const int64_t n = in.dim_size(in.dims() - 1);
    OP_REQUIRES(c, n >= k,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must have at least k columns. Had ", n, ", needed ", k)));
    const DataType index_type = c->expected_output_dtype(1);
    OP_REQUIRES(c, index_type != DT_INT16 || n <= 32768,
                absl::InvalidArgumentError(absl::StrCat(
                    "TopKV2: last dimension ", n, " does not fit index_type int16")));
    OP_REQUIRES(c, index_type != DT_INT32 || n <= (int64_t{1} << 31),
                absl::InvalidArgumentError(absl::StrCat(
                    "TopKV2: last dimension ", n, " does not fit index_type int32")));
    TensorShape shape = in.shape();
    shape.set_dim(in.dims() - 1, k);
    Tensor* values;
    Tensor* indices;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &values));
    OP_REQUIRES_OK(c, c->allocate_output(1, shape, &indices));
    if (shape.num_elements() == 0) return;
    const int64_t rows = in.NumElements() / n;
    auto run = [&](auto index_tag) {
      using I = decltype(index_tag);
      auto by_type = [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (IsRealNumber<T>()) {
          TopKRows<T, I>(c, in.data<T>(), rows, n, k, values->data<T>(),
                         indices->data<I>());
          return true;
        }
        return false;
      };
      bool ok = false;
      WEFT_SWITCH_ALL_TYPES(in.dtype(), ok = by_type(TypeTag<T>{}), ok = false);
      OP_REQUIRES(c, ok, UnsupportedDtype("TopKV2", in.dtype()));
    };
    switch (index_type) {
      case DT_INT16: run(int16_t{}); break;
      case DT_INT32: run(int32_t{}); break;
      default: run(int64_t{}); break;
    }
  }
};

}  // namespace

void RegisterTopKKernels(KernelRegistry* r) {
  r->Register(KernelDef("TopKV2", kDeviceTypeCpu).TypeConstraint("T", RealNumberTypes()),
              MakeKernel<TopKOp>);
}

}  // namespace weft
