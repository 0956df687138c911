// RaggedRange (one range per row: starts, limits and deltas each a scalar
// or a vector of the row count), RaggedTensorToSparse (a ragged tensor's
// splits and values as a SparseTensor) and RaggedGather. Splits are checked before any value
// is read through them: each starts at 0, never decreases and ends at the
// length of the level below.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// Rows of a range from start to limit by delta (delta != 0).
template <typename T>
int64_t RangeSize(T start, T limit, T delta) {
  if ((delta > 0 && limit <= start) || (delta < 0 && limit >= start)) return 0;
  if constexpr (std::is_integral_v<T>) {
    const uint64_t span = delta > 0 ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                    : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
    const uint64_t step = delta > 0 ? static_cast<uint64_t>(delta)
                                    : 0 - static_cast<uint64_t>(delta);
    const uint64_t n = span / step + (span % step != 0 ? 1 : 0);
    return n > static_cast<uint64_t>(INT64_MAX) ? -1 : static_cast<int64_t>(n);
  } else {
    const double n = std::ceil(std::abs((static_cast<double>(limit) - static_cast<double>(start)) /
                                        static_cast<double>(delta)));
    return n >= 9.2e18 || !(n >= 0) ? -1 : static_cast<int64_t>(n);
  }
}

template <typename T, typename S>
class RaggedRangeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const char* names[3] = {"starts", "limits", "deltas"};
    int64_t rows = -1;
    for (int i = 0; i < 3; ++i) {
      const Tensor& t = c->input(i);
      OP_REQUIRES(c, t.dims() <= 1, absl::InvalidArgumentError(absl::StrCat(
                                        names[i], " must be a scalar or vector, got shape ",
                                        t.shape().DebugString())));
      if (t.dims() == 0) continue;
      OP_REQUIRES(c, rows < 0 || rows == t.dim_size(0),
                  absl::InvalidArgumentError(
                      "starts, limits, and deltas must have the same shape"));
      rows = t.dim_size(0);
    }
    if (rows < 0) rows = 1;
    auto at = [&](int i, int64_t r) {
      const Tensor& t = c->input(i);
      return t.data<T>()[t.dims() == 0 ? 0 : r];
    };
    Tensor* splits;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({rows + 1}), &splits));
    S* sp = splits->data<S>();
    sp[0] = 0;
    int64_t total = 0;
    for (int64_t r = 0; r < rows; ++r) {
      OP_REQUIRES(c, at(2, r) != T(0), absl::InvalidArgumentError("Requires delta != 0"));
      const int64_t n = RangeSize<T>(at(0, r), at(1, r), at(2, r));
      OP_REQUIRES(c, n >= 0 && n <= INT64_MAX - total &&
                         (std::is_same_v<S, int64_t> || total + n <= INT32_MAX),
                  absl::InvalidArgumentError(absl::StrCat(
                      "The total range size overflowed; row ", r, " alone has ",
                      n < 0 ? std::string("more than 2**63 - 1") : absl::StrCat(n),
                      " values after ", total)));
      total += n;
      sp[r + 1] = static_cast<S>(total);
    }
    Tensor* values;
    OP_REQUIRES_OK(c, c->allocate_output(1, TensorShape({total}), &values));
    T* v = values->data<T>();
    for (int64_t r = 0; r < rows; ++r) {
      T x = at(0, r);
      const T delta = at(2, r);
      for (int64_t i = sp[r]; i < sp[r + 1]; ++i, x += delta) v[i] = x;
    }
  }
};

// Reads and checks RAGGED_RANK splits: each starts at 0, never decreases
// and ends at the next level's row count (the last at values' rows).
absl::Status ReadNestedSplits(OpKernelContext* c, int n, int64_t values_rows,
                              std::vector<std::vector<int64_t>>* splits) {
  splits->resize(n);
  for (int k = 0; k < n; ++k) {
    const std::string what = absl::StrCat("rt_nested_splits[", k, "]");
    std::vector<int64_t>& s = (*splits)[k];
    WEFT_RETURN_IF_ERROR(ReadIntVector(c->input(k), what, &s));
    if (s.empty() || s[0] != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("First value of ragged splits must be 0 (", what, ")."));
    }
    for (size_t i = 1; i < s.size(); ++i) {
      if (s[i] < s[i - 1]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Ragged splits must be sorted in ascending order (", what, ": ", s[i - 1],
            " then ", s[i], " at index ", i, ")."));
      }
    }
  }
  for (int k = 0; k < n; ++k) {
    const int64_t want =
        k + 1 < n ? static_cast<int64_t>((*splits)[k + 1].size()) - 1 : values_rows;
    if ((*splits)[k].back() != want) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Final value of ragged splits must match the length the corresponding ragged "
          "values (rt_nested_splits[", k, "] ends at ", (*splits)[k].back(), ", not ", want,
          ")."));
    }
  }
  return absl::OkStatus();
}

class RaggedTensorToSparseOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const int n = c->num_inputs() - 1;
    const Tensor& values = c->input(n);
    OP_REQUIRES(c, values.dims() >= 1,
                absl::InvalidArgumentError("rt_dense_values must have rank at least 1"));
    std::vector<std::vector<int64_t>> splits;
    OP_REQUIRES_OK(c, ReadNestedSplits(c, n, values.dim_size(0), &splits));
    // The dense shape, and each value row's index in every ragged dim.
    std::vector<int64_t> shape = {static_cast<int64_t>(splits[0].size()) - 1};
    const int64_t vrows = values.dim_size(0);
    std::vector<std::vector<int64_t>> index(vrows, std::vector<int64_t>(n + 1));
    // parent[e]: the index tuple of element e at the current level.
    std::vector<std::vector<int64_t>> prefix(shape[0], std::vector<int64_t>());
    for (int64_t r = 0; r < shape[0]; ++r) prefix[r] = {r};
    for (int k = 0; k < n; ++k) {
      const std::vector<int64_t>& s = splits[k];
      int64_t widest = 0;
      std::vector<std::vector<int64_t>> next(s.back());
      for (size_t r = 0; r + 1 < s.size(); ++r) {
        widest = std::max(widest, s[r + 1] - s[r]);
        for (int64_t e = s[r]; e < s[r + 1]; ++e) {
          next[e] = prefix[r];
          next[e].push_back(e - s[r]);
        }
      }
      shape.push_back(widest);
      prefix = std::move(next);
    }
    for (int d = 1; d < values.dims(); ++d) shape.push_back(values.dim_size(d));
    const int64_t inner = vrows == 0 ? 0 : values.NumElements() / vrows;
    const int64_t rank = static_cast<int64_t>(shape.size());
    const int64_t nnz = values.NumElements();
    Tensor *indices, *out_values, *dense_shape;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({nnz, rank}), &indices));
    OP_REQUIRES_OK(c, c->allocate_output(1, TensorShape({nnz}), &out_values));
    OP_REQUIRES_OK(c, c->allocate_output(2, TensorShape({rank}), &dense_shape));
    std::copy(shape.begin(), shape.end(), dense_shape->data<int64_t>());
    int64_t* idx = indices->data<int64_t>();
    std::vector<int64_t> inner_idx(values.dims() - 1, 0);
    for (int64_t v = 0; v < vrows; ++v) {
      std::fill(inner_idx.begin(), inner_idx.end(), 0);
      for (int64_t e = 0; e < inner; ++e) {
        int64_t* row = idx + (v * inner + e) * rank;
        std::copy(prefix[v].begin(), prefix[v].end(), row);
        std::copy(inner_idx.begin(), inner_idx.end(), row + n + 1);
        for (int d = values.dims() - 2; d >= 0; --d) {  // next inner index
          if (++inner_idx[d] < values.dim_size(d + 1)) break;
          inner_idx[d] = 0;
        }
      }
    }
    const bool ok = VisitStorage(values.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::copy(values.data<T>(), values.data<T>() + nnz, out_values->data<T>());
    });
    OP_REQUIRES(c, ok, UnsupportedDtype("RaggedTensorToSparse", values.dtype()));
  }
};

