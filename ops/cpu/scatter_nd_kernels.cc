// N-dimensional gathers and scatters on the CPU (ops/scatter_nd_ops.cc):
// GatherNd and ResourceGatherNd read the slices `indices` names; ScatterNd
// adds updates into zeros; TensorScatter* and ScatterNdNonAliasingAdd
// change a copy of their input; ScatterNd* (ref) and ResourceScatterNd*
// change a variable under its mutex (in place for a ref variable, copy on
// write for a resource one: state_update.h). The element work is
// scatter_util.h's, so a slice named twice is changed twice, in order.
//
// An index outside the tensor is INVALID_ARGUMENT naming it (nothing is
// changed), unless bad_indices_policy is "IGNORE": then a gather gives
// zeros for it and a scatter skips it, as in TensorFlow.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/index_name.h"
#include "ops/cpu/resource_variable.h"
#include "ops/cpu/scatter_util.h"
#include "ops/cpu/state_update.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// bad_indices_policy: "" and "DEFAULT" and "ERROR" refuse, "IGNORE" skips.
absl::StatusOr<bool> IgnoresBadIndices(OpKernelConstruction* c) {
  if (!c->HasAttr("bad_indices_policy")) return false;
  std::string policy;
  WEFT_RETURN_IF_ERROR(c->GetAttr("bad_indices_policy", &policy));
  if (policy.empty() || policy == "DEFAULT" || policy == "ERROR") return false;
  if (policy == "IGNORE") return true;
  return absl::InvalidArgumentError(absl::StrCat(
      "bad_indices_policy must be '', DEFAULT, ERROR or IGNORE, not '", policy, "'"));
}

// Element i of an integer index tensor.
int64_t IndexAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DT_INT16: return t.data<int16_t>()[i];
    case DT_UINT16: return t.data<uint16_t>()[i];
    case DT_INT32: return t.data<int32_t>()[i];
    default: return t.data<int64_t>()[i];
  }
}

// The slices `indices` ([..., K]) names in a tensor of `shape`: the element
// offset of each row's slice (-1 for a row ignored as out of range), and
// the slice's size (the elements of shape[K:]).
struct Slices {
  std::vector<int64_t> offsets;
  int64_t size = 1;
  int depth = 0;  // K
};

// indices' dims but the last: one row of indices per element.
TensorShape RowsShape(const Tensor& indices) {
  TensorShape rows;
  for (int d = 0; d + 1 < indices.dims(); ++d) rows.AddDim(indices.dim_size(d));
  return rows;
}

absl::StatusOr<Slices> SlicesOf(const Tensor& indices, const TensorShape& shape,
                                bool ignore_bad, absl::string_view shape_word) {
  if (indices.dims() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "indices must be at least a vector, got shape ", indices.shape().DebugString()));
  }
  if (indices.dtype() != DT_INT16 && indices.dtype() != DT_UINT16 &&
      indices.dtype() != DT_INT32 && indices.dtype() != DT_INT64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "indices must be int16, uint16, int32 or int64, not ",
        DataTypeString(indices.dtype())));
  }
  Slices s;
  const int64_t k = indices.dim_size(indices.dims() - 1);
  if (k > shape.dims()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "index innermost dimension length must be <= params rank; saw: ", k,
        " vs. ", shape.dims()));
  }
  s.depth = static_cast<int>(k);
  for (int d = s.depth; d < shape.dims(); ++d) s.size *= shape.dim_size(d);
  // One row per element of indices.shape[:-1] (with K = 0, each names the
  // whole tensor).
  int64_t rows = 1;
  for (int d = 0; d + 1 < indices.dims(); ++d) rows *= indices.dim_size(d);
  s.offsets.resize(rows);
  for (int64_t r = 0; r < static_cast<int64_t>(s.offsets.size()); ++r) {
    int64_t offset = 0;
    bool inside = true;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t v = IndexAt(indices, r * k + j);
      const int64_t dim = shape.dim_size(static_cast<int>(j));
      if (v < 0 || v >= dim) inside = false;
      offset = offset * dim + v;
    }
    if (inside) {
      s.offsets[r] = offset * s.size;
      continue;
    }
    if (ignore_bad) {
      s.offsets[r] = -1;
      continue;
    }
    std::vector<int64_t> row;
    for (int64_t j = 0; j < k; ++j) row.push_back(IndexAt(indices, r * k + j));
    return absl::InvalidArgumentError(absl::StrCat(
        "indices", IndexName(RowsShape(indices), r), " = [", absl::StrJoin(row, ", "),
        "] does not index into ", shape_word, " ", shape.DebugString()));
  }
  return s;
}

