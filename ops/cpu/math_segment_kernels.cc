// UnsortedSegment{Sum,Max,Min,Prod}: output[s, ...] reduces data[i, ...]
// over the i whose segment_ids[i] == s (segment_ids may have several dims,
// a prefix of data's). Negative ids are dropped, as in TensorFlow; ids >=
// num_segments are an error naming the offending id. An empty segment is
// 0, T's lowest (Max), T's highest (Min) or 1 (Prod), as in TensorFlow.
// half combines in float, rounded to half at each row (Eigen::half's
// arithmetic, which TensorFlow's kernel uses).
//
// Sharded by output segment range: each shard scans all ids but adds only
// the rows of its own segments, so no two threads write the same row.
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/index_name.h"
#include "ops/cpu/math_extra_register.h"
#include "ops/cpu/segment_reduce.h"

namespace weft {
namespace {

template <typename T, typename R>
class UnsortedSegmentReduceOp : public OpKernel {
 public:
  explicit UnsortedSegmentReduceOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& data = c->input(0);
    const Tensor& ids_t = c->input(1);
    int64_t segments = 0;
    OP_REQUIRES_OK(c, ReadIntScalar(c->input(2), "num_segments", &segments));
    OP_REQUIRES(c, segments >= 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "num_segments must be non-negative, got ", segments)));
    bool prefix = ids_t.dims() <= data.dims();
    for (int d = 0; prefix && d < ids_t.dims(); ++d) {
      prefix = ids_t.dim_size(d) == data.dim_size(d);
    }
    OP_REQUIRES(c, prefix,
                absl::InvalidArgumentError(absl::StrCat(
                    "segment_ids.shape = ", ids_t.shape().DebugString(),
                    " must be a prefix of data.shape = ",
                    data.shape().DebugString())));
    std::vector<int64_t> ids;
    OP_REQUIRES_OK(c, ReadIntVector(ids_t.Reshaped(TensorShape({ids_t.NumElements()})),
                                    "segment_ids", &ids));
    for (size_t i = 0; i < ids.size(); ++i) {
      OP_REQUIRES(c, ids[i] < segments,
                  absl::InvalidArgumentError(absl::StrCat(
                      "segment_ids", IndexName(ids_t.shape(), static_cast<int64_t>(i)), " = ",
                      ids[i], " is out of range [0, ", segments, ")")));
    }
    absl::StatusOr<TensorShape> out_shape = SegmentOutputShape(segments, data.shape(), ids_t.dims());
    OP_REQUIRES_OK(c, out_shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, *out_shape, &out));
    const int64_t inner = ids.empty() ? 0 : data.NumElements() / static_cast<int64_t>(ids.size());
    T* o = out->data<T>();
    std::fill(o, o + out->NumElements(), EmptySegmentValue<T, R>());
    if (inner == 0 || segments == 0) return;
    const T* x = data.data<T>();
    const int64_t rows = static_cast<int64_t>(ids.size());
    ParallelRange(c, segments, rows * inner / segments + rows + 1,
                  [&](int64_t b, int64_t e) {
                    for (int64_t i = 0; i < rows; ++i) {
                      if (ids[i] < b || ids[i] >= e) continue;
                      Accumulate(o + ids[i] * inner, x + i * inner, inner);
                    }
                  });
  }

 private:
  // out[j] = R(out[j], in[j]); an Eigen loop for sums of float types.
  static void Accumulate(T* out, const T* in, int64_t n) {
    if constexpr (std::is_same_v<R, SumReducer> && std::is_same_v<FloatIfNarrow<T>, T>) {
      ArrayMap<T>(out, n) += ConstArrayMap<T>(in, n);
    } else if constexpr (std::is_same_v<FloatIfNarrow<T>, T>) {
      for (int64_t j = 0; j < n; ++j) out[j] = R::Combine(out[j], in[j]);
    } else {
      for (int64_t j = 0; j < n; ++j) {
        out[j] = FromFloat<T>(R::Combine(ToFloat(out[j]), ToFloat(in[j])));
      }
    }
  }
};

// Complex types have no order: Sum and Prod only, as TensorFlow.
template <typename T>
void Register(KernelRegistry* r) {
  constexpr bool kOrdered = !kIsComplex<T>;
  auto def = [](const char* op) {
    return KernelDef(op, kDeviceTypeCpu)
        .TypeConstraint("T", DataTypeToEnum<T>::value)
        .TypeConstraint("Tindices", {DT_INT16, DT_INT32, DT_INT64});
  };
  r->Register(def("UnsortedSegmentSum"), MakeKernel<UnsortedSegmentReduceOp<T, SumReducer>>);
  if constexpr (kOrdered) {
    r->Register(def("UnsortedSegmentMax"), MakeKernel<UnsortedSegmentReduceOp<T, MaxReducer>>);
    r->Register(def("UnsortedSegmentMin"), MakeKernel<UnsortedSegmentReduceOp<T, MinReducer>>);
  }
  r->Register(def("UnsortedSegmentProd"), MakeKernel<UnsortedSegmentReduceOp<T, ProdReducer>>);
}

}  // namespace

void RegisterSegmentKernels(KernelRegistry* r) {
  Register<float>(r);
  Register<double>(r);
  Register<int32_t>(r);
  Register<int64_t>(r);
  Register<Half>(r);
  Register<BFloat16>(r);
  Register<int8_t>(r);
  Register<int16_t>(r);
  Register<uint8_t>(r);
  Register<uint16_t>(r);
  Register<uint32_t>(r);
  Register<uint64_t>(r);
  Register<Complex64>(r);
  Register<Complex128>(r);
  RegisterSortedSegmentKernels(r);
  RegisterSparseSegmentKernels(r);
}

}  // namespace weft