// RaggedGather: rows of a ragged tensor (PARAMS_RAGGED_RANK splits +
// values) picked by `indices` of any rank, whose outer dims become uniform
// ragged levels of the result.
template <typename S>
class RaggedGatherOp : public OpKernel {
 public:
  explicit RaggedGatherOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("OUTPUT_RAGGED_RANK", &output_ragged_rank_));
  }

  void Compute(OpKernelContext* c) override {
    const int n = c->num_inputs() - 2;
    const Tensor& values = c->input(n);
    const Tensor& indices = c->input(n + 1);
    OP_REQUIRES(c, values.dims() >= 1,
                absl::InvalidArgumentError("params.rank must be nonzero"));
    OP_REQUIRES(c, output_ragged_rank_ == n + indices.dims() - 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "OUTPUT_RAGGED_RANK must be PARAMS_RAGGED_RANK + indices.rank - 1 = ",
                    n + indices.dims() - 1, ", got ", output_ragged_rank_)));
    std::vector<std::vector<int64_t>> splits;
    OP_REQUIRES_OK(c, ReadNestedSplits(c, n, values.dim_size(0), &splits));
    std::vector<int64_t> idx;
    OP_REQUIRES_OK(c, ReadIntVector(indices.dims() == 0 ? indices.Reshaped(TensorShape({1}))
                                                        : indices.Reshaped(TensorShape(
                                                              {indices.NumElements()})),
                                    "indices", &idx));
    const int64_t nrows = static_cast<int64_t>(splits[0].size()) - 1;
    for (size_t i = 0; i < idx.size(); ++i) {
      OP_REQUIRES(c, idx[i] >= 0 && idx[i] < nrows,
                  absl::InvalidArgumentError(absl::StrCat(
                      "indices[", i, "] = ", idx[i], " is not in [0, ", nrows, ")")));
    }
    // Uniform levels from indices' outer dims, then one gathered level per
    // params level; `ranges` holds the gathered element ranges of a level.
    std::vector<std::vector<int64_t>> out;
    for (int d = 0; d + 1 < indices.dims(); ++d) {
      int64_t rows = 1;
      for (int e = 0; e <= d; ++e) rows *= indices.dim_size(e);
      std::vector<int64_t> level(rows + 1);
      for (int64_t r = 0; r <= rows; ++r) level[r] = r * indices.dim_size(d + 1);
      out.push_back(std::move(level));
    }
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (int64_t i : idx) ranges.push_back({i, i + 1});
    for (int k = 0; k < n; ++k) {
      std::vector<int64_t> level = {0};
      std::vector<std::pair<int64_t, int64_t>> next;
      for (const auto& [b, e] : ranges) {
        for (int64_t r = b; r < e; ++r) {
          level.push_back(level.back() + splits[k][r + 1] - splits[k][r]);
        }
        next.push_back({splits[k][b], splits[k][e]});
      }
      if (k > 0 || indices.dims() > 0) out.push_back(std::move(level));
      ranges = std::move(next);
    }
    for (size_t k = 0; k < out.size(); ++k) {
      Tensor* t;
      OP_REQUIRES_OK(c, c->allocate_output(static_cast<int>(k),
                                           TensorShape({static_cast<int64_t>(out[k].size())}),
                                           &t));
      OP_REQUIRES(c, (std::is_same_v<S, int64_t>) || out[k].back() <= INT32_MAX,
                  absl::InvalidArgumentError("the gathered splits do not fit int32"));
      std::copy(out[k].begin(), out[k].end(), t->data<S>());
    }
    const int64_t inner = values.dim_size(0) == 0 ? 0 : values.NumElements() / values.dim_size(0);
    int64_t rows = 0;
    for (const auto& [b, e] : ranges) rows += e - b;
    std::vector<int64_t> dims = {rows};
    for (int d = 1; d < values.dims(); ++d) dims.push_back(values.dim_size(d));
    Tensor* vals;
    OP_REQUIRES_OK(c, c->allocate_output(static_cast<int>(out.size()), TensorShape(dims), &vals));
    const bool ok = VisitStorage(values.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = values.data<T>();
      T* dst = vals->data<T>();
      for (const auto& [b, e] : ranges) dst = std::copy(src + b * inner, src + e * inner, dst);
    });
    OP_REQUIRES(c, ok, UnsupportedDtype("RaggedGather", values.dtype()));
  }

 private:
  int64_t output_ragged_rank_ = 0;
};

template <typename T>
void RegisterRange(KernelRegistry* r) {
  auto def = [](DataType s) {
    return KernelDef("RaggedRange", kDeviceTypeCpu)
        .TypeConstraint("T", DataTypeToEnum<T>::value)
        .TypeConstraint("Tsplits", s);
  };
  r->Register(def(DT_INT32), MakeKernel<RaggedRangeOp<T, int32_t>>);
  r->Register(def(DT_INT64), MakeKernel<RaggedRangeOp<T, int64_t>>);
}

}  // namespace

void RegisterRaggedRangeKernels(KernelRegistry* r) {
  RegisterRange<float>(r);
  RegisterRange<double>(r);
  RegisterRange<int32_t>(r);
  RegisterRange<int64_t>(r);
  for (DataType t : PodAndStringTypes()) {
    for (DataType i : {DT_INT32, DT_INT64}) {
      auto gather = [&](DataType s) {
        return KernelDef("RaggedGather", kDeviceTypeCpu)
            .TypeConstraint("Tvalues", t)
            .TypeConstraint("Tindices", i)
            .TypeConstraint("Tsplits", s);
      };
      r->Register(gather(DT_INT32), MakeKernel<RaggedGatherOp<int32_t>>);
      r->Register(gather(DT_INT64), MakeKernel<RaggedGatherOp<int64_t>>);
    }
    for (DataType s : {DT_INT32, DT_INT64}) {
      r->Register(KernelDef("RaggedTensorToSparse", kDeviceTypeCpu)
                      .TypeConstraint("T", t)
                      .TypeConstraint("Tsplits", s),
                  MakeKernel<RaggedTensorToSparseOp>);
    }
  }
}

}  // namespace weft
