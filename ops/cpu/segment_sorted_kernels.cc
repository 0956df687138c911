// Sorted segment reductions: Segment{Sum,Mean,Prod,Min,Max} (the output
// has last id + 1 rows) and Segment{Sum,Prod,Min,Max}V2 (num_segments
// rows). output[s] reduces the rows of data whose segment_ids is s; ids
// must be non-decreasing and in range (TensorFlow's messages, naming the
// offending id); an empty segment is 0 (Prod: 1).
//
// Each run of equal ids is reduced row by row, in order, in FloatIfNarrow
// (float for half); runs are spread over the intra-op pool.
// Also the shared id checks of segment_reduce.h.
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/math_extra_register.h"
#include "ops/cpu/segment_reduce.h"
#include "runtime/core/status.h"

namespace weft {

absl::Status SortedSegmentOutputRows(const Tensor* num_segments,
                                     const std::vector<int64_t>& ids,
                                     const char* past_end, int64_t* rows) {
  if (num_segments != nullptr) {
    WEFT_RETURN_IF_ERROR(ReadIntScalar(*num_segments, "num_segments", rows));
    if (*rows < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_segments must be non-negative, got ", *rows));
    }
  } else {
    if (!ids.empty() && ids.back() < 0) {
      return absl::InvalidArgumentError("segment ids must be >= 0");
    }
    if (!ids.empty() && ids.back() == INT64_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(
          "segment id ", ids.back(), " leaves no room for its output rows"));
    }
    *rows = ids.empty() ? 0 : ids.back() + 1;
  }
  // Run by run, as TensorFlow checks them: a run followed by a smaller id,
  // then a run outside the rows (ids [0, 1, 2, 0] have 1 row: id 1 is out).
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i + 1 < ids.size() && ids[i + 1] < ids[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "segment ids are not increasing (segment_ids[", i + 1, "] = ", ids[i + 1],
          " after ", ids[i], ")"));
    }
    if (ids[i] < 0 || ids[i] >= *rows) {
      if (past_end != nullptr && ids[i] >= 0) {
        return absl::InvalidArgumentError(past_end);
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "Segment id ", ids[i], " out of range [0, ", *rows,
          "), possibly because 'segment_ids' input is not sorted."));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TensorShape> SegmentOutputShape(int64_t rows, const TensorShape& data,
                                               int first_inner_dim) {
  std::vector<int64_t> dims = {rows};
  for (int d = first_inner_dim; d < data.dims(); ++d) dims.push_back(data.dim_size(d));
  absl::StatusOr<TensorShape> shape = TensorShape::Build(dims);
  if (!shape.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Encountered overflow when multiplying the output's dims: ", rows,
        " segments of data shaped ", data.DebugString(), " is too large (",
        shape.status().message(), ")"));
  }
  return shape;
}

std::vector<std::pair<int64_t, int64_t>> SegmentRuns(
    const std::vector<int64_t>& ids) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  const int64_t n = static_cast<int64_t>(ids.size());
  for (int64_t b = 0; b < n;) {
    int64_t e = b + 1;
    while (e < n && ids[e] == ids[b]) ++e;
    runs.push_back({b, e});
    b = e;
  }
  return runs;
}

namespace {

// R reduces; kMean divides each sum by its row count.
template <typename T, typename R, bool kMean, bool kV2>
class SegmentReduceOp : public OpKernel {
 public:
  explicit SegmentReduceOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    using A = FloatIfNarrow<T>;
    const Tensor& data = c->input(0);
    const Tensor& ids_t = c->input(1);
    OP_REQUIRES(c, ids_t.dims() == 1,
                absl::InvalidArgumentError("segment_ids should be a vector."));
    OP_REQUIRES(c, data.dims() >= 1 && data.dim_size(0) == ids_t.dim_size(0),
                absl::InvalidArgumentError(
                    "segment_ids should be the same size as dimension 0 of input."));
    std::vector<int64_t> ids;
    OP_REQUIRES_OK(c, ReadIntVector(ids_t, "segment_ids", &ids));
    int64_t rows = 0;
    OP_REQUIRES_OK(c, SortedSegmentOutputRows(kV2 ? &c->input(2) : nullptr, ids,
                                              nullptr, &rows));
    absl::StatusOr<TensorShape> out_shape = SegmentOutputShape(rows, data.shape(), 1);
    OP_REQUIRES_OK(c, out_shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, *out_shape, &out));
    const int64_t inner =
        data.dim_size(0) == 0 ? 0 : data.NumElements() / data.dim_size(0);
    T* o = out->data<T>();
    // Empty segments: the sum's or the product's identity, 0 for min/max.
    const A empty = std::is_same_v<R, ProdReducer> ? A(1) : A(0);
    std::fill(o, o + out->NumElements(), FromFloatIfNarrow<T>(empty));
    const T* x = data.data<T>();
    ReduceSortedRuns<T, R>(
        c, ids, inner, [&](int64_t i) { return x + i * inner; },
        [](A v, int64_t count) { return kMean ? A(v / static_cast<A>(count)) : v; }, o);
  }
};

template <typename T>
void RegisterSorted(KernelRegistry* r) {
  auto def = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu)
        .TypeConstraint("T", DataTypeToEnum<T>::value)
        .TypeConstraint("Tindices", {DT_INT32, DT_INT64});
  };
  r->Register(def("SegmentSum"), MakeKernel<SegmentReduceOp<T, SumReducer, false, false>>);
  r->Register(def("SegmentMean"), MakeKernel<SegmentReduceOp<T, SumReducer, true, false>>);
  r->Register(def("SegmentProd"), MakeKernel<SegmentReduceOp<T, ProdReducer, false, false>>);
  r->Register(def("SegmentSumV2"), MakeKernel<SegmentReduceOp<T, SumReducer, false, true>>);
  r->Register(def("SegmentProdV2"), MakeKernel<SegmentReduceOp<T, ProdReducer, false, true>>);
  // Complex types have no order: no Min or Max, as TensorFlow.
  if constexpr (!kIsComplex<T>) {
    r->Register(def("SegmentMin"), MakeKernel<SegmentReduceOp<T, MinReducer, false, false>>);
    r->Register(def("SegmentMax"), MakeKernel<SegmentReduceOp<T, MaxReducer, false, false>>);
    r->Register(def("SegmentMinV2"), MakeKernel<SegmentReduceOp<T, MinReducer, false, true>>);
    r->Register(def("SegmentMaxV2"), MakeKernel<SegmentReduceOp<T, MaxReducer, false, true>>);
  }
}

}  // namespace

void RegisterSortedSegmentKernels(KernelRegistry* r) {
  RegisterSorted<float>(r);
  RegisterSorted<double>(r);
  RegisterSorted<Half>(r);
  RegisterSorted<int32_t>(r);
  RegisterSorted<int64_t>(r);
  RegisterSorted<BFloat16>(r);
  RegisterSorted<int8_t>(r);
  RegisterSorted<int16_t>(r);
  RegisterSorted<uint8_t>(r);
  RegisterSorted<uint16_t>(r);
  RegisterSorted<uint32_t>(r);
  RegisterSorted<uint64_t>(r);
  RegisterSorted<Complex64>(r);
  RegisterSorted<Complex128>(r);
}

}  // namespace weft
