// Kernels that pick elements by index or condition: GatherV2, Select,
// SelectV2, Where, Unique, UniqueWithCounts.
#include <algorithm>
#include <array>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_kernels.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/float_convert.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

class GatherV2Op : public OpKernel {
 public:
  explicit GatherV2Op(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("batch_dims", &batch_dims_));
  }
  void Compute(OpKernelContext* c) override {
    int64_t axis;
    OP_REQUIRES_OK(c, ReadIntScalar(c->input(2), "GatherV2's axis", &axis));
    OP_REQUIRES_OK(c, Gather(c, c->input(0), c->input(1), axis, batch_dims_));
  }

 private:
  int64_t batch_dims_ = 0;
};

// Unique and UniqueWithCounts on a vector: the distinct values in order of
// first appearance, each element's index among them, and (with counts) how
// often each appears. Equality is the type's ==, as TensorFlow's hash map
// has it: 0.0 and -0.0 are one value, every NaN a value of its own. Half
// and bfloat16 compare as the floats they hold.
template <typename T>
void UniqueOf(const Tensor& x, Tensor* y, std::vector<int64_t>* idx,
              std::vector<int64_t>* counts) {
  using Key = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>,
                                 float, T>;
  const T* in = x.data<T>();
  const int64_t n = x.NumElements();
  std::unordered_map<Key, int64_t> first;
  std::vector<int64_t> firsts;  // position of each distinct value
  for (int64_t i = 0; i < n; ++i) {
    Key key;
    if constexpr (std::is_same_v<T, Half>) {
      key = HalfToFloat(in[i]);
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      key = BFloat16ToFloat(in[i]);
    } else {
      key = in[i];
    }
    auto [it, inserted] = first.try_emplace(key, static_cast<int64_t>(firsts.size()));
    if (inserted) {
      firsts.push_back(i);
      counts->push_back(0);
    }
    (*idx)[i] = it->second;
    ++(*counts)[it->second];
  }
  *y = Tensor(x.dtype(), TensorShape({static_cast<int64_t>(firsts.size())}));
  for (size_t k = 0; k < firsts.size(); ++k) y->data<T>()[k] = in[firsts[k]];
}

class UniqueOp : public OpKernel {
 public:
  explicit UniqueOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    OP_REQUIRES(c, x.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "unique expects a 1D vector, got shape ", x.shape().DebugString())));
    std::vector<int64_t> idx(x.NumElements()), counts;
    Tensor y;
    bool supported = true;
    WEFT_SWITCH_ALL_TYPES(
        x.dtype(),
        if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> ||
                      std::is_arithmetic_v<T> || std::is_same_v<T, std::string>) {
          UniqueOf<T>(x, &y, &idx, &counts);
        } else {
          supported = false;
        },
        supported = false);
    OP_REQUIRES(c, supported, UnsupportedDtype(type_string(), x.dtype()));
    c->set_output(0, std::move(y));
    OP_REQUIRES_OK(c, OutputInts(c, 1, idx, false, "idx"));
    if (c->num_outputs() > 2) OP_REQUIRES_OK(c, OutputInts(c, 2, counts, false, "count"));
  }
};

// Select: condition is a scalar, a vector over dim 0, or t's shape.
class SelectOp : public OpKernel {
 public:
  explicit SelectOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& cond = c->input(0);
    const Tensor& t = c->input(1);
    const Tensor& e = c->input(2);
    OP_REQUIRES(c, t.shape() == e.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "'then' and 'else' must have the same size.  but received: ",
                    t.shape().DebugString(), " vs. ", e.shape().DebugString())));
    if (cond.dims() == 0) {
      c->set_output(0, cond.scalar<bool>() ? t : e);
      return;
    }
    const bool same = cond.shape() == t.shape();
    const bool rows = cond.dims() == 1 && t.dims() >= 1 && cond.dim_size(0) == t.dim_size(0);
    OP_REQUIRES(c, same || rows,
                absl::InvalidArgumentError(absl::StrCat(
                    "'condition' must be a scalar, a vector matching the first "
                    "dimension of 'then', or the same shape as 'then'; got ",
                    cond.shape().DebugString(), " and ", t.shape().DebugString())));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, t.shape(), &out));
    const int64_t n = cond.NumElements();
    const int64_t width = same || n == 0 ? 1 : t.NumElements() / n;
    const bool* cv = cond.data<bool>();
    for (int64_t i = 0; i < n; ++i) {
      CopyElements(cv[i] ? t : e, i * width, *out, i * width, width);
    }
  }
};