// The rows that are not ignored, and the matching updates' slice numbers.
void KeepInside(Slices* s, std::vector<int64_t>* rows) {
  std::vector<int64_t> kept;
  for (size_t r = 0; r < s->offsets.size(); ++r) {
    if (s->offsets[r] < 0) continue;
    kept.push_back(s->offsets[r]);
    rows->push_back(static_cast<int64_t>(r));
  }
  s->offsets = std::move(kept);
}

// updates must be indices.shape[:-1] + shape[K:].
absl::Status CheckUpdates(const Tensor& indices, const Tensor& updates,
                          const TensorShape& shape, int depth) {
  const int outer = indices.dims() - 1;
  bool outer_ok = updates.dims() >= outer;
  for (int d = 0; outer_ok && d < outer; ++d) {
    outer_ok = updates.dim_size(d) == indices.dim_size(d);
  }
  if (!outer_ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Dimensions [0,", outer, ") of indices[shape=", indices.shape().DebugString(),
        "] must match dimensions [0,", outer, ") of updates[shape=",
        updates.shape().DebugString(), "]"));
  }
  const int inner = shape.dims() - depth;
  bool inner_ok = updates.dims() - outer == inner;
  for (int d = 0; inner_ok && d < inner; ++d) {
    inner_ok = updates.dim_size(outer + d) == shape.dim_size(depth + d);
  }
  if (!inner_ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "The inner ", inner, " dimensions of output.shape=", shape.DebugString(),
        " must match the inner ", inner, " dimensions of updates.shape=",
        updates.shape().DebugString()));
  }
  return absl::OkStatus();
}

// target (kind)= the slices of updates that indices names. On error
// nothing is changed (except after an integer division by zero).
absl::Status ScatterNdInto(ScatterKind kind, Tensor* target, const Tensor& indices,
                           const Tensor& updates, bool ignore_bad,
                           absl::string_view op) {
  if (updates.dtype() != target->dtype()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "updates are ", DataTypeString(updates.dtype()), ", the tensor ",
        DataTypeString(target->dtype())));
  }
  WEFT_ASSIGN_OR_RETURN(Slices s, SlicesOf(indices, target->shape(), ignore_bad, "shape"));
  WEFT_RETURN_IF_ERROR(CheckUpdates(indices, updates, target->shape(), s.depth));
  if (!ignore_bad) return ApplySlices(kind, target, s.offsets, s.size, updates, op);
  // Skip the ignored rows: apply the rest one by one against their own
  // slice of updates.
  std::vector<int64_t> rows;
  KeepInside(&s, &rows);
  for (size_t i = 0; i < rows.size(); ++i) {
    Tensor one(updates.dtype(), TensorShape({s.size}));
    CopyElements(updates, rows[i] * s.size, one, 0, s.size);
    WEFT_RETURN_IF_ERROR(ApplySlices(kind, target, {s.offsets[i]}, s.size, one, op));
  }
  return absl::OkStatus();
}

