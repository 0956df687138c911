// SparseSegment{Sum,Mean,SqrtN}(WithNumSegments) and their gradients
// SparseSegment*Grad(V2).
//
// Forward: output[s] = reduce over the i with segment_ids[i] == s of
// data[indices[i]]; segment_ids sorted; Mean divides a segment's sum by its
// count, SqrtN by the count's square root; empty segments are 0. The output
// has last id + 1 rows, or num_segments.
//
// Gradient: output[indices[i]] += grad[segment_ids[i]] * w(segment), w = 1,
// 1 / count or 1 / sqrt(count); output has output_dim0 rows (V2: one per
// distinct index, sorted, returned as sorted_unique_indices).
//
// half is computed in float and rounded once. Forward runs are spread over
// the intra-op pool; the gradient (rows may repeat) runs in order.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/math_extra_register.h"
#include "ops/cpu/segment_reduce.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

enum class Scale { kSum, kMean, kSqrtN };

template <typename A>
A SegmentWeight(Scale scale, int64_t count) {
  if (scale == Scale::kSum) return A(1);
  const A n = static_cast<A>(count);
  return scale == Scale::kMean ? A(1) / n : A(1) / static_cast<A>(std::sqrt(n));
}

// rows (data or grad, named `what`) at least 1-D; indices and
// segment_ids vectors of the same size, read into idx and ids.
absl::Status ReadIndexPair(const Tensor& rows, const char* what,
                           const Tensor& indices, const Tensor& ids_t,
                           std::vector<int64_t>* idx, std::vector<int64_t>* ids) {
  if (rows.dims() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be at least 1-D"));
  }
  if (indices.dims() != 1) return absl::InvalidArgumentError("indices should be a vector.");
  if (ids_t.dims() != 1) return absl::InvalidArgumentError("segment_ids should be a vector.");
  if (indices.NumElements() != ids_t.NumElements()) {
    return absl::InvalidArgumentError("segment_ids and indices should have same size.");
  }
  WEFT_RETURN_IF_ERROR(ReadIntVector(indices, "indices", idx));
  return ReadIntVector(ids_t, "segment_ids", ids);
}

template <typename T, Scale kScale, bool kNumSegments>
class SparseSegmentReduceOp : public OpKernel {
 public:
  explicit SparseSegmentReduceOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    using A = FloatIfNarrow<T>;
    const Tensor& data = c->input(0);
    std::vector<int64_t> idx, ids;
    OP_REQUIRES_OK(c, ReadIndexPair(data, "data", c->input(1), c->input(2), &idx, &ids));
    int64_t rows = 0;
    OP_REQUIRES_OK(c, SortedSegmentOutputRows(
                          kNumSegments ? &c->input(3) : nullptr, ids,
                          kNumSegments ? "segment ids must be < num_segments" : nullptr,
                          &rows));
    // The output's size first, as TensorFlow allocates it before it reads
    // the indices.
    absl::StatusOr<TensorShape> out_shape = SegmentOutputShape(rows, data.shape(), 1);
    OP_REQUIRES_OK(c, out_shape.status());
    const int64_t n_data = data.dim_size(0);
    for (size_t i = 0; i < idx.size(); ++i) {
      OP_REQUIRES(c, idx[i] >= 0 && idx[i] < n_data,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Bad: indices[", i, "] == ", idx[i], " out of range [0, ",
                      n_data, ")")));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, *out_shape, &out));
    T* o = out->data<T>();
    std::fill(o, o + out->NumElements(), FromFloatIfNarrow<T>(A(0)));
    const int64_t inner = n_data == 0 ? 0 : data.NumElements() / n_data;
    const T* x = data.data<T>();
    ReduceSortedRuns<T, SumReducer>(
        c, ids, inner, [&](int64_t i) { return x + idx[i] * inner; },
        [](A v, int64_t count) {
          if (kScale == Scale::kMean) return A(v / static_cast<A>(count));
          if (kScale == Scale::kSqrtN) {
            return A(v / static_cast<A>(std::sqrt(static_cast<A>(count))));
          }
          return v;
        },
        o);
  }
};

