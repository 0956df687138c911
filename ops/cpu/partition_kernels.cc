// DynamicPartition: the slices of `data` (indexed by the leading dims that
// `partitions` covers) sent to output partitions[i], keeping their order;
// UniqueV2: the distinct slices of x along `axis` (every element when x is
// a vector and axis empty), in order of first appearance, with each
// slice's index among them (UniqueWithCountsV2: and how often each occurs). Slices compare element by element with the
// type's == (0.0 equals -0.0, a NaN equals nothing), as TensorFlow's hash
// map does. Elements move through their storage type (VisitStorage).
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/float_convert.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"

namespace weft {
namespace {

class DynamicPartitionOp : public OpKernel {
 public:
  explicit DynamicPartitionOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("num_partitions", &num_partitions_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& data = c->input(0);
    const Tensor& parts = c->input(1);
    bool prefix = data.dims() >= parts.dims();
    for (int d = 0; prefix && d < parts.dims(); ++d) prefix = data.dim_size(d) == parts.dim_size(d);
    OP_REQUIRES(c, prefix,
                absl::InvalidArgumentError(absl::StrCat(
                    "data.shape must start with partitions.shape, got data.shape = ",
                    data.shape().DebugString(),
                    ", partitions.shape = ", parts.shape().DebugString())));
    const int64_t n = parts.NumElements();
    const int32_t* p = parts.data<int32_t>();
    std::vector<int64_t> counts(num_partitions_, 0);
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES(c, p[i] >= 0 && p[i] < num_partitions_,
                  absl::InvalidArgumentError(absl::StrCat(
                      "partitions", parts.dims() == 1 ? absl::StrCat("[", i, "]") : "",
                      " = ", p[i], " is not in [0, ", num_partitions_, ")")));
      ++counts[p[i]];
    }
    TensorShape slice;
    for (int d = parts.dims(); d < data.dims(); ++d) slice.AddDim(data.dim_size(d));
    const int64_t width = slice.num_elements();
    std::vector<Tensor*> outs(num_partitions_);
    for (int64_t k = 0; k < num_partitions_; ++k) {
      TensorShape shape = slice;
      shape.InsertDim(0, counts[k]);
      OP_REQUIRES_OK(c, c->allocate_output(k, shape, &outs[k]));
    }
    if (width == 0) return;
    std::vector<int64_t> filled(num_partitions_, 0);
    for (int64_t i = 0; i < n; ++i) {
      CopyElements(data, i * width, *outs[p[i]], filled[p[i]]++ * width, width);
    }
  }

 private:
  int64_t num_partitions_ = 1;
};

// Hashing and comparing slices of `width` elements of T.
template <typename T>
struct SliceKey {
  using K = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>,
                               float, T>;
  const T* data;
  int64_t width;
  static K Of(const T& v) {
    if constexpr (std::is_same_v<K, T>) {
      return v;
    } else {
      return ToFloat(v);
    }
  }
};

template <typename T>
struct SliceHash {
  size_t operator()(const SliceKey<T>& s) const {
    size_t h = 0;
    for (int64_t i = 0; i < s.width; ++i) {
      h = h * 1000003u ^ std::hash<typename SliceKey<T>::K>()(SliceKey<T>::Of(s.data[i]));
    }
    return h;
  }
};

template <typename T>
struct SliceEq {
  bool operator()(const SliceKey<T>& a, const SliceKey<T>& b) const {
    for (int64_t i = 0; i < a.width; ++i) {
      if (!(SliceKey<T>::Of(a.data[i]) == SliceKey<T>::Of(b.data[i]))) return false;
    }
    return true;
  }
};

// x viewed as [outer, len, inner]: the distinct [outer, inner] slices
// along len. Fills y (shaped with len replaced) and idx.
template <typename T>
void UniqueSlices(const Tensor& x, int axis, Tensor* y, std::vector<int64_t>* idx) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.dim_size(d);
  for (int d = axis + 1; d < x.dims(); ++d) inner *= x.dim_size(d);
  const int64_t len = x.dim_size(axis), width = outer * inner;
  // Each slice gathered contiguous, so that it can be hashed and compared.
  std::unique_ptr<T[]> slices(new T[len * width]);  // not vector<bool>
  const T* in = x.data<T>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t l = 0; l < len; ++l) {
      for (int64_t i = 0; i < inner; ++i) {
        slices[l * width + o * inner + i] = in[(o * len + l) * inner + i];
      }
    }
  }
  std::unordered_map<SliceKey<T>, int64_t, SliceHash<T>, SliceEq<T>> first;
  std::vector<int64_t> firsts;
  idx->resize(len);
  for (int64_t l = 0; l < len; ++l) {
    auto [it, inserted] = first.try_emplace(SliceKey<T>{slices.get() + l * width, width},
                                            static_cast<int64_t>(firsts.size()));
    if (inserted) firsts.push_back(l);
    (*idx)[l] = it->second;
  }
  TensorShape shape = x.shape();
  shape.set_dim(axis, static_cast<int64_t>(firsts.size()));
  *y = Tensor(x.dtype(), shape);
  T* out = y->data<T>();
  const int64_t m = static_cast<int64_t>(firsts.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < m; ++k) {
      for (int64_t i = 0; i < inner; ++i) {
        out[(o * m + k) * inner + i] = slices[firsts[k] * width + o * inner + i];
      }
    }
  }
}

