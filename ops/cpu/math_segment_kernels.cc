// UnsortedSegmentSum: output[s, ...] = sum of data[i, ...] over the i whose
// segment_ids[i] == s (segment_ids may have several dims, a prefix of
// data's). Negative ids are dropped, as in TensorFlow; ids >= num_segments
// are an error naming the offending id.
//
// Sharded by output segment range: each shard scans all ids but adds only
// the rows of its own segments, so no two threads write the same row.
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/math_extra_register.h"

namespace weft {
namespace {

template <typename T>
class UnsortedSegmentSumOp : public OpKernel {
 public:
  explicit UnsortedSegmentSumOp(OpKernelConstruction* c) : OpKernel(c) {}
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
    for (int64_t id : ids) {
      OP_REQUIRES(c, id < segments,
                  absl::InvalidArgumentError(absl::StrCat(
                      "segment_ids value ", id, " is out of range [0, ",
                      segments, ")")));
    }
    TensorShape out_shape({segments});
    for (int d = ids_t.dims(); d < data.dims(); ++d) out_shape.AddDim(data.dim_size(d));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, out_shape, &out));
    const int64_t inner = ids.empty() ? 0 : data.NumElements() / static_cast<int64_t>(ids.size());
    T* o = out->data<T>();
    std::fill(o, o + out->NumElements(), T(0));
    if (inner == 0 || segments == 0) return;
    const T* x = data.data<T>();
    const int64_t rows = static_cast<int64_t>(ids.size());
    ParallelRange(c, segments, rows * inner / segments + rows + 1,
                  [&](int64_t b, int64_t e) {
                    for (int64_t i = 0; i < rows; ++i) {
                      if (ids[i] < b || ids[i] >= e) continue;
                      ArrayMap<T>(o + ids[i] * inner, inner) +=
                          ConstArrayMap<T>(x + i * inner, inner);
                    }
                  });
  }
};

template <typename T>
void Register(KernelRegistry* r) {
  r->Register(KernelDef("UnsortedSegmentSum", kDeviceTypeCpu)
                  .TypeConstraint("T", DataTypeToEnum<T>::value)
                  .TypeConstraint("Tindices", {DT_INT32, DT_INT64}),
              MakeKernel<UnsortedSegmentSumOp<T>>);
}

}  // namespace

void RegisterSegmentKernels(KernelRegistry* r) {
  Register<float>(r);
  Register<double>(r);
  Register<int32_t>(r);
  Register<int64_t>(r);
}

}  // namespace weft