template <typename T, Scale kScale, bool kV2>
class SparseSegmentGradOp : public OpKernel {
 public:
  explicit SparseSegmentGradOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    using A = FloatIfNarrow<T>;
    const Tensor& grad = c->input(0);
    std::vector<int64_t> idx, ids;
    OP_REQUIRES_OK(c, ReadIndexPair(grad, "grad", c->input(1), c->input(2), &idx, &ids));
    int64_t dim0 = 0;
    OP_REQUIRES_OK(c, ReadIntScalar(c->input(3), kV2 ? "dense_output_dim0" : "output_dim0",
                                    &dim0));
    OP_REQUIRES(c, dim0 >= 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "output_dim0 must be non-negative, got ", dim0)));
    const int64_t segments = grad.dim_size(0);
    std::vector<int64_t> counts(segments, 0);
    for (size_t i = 0; i < ids.size(); ++i) {
      OP_REQUIRES(c, ids[i] >= 0 && ids[i] < segments,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Segment id ", ids[i], " out of range [0, ", segments,
                      ") (segment_ids[", i, "]; grad has ", segments, " rows)")));
      ++counts[ids[i]];
      OP_REQUIRES(c, idx[i] >= 0 && idx[i] < dim0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Index ", idx[i], " out of range [0, ", dim0, ").")));
    }
    // Output row of each index: itself, or (V2) its rank among the
    // distinct indices.
    std::vector<int64_t> unique;
    int64_t out_rows = dim0;
    if (kV2) {
      unique = idx;
      std::sort(unique.begin(), unique.end());
      unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
      out_rows = static_cast<int64_t>(unique.size());
    }
    TensorShape out_shape = grad.shape();
    out_shape.set_dim(0, out_rows);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &out));
    if (kV2) {
      Tensor* u = nullptr;
      OP_REQUIRES_OK(c, c->allocate_output(1, TensorShape({out_rows}), &u));
      for (int64_t i = 0; i < out_rows; ++i) {
        if (u->dtype() == DT_INT64) {
          u->data<int64_t>()[i] = unique[i];
        } else {
          u->data<int32_t>()[i] = static_cast<int32_t>(unique[i]);
        }
      }
    }
    const int64_t inner = segments == 0 ? 0 : grad.NumElements() / segments;
    std::vector<A> acc(static_cast<size_t>(out_rows * inner), A(0));
    const T* g = grad.data<T>();
    for (size_t i = 0; i < idx.size(); ++i) {
      const int64_t row =
          kV2 ? std::lower_bound(unique.begin(), unique.end(), idx[i]) - unique.begin()
              : idx[i];
      const A w = SegmentWeight<A>(kScale, counts[ids[i]]);
      const T* in = g + ids[i] * inner;
      A* to = acc.data() + row * inner;
      for (int64_t j = 0; j < inner; ++j) to[j] += ToFloatIfNarrow(in[j]) * w;
    }
    T* o = out->data<T>();
    for (size_t k = 0; k < acc.size(); ++k) o[k] = FromFloatIfNarrow<T>(acc[k]);
  }
};

template <typename T, Scale kScale>
void RegisterForward(KernelRegistry* r, const char* name) {
  auto def = [](std::string op) {
    return KernelDef(op, kDeviceTypeCpu)
        .TypeConstraint("T", DataTypeToEnum<T>::value)
        .TypeConstraint("Tidx", {DT_INT32, DT_INT64})
        .TypeConstraint("Tsegmentids", {DT_INT32, DT_INT64});
  };
  r->Register(def(name), MakeKernel<SparseSegmentReduceOp<T, kScale, false>>);
  r->Register(def(absl::StrCat(name, "WithNumSegments")),
              MakeKernel<SparseSegmentReduceOp<T, kScale, true>>);
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                std::is_same_v<T, BFloat16>) {
    r->Register(def(absl::StrCat(name, "Grad")), MakeKernel<SparseSegmentGradOp<T, kScale, false>>);
    r->Register(def(absl::StrCat(name, "GradV2")), MakeKernel<SparseSegmentGradOp<T, kScale, true>>);
  }
}

template <typename T>
void RegisterAll(KernelRegistry* r) {
  RegisterForward<T, Scale::kSum>(r, "SparseSegmentSum");
  RegisterForward<T, Scale::kMean>(r, "SparseSegmentMean");
  RegisterForward<T, Scale::kSqrtN>(r, "SparseSegmentSqrtN");
}

}  // namespace

void RegisterSparseSegmentKernels(KernelRegistry* r) {
  RegisterAll<float>(r);
  RegisterAll<double>(r);
  RegisterAll<Half>(r);
  RegisterAll<BFloat16>(r);
  RegisterForward<int32_t, Scale::kSum>(r, "SparseSegmentSum");
  RegisterForward<int64_t, Scale::kSum>(r, "SparseSegmentSum");
  RegisterForward<int8_t, Scale::kSum>(r, "SparseSegmentSum");
  RegisterForward<int16_t, Scale::kSum>(r, "SparseSegmentSum");
  RegisterForward<uint8_t, Scale::kSum>(r, "SparseSegmentSum");
  RegisterForward<uint16_t, Scale::kSum>(r, "SparseSegmentSum");
  RegisterForward<uint32_t, Scale::kSum>(r, "SparseSegmentSum");
  RegisterForward<uint64_t, Scale::kSum>(r, "SparseSegmentSum");
}

}  // namespace weft