// Output 0 = the slices of `params` that indices names (zeros for ignored
// rows).
absl::Status GatherNdInto(OpKernelContext* c, const Tensor& params,
                          const Tensor& indices, bool ignore_bad) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < indices.dims(); ++d) rows *= indices.dim_size(d);
  if (rows > 0 && params.NumElements() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Requested more than 0 entries, but params is empty.  Params shape: ",
        params.shape().DebugString()));
  }
  WEFT_ASSIGN_OR_RETURN(Slices s, SlicesOf(indices, params.shape(), ignore_bad,
                                           "param shape"));
  TensorShape out_shape;
  for (int d = 0; d + 1 < indices.dims(); ++d) out_shape.AddDim(indices.dim_size(d));
  for (int d = s.depth; d < params.dims(); ++d) out_shape.AddDim(params.dim_size(d));
  Tensor* out;
  WEFT_RETURN_IF_ERROR(c->allocate_output(0, out_shape, &out));
  if (out->NumElements() == 0) return absl::OkStatus();
  for (size_t r = 0; r < s.offsets.size(); ++r) {
    if (s.offsets[r] >= 0) {
      CopyElements(params, s.offsets[r], *out, r * s.size, s.size);
      continue;
    }
    VisitStorage(out->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::fill_n(out->data<T>() + r * s.size, s.size, T{});
    });
  }
  return absl::OkStatus();
}

class NdKernel : public OpKernel {
 public:
  explicit NdKernel(OpKernelConstruction* c) : OpKernel(c) {
    absl::StatusOr<bool> ignore = IgnoresBadIndices(c);
    if (!ignore.ok()) {
      c->SetStatus(ignore.status());
      return;
    }
    ignore_bad_ = *ignore;
  }

 protected:
  bool ignore_bad_ = false;
};

class GatherNdOp : public NdKernel {
 public:
  using NdKernel::NdKernel;
  void Compute(OpKernelContext* c) override {
    OP_REQUIRES_OK(c, GatherNdInto(c, c->input(0), c->input(1), ignore_bad_));
  }
};

class ResourceGatherNdOp : public NdKernel {
 public:
  explicit ResourceGatherNdOp(OpKernelConstruction* c) : NdKernel(c) {
    c->SetStatus(c->GetAttr("dtype", &dtype_));
  }
  void Compute(OpKernelContext* c) override {
    std::string label;
    absl::StatusOr<Tensor> params = ReadVariable(c, 0, dtype_, &label);
    OP_REQUIRES_OK(c, params.status());
    absl::Status s = GatherNdInto(c, *params, c->input(1), ignore_bad_);
    OP_REQUIRES(c, s.ok(), absl::Status(s.code(), absl::StrCat(
                               s.message(), " (gathering from ", label, ")")));
  }

 private:
  DataType dtype_ = DT_INVALID;
};

// ScatterNd: zeros of `shape` plus the updates.
class ScatterNdOp : public NdKernel {
 public:
  using NdKernel::NdKernel;
  void Compute(OpKernelContext* c) override {
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(c, ReadIntVector(c->input(2), "shape", &dims));
    TensorShape shape;
    OP_REQUIRES_OK(c, ShapeFromDims(dims, "shape", &shape));
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    VisitStorage(out->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::fill_n(out->data<T>(), out->NumElements(), T{});
    });
    OP_REQUIRES_OK(c, ScatterNdInto(ScatterKind::kAdd, out, c->input(0), c->input(1),
                                    ignore_bad_, type_string()));
  }
};

// TensorScatter* and ScatterNdNonAliasingAdd: a changed copy of input 0.
class TensorScatterOp : public NdKernel {
 public:
  TensorScatterOp(OpKernelConstruction* c, ScatterKind kind) : NdKernel(c), kind_(kind) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    CopyElements(in, 0, *out, 0, in.NumElements());
    OP_REQUIRES_OK(c, ScatterNdInto(kind_, out, c->input(1), c->input(2), ignore_bad_,
                                    type_string()));
  }

 private:
  const ScatterKind kind_;
};

