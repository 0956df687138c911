// ScatterUpdate, ScatterAdd, ScatterSub, ScatterMul, ScatterDiv, ScatterMin
// and ScatterMax on the CPU, and their ResourceScatter* forms: rows of a ref
// or resource variable (its first dimension)
// changed by the rows of `updates` that `indices` name, in order (a row
// named twice is changed twice), under the variable's mutex and copy on
// write (state_update.h). `updates` is indices.shape + var.shape[1:], or a
// scalar applied to every named row. Arithmetic on half and bfloat16 goes
// through float; complex variables are UNIMPLEMENTED.
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/resource_variable.h"
#include "ops/cpu/state_kernels.h"
#include "ops/cpu/state_update.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

enum class ScatterKind { kUpdate, kAdd, kSub, kMul, kDiv, kMin, kMax };

// x (op)= v for one element; false for an integer division by zero.
template <typename T>
bool Combine(ScatterKind kind, T* x, T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    float a = Float16ToFloat(*x);
    const float b = Float16ToFloat(v);
    switch (kind) {
      case ScatterKind::kAdd: a += b; break;
      case ScatterKind::kSub: a -= b; break;
      case ScatterKind::kMul: a *= b; break;
      case ScatterKind::kDiv: a /= b; break;
      case ScatterKind::kMin: a = std::min(a, b); break;
      case ScatterKind::kMax: a = std::max(a, b); break;
      case ScatterKind::kUpdate: a = b; break;
    }
    *x = FloatToFloat16<T>(a);
  } else if constexpr (std::is_integral_v<T>) {
    // Signed integers wrap, as TensorFlow's do.
    using U = std::make_unsigned_t<T>;
    const U a = static_cast<U>(*x), b = static_cast<U>(v);
    switch (kind) {
      case ScatterKind::kAdd: *x = static_cast<T>(a + b); break;
      case ScatterKind::kSub: *x = static_cast<T>(a - b); break;
      case ScatterKind::kMul: *x = static_cast<T>(a * b); break;
      case ScatterKind::kDiv:
        if (v == 0) return false;
        if constexpr (std::is_signed_v<T>) {
          if (v == -1) {  // the one quotient that overflows wraps
            *x = static_cast<T>(U{0} - a);
            break;
          }
        }
        *x = static_cast<T>(*x / v);
        break;
      case ScatterKind::kMin: *x = std::min(*x, v); break;
      case ScatterKind::kMax: *x = std::max(*x, v); break;
      case ScatterKind::kUpdate: *x = v; break;
    }
  } else {
    switch (kind) {
      case ScatterKind::kAdd: *x += v; break;
      case ScatterKind::kSub: *x -= v; break;
      case ScatterKind::kMul: *x *= v; break;
      case ScatterKind::kDiv: *x /= v; break;
      case ScatterKind::kMin: *x = std::min(*x, v); break;
      case ScatterKind::kMax: *x = std::max(*x, v); break;
      case ScatterKind::kUpdate: *x = v; break;
    }
  }
  return true;
}

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

template <typename T, typename Index>
absl::Status Apply(ScatterKind kind, Tensor* var, const Tensor& indices,
                   const Tensor& updates, int64_t row_size) {
  const Index* idx = indices.data<Index>();
  const bool scalar = updates.dims() == 0;
  T* out = var->data<T>();
  const T* in = updates.data<T>();
  for (int64_t i = 0; i < indices.NumElements(); ++i) {
    T* row = out + static_cast<int64_t>(idx[i]) * row_size;
    for (int64_t j = 0; j < row_size; ++j) {
      if (!Combine<T>(kind, row + j, scalar ? in[0] : in[i * row_size + j])) {
        return absl::InvalidArgumentError(absl::StrCat(
            "integer division by zero in updates[", i, "]"));
      }
    }
  }
  return absl::OkStatus();
}

// Apply with the indices' dtype chosen at run time.
template <typename T>
absl::Status ApplyTyped(ScatterKind kind, Tensor* var, const Tensor& indices,
                        const Tensor& updates, int64_t row_size) {
  if (indices.dtype() == DT_INT64) {
    return Apply<T, int64_t>(kind, var, indices, updates, row_size);
  }
  return Apply<T, int32_t>(kind, var, indices, updates, row_size);
}

// The scatter itself, on `var` (its mutex held exclusively): `var_name`
// and `op` name them in errors. A failed call leaves `var` unchanged except
// after an integer division by zero, which stops at that update.
absl::Status ScatterRows(ScatterKind kind, Tensor* var, const Tensor& indices,
                         const Tensor& updates, absl::string_view var_name,
                         absl::string_view op) {
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
  WEFT_RETURN_IF_ERROR(MakeBufferUnique(var));
  if (kind == ScatterKind::kUpdate) {
    // Any dtype: element copies, row by row (a scalar update repeated).
    for (int64_t i = 0; i < indices.NumElements(); ++i) {
      const int64_t row = int64_indices ? indices.data<int64_t>()[i]
                                        : indices.data<int32_t>()[i];
      if (updates.dims() != 0) {
        CopyElements(updates, i * row_size, *var, row * row_size, row_size);
        continue;
      }
      for (int64_t j = 0; j < row_size; ++j) {
        CopyElements(updates, 0, *var, row * row_size + j, 1);
      }
    }
    return absl::OkStatus();
  }
  absl::Status s = absl::UnimplementedError(absl::StrCat(
      op, " is not supported for dtype ", DataTypeString(var->dtype())));
  WEFT_SWITCH_ALL_TYPES(
      var->dtype(),
      if constexpr ((std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) ||
                    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        s = ApplyTyped<T>(kind, var, indices, updates, row_size);
      },
      break);
  return s;
}

// Scatter* on a ref variable (input 0), forwarded to output 0.
class ScatterOp : public OpKernel {
 public:
  ScatterOp(OpKernelConstruction* c, ScatterKind kind)
      : OpKernel(c),
        kind_(kind),
        var_name_(c->def().input_size() > 0 ? c->def().input(0) : "<unknown>") {}

  void Compute(OpKernelContext* c) override {
    OP_REQUIRES(c, c->input_is_ref(0),
                absl::InvalidArgumentError(absl::StrCat(
                    type_string(), "'s first input is not a reference")));
    {
      absl::MutexLock lock(c->input_ref_mutex(0));
      OP_REQUIRES_OK(c, ScatterRows(kind_, c->mutable_input(0), c->input(1),
                                    c->input(2), var_name_, type_string()));
    }
    c->forward_ref_input_to_ref_output(0, 0);
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
                                  c->input(2), label, type_string()));
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