// SelectV2: condition, t and e broadcast together.
class SelectV2Op : public OpKernel {
 public:
  explicit SelectV2Op(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& cond = c->input(0);
    const Tensor& t = c->input(1);
    const Tensor& e = c->input(2);
    TensorShape te, shape;
    OP_REQUIRES(c, BroadcastShape(t.shape(), e.shape(), &te) &&
                       BroadcastShape(cond.shape(), te, &shape),
                absl::InvalidArgumentError(absl::StrCat(
                    "condition ", cond.shape().DebugString(), ", then ",
                    t.shape().DebugString(), " and else ",
                    e.shape().DebugString(), " are not broadcastable")));
    if (cond.dims() == 0 && t.shape() == shape && e.shape() == shape) {
      c->set_output(0, cond.scalar<bool>() ? t : e);
      return;
    }
    std::array<std::vector<int64_t>, 3> strides;
    BroadcastStrides(cond.shape(), shape, &strides[0]);
    BroadcastStrides(t.shape(), shape, &strides[1]);
    BroadcastStrides(e.shape(), shape, &strides[2]);
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const bool* cv = cond.data<bool>();
    VisitStorage(t.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* tv = t.data<T>();
      const T* ev = e.data<T>();
      T* o = out->data<T>();
      ForEachBroadcast(shape, strides, [&](int64_t i, const std::array<int64_t, 3>& off) {
        o[i] = cv[off[0]] ? tv[off[1]] : ev[off[2]];
      });
    });
  }
};

// Where: the [num_true, rank] int64 coordinates of the nonzero elements,
// in row-major order (what boolean_mask and report_uninitialized_variables
// build on).
class WhereOp : public OpKernel {
 public:
  explicit WhereOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    std::vector<int64_t> hits;
    switch (in.dtype()) {
#define WEFT_WHERE_CASE(T)                                              \
  case DataTypeToEnum<T>::value: {                                      \
    const T* p = in.data<T>();                                          \
    for (int64_t i = 0; i < in.NumElements(); ++i) {                    \
      if (ToFloatIfNarrow(p[i]) != FloatIfNarrow<T>(0)) hits.push_back(i); \
    }                                                                   \
    break;                                                              \
  }
      WEFT_WHERE_CASE(bool)
      WEFT_WHERE_CASE(float)
      WEFT_WHERE_CASE(double)
      WEFT_WHERE_CASE(int8_t)
      WEFT_WHERE_CASE(uint8_t)
      WEFT_WHERE_CASE(int16_t)
      WEFT_WHERE_CASE(uint16_t)
      WEFT_WHERE_CASE(int32_t)
      WEFT_WHERE_CASE(uint32_t)
      WEFT_WHERE_CASE(int64_t)
      WEFT_WHERE_CASE(uint64_t)
      WEFT_WHERE_CASE(Half)
      WEFT_WHERE_CASE(BFloat16)
      WEFT_WHERE_CASE(Complex64)
      WEFT_WHERE_CASE(Complex128)
#undef WEFT_WHERE_CASE
      default:
        c->SetStatus(absl::UnimplementedError(absl::StrCat(
            "Where of ", DataTypeString(in.dtype()), " is not supported")));
        return;
    }
    const int rank = in.dims();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(
                          0, TensorShape({static_cast<int64_t>(hits.size()), rank}), &out));
    int64_t* o = out->data<int64_t>();
    for (int64_t flat : hits) {
      for (int d = rank - 1; d >= 0; --d) {
        o[d] = flat % in.dim_size(d);
        flat /= in.dim_size(d);
      }
      o += rank;
    }
  }
};

}  // namespace