// ScatterNd{Update,Add,Sub,Min,Max} on a ref variable, forwarded.
class ScatterNdRefOp : public NdKernel {
 public:
  ScatterNdRefOp(OpKernelConstruction* c, ScatterKind kind)
      : NdKernel(c),
        kind_(kind),
        var_name_(c->def().input_size() > 0 ? c->def().input(0) : "<unknown>") {}
  void Compute(OpKernelContext* c) override {
    // The checks come before any change, so a refusal changes no value.
    ChangeRefInput(c, var_name_, [&](Tensor* var) {
      WEFT_RETURN_IF_ERROR(PrepareToWrite(var, Writes::kInPlace));
      return ScatterNdInto(kind_, var, c->input(1), c->input(2), ignore_bad_, type_string());
    });
  }

 private:
  const ScatterKind kind_;
  const std::string var_name_;
};

// ResourceScatterNd{Update,Add,Sub,Min,Max}.
class ResourceScatterNdOp : public NdKernel {
 public:
  ResourceScatterNdOp(OpKernelConstruction* c, ScatterKind kind) : NdKernel(c), kind_(kind) {
    c->SetStatus(c->GetAttr("T", &dtype_));
  }
  void Compute(OpKernelContext* c) override {
    std::string label;
    absl::StatusOr<std::shared_ptr<Var>> var = LookupVarInput(c, 0, dtype_, "update", &label);
    OP_REQUIRES_OK(c, var.status());
    absl::MutexLock lock((*var)->mu());
    Tensor* t = (*var)->tensor();
    OP_REQUIRES(c, t->IsInitialized(),
                absl::FailedPreconditionError(absl::StrCat(
                    "Attempting to use uninitialized value ", label)));
    OP_REQUIRES_OK(c, PrepareToWrite(t, Writes::kCopyOnWrite));
    absl::Status s = ScatterNdInto(kind_, t, c->input(1), c->input(2), ignore_bad_,
                                   type_string());
    OP_REQUIRES(c, s.ok(), absl::Status(s.code(), absl::StrCat(s.message(), " (updating ",
                                                               label, ")")));
  }

 private:
  const ScatterKind kind_;
  DataType dtype_ = DT_INVALID;
};

}  // namespace

void RegisterScatterNdKernels(KernelRegistry* r) {
  r->Register(KernelDef("GatherNd", kDeviceTypeCpu), MakeKernel<GatherNdOp>);
  r->Register(KernelDef("ResourceGatherNd", kDeviceTypeCpu), MakeKernel<ResourceGatherNdOp>);
  r->Register(KernelDef("ScatterNd", kDeviceTypeCpu), MakeKernel<ScatterNdOp>);
  r->Register(KernelDef("ScatterNdNonAliasingAdd", kDeviceTypeCpu),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<TensorScatterOp>(c, ScatterKind::kAdd);
              });
  struct Kind {
    const char* name;
    ScatterKind kind;
  };
  for (const Kind& k : {Kind{"Update", ScatterKind::kUpdate}, Kind{"Add", ScatterKind::kAdd},
                        Kind{"Sub", ScatterKind::kSub}, Kind{"Min", ScatterKind::kMin},
                        Kind{"Max", ScatterKind::kMax}}) {
    const ScatterKind kind = k.kind;
    r->Register(KernelDef(absl::StrCat("TensorScatter", k.name), kDeviceTypeCpu),
                [kind](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                  return std::make_unique<TensorScatterOp>(c, kind);
                });
    r->Register(KernelDef(absl::StrCat("ScatterNd", k.name), kDeviceTypeCpu),
                [kind](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                  return std::make_unique<ScatterNdRefOp>(c, kind);
                });
    r->Register(KernelDef(absl::StrCat("ResourceScatterNd", k.name), kDeviceTypeCpu),
                [kind](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                  return std::make_unique<ResourceScatterNdOp>(c, kind);
                });
  }
}

}  // namespace weft