class UniqueV2Op : public OpKernel {
 public:
  UniqueV2Op(OpKernelConstruction* c, bool counts) : OpKernel(c), counts_(counts) {}

  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    const Tensor& axis_t = c->input(1);
    OP_REQUIRES(c, axis_t.dims() <= 1 && axis_t.NumElements() <= 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "axis expects a 1D vector with 1 element: ",
                    axis_t.shape().DebugString())));
    int axis = 0;
    if (axis_t.NumElements() == 0) {
      OP_REQUIRES(c, x.dims() == 1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "unique expects a 1D vector, got shape ", x.shape().DebugString())));
    } else {
      const int64_t a = axis_t.dtype() == DT_INT32 ? axis_t.data<int32_t>()[0]
                                                   : axis_t.data<int64_t>()[0];
      OP_REQUIRES(c, a >= -x.dims() && a < x.dims(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "axis has to be between [", -x.dims(), ", ", x.dims(), "), got ", a)));
      axis = static_cast<int>(a < 0 ? a + x.dims() : a);
    }
    Tensor y;
    std::vector<int64_t> idx;
    bool supported = true;
    WEFT_SWITCH_ALL_TYPES(
        x.dtype(),
        if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> ||
                      std::is_arithmetic_v<T> || std::is_same_v<T, std::string>) {
          UniqueSlices<T>(x, axis, &y, &idx);
        } else {
          supported = false;
        },
        supported = false);
    OP_REQUIRES(c, supported, UnsupportedDtype(type_string(), x.dtype()));
    if (counts_) {
      std::vector<int64_t> count(y.dims() > 0 ? y.dim_size(axis) : 0, 0);
      for (int64_t i : idx) ++count[i];
      OP_REQUIRES_OK(c, OutputInts(c, 2, count, false, "count"));
    }
    c->set_output(0, std::move(y));
    OP_REQUIRES_OK(c, OutputInts(c, 1, idx, false, "idx"));
  }

 private:
  const bool counts_;
};

}  // namespace

void RegisterPartitionKernels(KernelRegistry* r) {
  r->Register(KernelDef("DynamicPartition", kDeviceTypeCpu), MakeKernel<DynamicPartitionOp>);
  for (const bool counts : {false, true}) {
    r->Register(KernelDef(counts ? "UniqueWithCountsV2" : "UniqueV2", kDeviceTypeCpu)
                    .TypeConstraint("T", PodAndStringTypes()),
                [counts](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                  return std::make_unique<UniqueV2Op>(c, counts);
                });
  }
}

}  // namespace weft