absl::Status Gather(OpKernelContext* c, const Tensor& params,
                    const Tensor& indices, int64_t axis_value,
                    int64_t batch_dims_attr) {
  if (params.dims() < 1) {
    return absl::InvalidArgumentError("params must be at least 1 dimensional");
  }
  int axis;
  WEFT_RETURN_IF_ERROR(CanonicalAxis(axis_value, params.dims(), "gather axis", &axis));
  int64_t batch_dims = batch_dims_attr;
  if (batch_dims < 0) batch_dims += indices.dims();
  if (batch_dims < 0 || batch_dims > indices.dims()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Expected batch_dims in the range [", -indices.dims(), ", ",
        indices.dims(), "], but got ", batch_dims_attr));
  }
  if (batch_dims > axis) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch_dims (", batch_dims, ") must be less than or equal to axis (",
        axis, ")."));
  }
  for (int d = 0; d < batch_dims; ++d) {
    if (params.dim_size(d) != indices.dim_size(d)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "params.shape[", d, "]: ", params.dim_size(d),
          " should be equal to indices.shape[", d, "]: ", indices.dim_size(d)));
    }
  }
  TensorShape out_shape;
  int64_t batch = 1, outer = 1, inner = 1, per_batch = 1;
  for (int d = 0; d < axis; ++d) {
    out_shape.AddDim(params.dim_size(d));
    (d < batch_dims ? batch : outer) *= params.dim_size(d);
  }
  for (int d = batch_dims; d < indices.dims(); ++d) {
    out_shape.AddDim(indices.dim_size(d));
    per_batch *= indices.dim_size(d);
  }
  for (int d = axis + 1; d < params.dims(); ++d) {
    out_shape.AddDim(params.dim_size(d));
    inner *= params.dim_size(d);
  }
  const int64_t limit = params.dim_size(axis);
  std::vector<int64_t> idx;
  WEFT_RETURN_IF_ERROR(ReadIntVector(
      indices.Reshaped(TensorShape({indices.NumElements()})), "indices", &idx));
  for (size_t k = 0; k < idx.size(); ++k) {
    if (idx[k] < 0 || idx[k] >= limit) {
      return absl::InvalidArgumentError(absl::StrCat(
          "indices[", k, "] = ", idx[k], " is not in [0, ", limit, ")"));
    }
  }
  Tensor* out;
  WEFT_RETURN_IF_ERROR(c->allocate_output(0, out_shape, &out));
  if (out->NumElements() == 0) return absl::OkStatus();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t src_base = (b * outer + o) * limit * inner;
      const int64_t dst_base = (b * outer + o) * per_batch * inner;
      for (int64_t k = 0; k < per_batch; ++k) {
        CopyElements(params, src_base + idx[b * per_batch + k] * inner, *out,
                     dst_base + k * inner, inner);
      }
    }
  }
  return absl::OkStatus();
}

void RegisterArrayGatherKernels(KernelRegistry* r) {
  r->Register(KernelDef("Unique", kDeviceTypeCpu), MakeKernel<UniqueOp>);
  r->Register(KernelDef("UniqueWithCounts", kDeviceTypeCpu), MakeKernel<UniqueOp>);
  r->Register(KernelDef("Where", kDeviceTypeCpu)
                  .TypeConstraint("T", {DT_BOOL, DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16,
                                        DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32,
                                        DT_UINT32, DT_INT64, DT_UINT64, DT_COMPLEX64,
                                        DT_COMPLEX128}),
              MakeKernel<WhereOp>);
  r->Register(
      KernelDef("GatherV2", kDeviceTypeCpu).TypeConstraint("Tparams", PodAndStringTypes()),
      MakeKernel<GatherV2Op>);
  r->Register(KernelDef("Select", kDeviceTypeCpu).TypeConstraint("T", PodAndStringTypes()),
              MakeKernel<SelectOp>);
  r->Register(KernelDef("SelectV2", kDeviceTypeCpu).TypeConstraint("T", PodAndStringTypes()),
              MakeKernel<SelectV2Op>);
}

}  // namespace weft
