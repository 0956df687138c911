// ScatterUpdate, ScatterAdd, ScatterSub, ScatterMul, ScatterDiv, ScatterMin
// and ScatterMax on the CPU, and their ResourceScatter* forms: rows of a ref
// or resource variable (its first dimension)
// changed by the rows of `updates` that `indices` name, in order (a row
// named twice is changed twice), under the variable's mutex: in place for
// a ref variable, copy on write for a resource one (state_update.h). `updates` is indices.shape + var.shape[1:], or a
// scalar applied to every named row. Arithmetic on half and bfloat16 goes
// through float; complex variables are UNIMPLEMENTED.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/resource_variable.h"
#include "ops/cpu/scatter_util.h"
#include "ops/cpu/state_kernels.h"
#include "ops/cpu/state_update.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

template <typename Index>
absl::Status CheckIndices(const Tensor& indices, int64_t rows) {
  const Index* idx = indices.data<Index>();
  for (int64_t i = 0; i < indices.NumElements(); ++i) {
    if (idx[i] < 0 || idx[i] >= rows) {
      return absl::InvalidArgumentError(absl::StrCat(
          "indices[", i, "] = ", idx[i], " is not in [0, ", rows, ")"));
    }
  }
  return absl::OkStatus();
}

// The scatter itself, on `var` (its mutex held exclusively), writing as
// the variable's kind does (`writes`): `var_name` and `op` name them in
// errors. A failed call leaves `var` unchanged except
// after an integer division by zero, which stops at that update.
absl::Status ScatterRows(ScatterKind kind, Tensor* var, const Tensor& indices,
                         const Tensor& updates, absl::string_view var_name,
                         absl::string_view op, Writes writes) {
  if (!var->IsInitialized()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "Attempting to use uninitialized value ", var_name));
  }
  if (var->dims() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the variable must be at least 1-D, got shape ",
        var->shape().DebugString()));
  }
  if (updates.dtype() != var->dtype()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "updates are ", DataTypeString(updates.dtype()), ", the variable ",
        DataTypeString(var->dtype())));
  }
  TensorShape want = indices.shape();
  for (int d = 1; d < var->dims(); ++d) want.AddDim(var->dim_size(d));
  if (updates.dims() != 0 && updates.shape() != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Must have updates.shape = indices.shape + params.shape[1:] or "
        "updates.shape = [], got updates.shape ", updates.shape().DebugString(),
        ", indices.shape ", indices.shape().DebugString(), ", params.shape ",
        var->shape().DebugString()));
  }
  const int64_t rows = var->dim_size(0);
  const int64_t row_size = rows == 0 ? 0 : var->NumElements() / rows;
  const bool int64_indices = indices.dtype() == DT_INT64;
  WEFT_RETURN_IF_ERROR(int64_indices ? CheckIndices<int64_t>(indices, rows)
                                     : CheckIndices<int32_t>(indices, rows));
  if (indices.NumElements() == 0 || row_size == 0) return absl::OkStatus();
  WEFT_RETURN_IF_ERROR(PrepareToWrite(var, writes));
  std::vector<int64_t> offsets(indices.NumElements());
  for (int64_t i = 0; i < indices.NumElements(); ++i) {
    offsets[i] = row_size * (int64_indices ? indices.data<int64_t>()[i]
                                           : indices.data<int32_t>()[i]);
  }
  return ApplySlices(kind, var, offsets, row_size, updates, op);
}

// Scatter* on a ref variable (input 0), forwarded to output 0.
class ScatterOp : public OpKernel {
 public:
  ScatterOp(OpKernelConstruction* c, ScatterKind kind)
      : OpKernel(c),
        kind_(kind),
        var_name_(c->def().input_size() > 0 ? c->def().input(0) : "<unknown>") {}

  void Compute(OpKernelContext* c) override {
    ChangeRefInput(c, var_name_, [&](Tensor* var) {
      return ScatterRows(kind_, var, c->input(1), c->input(2), var_name_, type_string(),
                         Writes::kInPlace);
    });
  }

 private:
  const ScatterKind kind_;
  const std::string var_name_;
};

// ResourceScatter* on the resource variable input 0 names; no outputs.
class ResourceScatterOp : public OpKernel {
 public:
  ResourceScatterOp(OpKernelConstruction* c, ScatterKind kind)
      : OpKernel(c), kind_(kind) {
    c->SetStatus(c->GetAttr("dtype", &dtype_));
  }

  void Compute(OpKernelContext* c) override {
    std::string label;
    absl::StatusOr<std::shared_ptr<Var>> var =
        LookupVarInput(c, 0, dtype_, "update", &label);
    OP_REQUIRES_OK(c, var.status());
    absl::MutexLock lock((*var)->mu());
    OP_REQUIRES_OK(c, ScatterRows(kind_, (*var)->tensor(), c->input(1),
                                  c->input(2), label, type_string(),
                                  Writes::kCopyOnWrite));
  }

 private:
  const ScatterKind kind_;
  DataType dtype_ = DT_INVALID;
};

template <typename K, ScatterKind kKind>
std::unique_ptr<OpKernel> MakeScatter(OpKernelConstruction* c) {
  return std::make_unique<K>(c, kKind);
}

}  // namespace

void RegisterScatterKernels(KernelRegistry* r) {
  struct Kind {
    const char* name;
    std::unique_ptr<OpKernel> (*ref)(OpKernelConstruction*);
    std::unique_ptr<OpKernel> (*resource)(OpKernelConstruction*);
  };
  using K = ScatterKind;
  for (const Kind& k : {
           Kind{"Update", MakeScatter<ScatterOp, K::kUpdate>, MakeScatter<ResourceScatterOp, K::kUpdate>},
           Kind{"Add", MakeScatter<ScatterOp, K::kAdd>, MakeScatter<ResourceScatterOp, K::kAdd>},
           Kind{"Sub", MakeScatter<ScatterOp, K::kSub>, MakeScatter<ResourceScatterOp, K::kSub>},
           Kind{"Mul", MakeScatter<ScatterOp, K::kMul>, MakeScatter<ResourceScatterOp, K::kMul>},
           Kind{"Div", MakeScatter<ScatterOp, K::kDiv>, MakeScatter<ResourceScatterOp, K::kDiv>},
           Kind{"Min", MakeScatter<ScatterOp, K::kMin>, MakeScatter<ResourceScatterOp, K::kMin>},
           Kind{"Max", MakeScatter<ScatterOp, K::kMax>, MakeScatter<ResourceScatterOp, K::kMax>}}) {
    r->Register(KernelDef(absl::StrCat("Scatter", k.name), kDeviceTypeCpu), k.ref);
    r->Register(KernelDef(absl::StrCat("ResourceScatter", k.name), kDeviceTypeCpu),
                k.resource);
  }
}

}  // namespace weft
