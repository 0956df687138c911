#include "ops/cpu/training_apply.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/optimizer_update.h"
#include "ops/cpu/state_update.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

template <typename T>
void Apply(Optimizer opt, bool nesterov, absl::Span<const OptimizerSlot> slots,
           absl::Span<const Tensor* const> scalars, const Tensor& grad) {
  const int64_t n = grad.NumElements();
  T s[6];
  for (size_t i = 0; i < scalars.size() && i < 6; ++i) {
    s[i] = scalars[i]->data<T>()[0];
  }
  if (opt == Optimizer::kMomentum) {
    MomentumUpdate(n, slots[0].tensor->data<T>(), slots[1].tensor->data<T>(),
                   grad.data<T>(), MomentumStep<T>{s[0], s[1]}, nesterov);
  } else {
    AdamUpdate(n, slots[0].tensor->data<T>(), slots[1].tensor->data<T>(),
               slots[2].tensor->data<T>(), grad.data<T>(),
               AdamStep<T>(s[0], s[1], s[2], s[3], s[4], s[5]), nesterov);
  }
}

// Sparse momentum, row by row as TensorFlow's SparseApplyMomentum:
// accum[r] = accum[r] * momentum + g; var[r] -= lr * accum[r] (Nesterov:
// var[r] -= lr * g + lr * momentum * accum[r]).
template <typename T>
void ApplySparseMomentum(bool nesterov, absl::Span<const OptimizerSlot> slots,
                         absl::Span<const Tensor* const> scalars, const Tensor& grad,
                         const std::vector<int64_t>& rows) {
  const T lr = scalars[0]->data<T>()[0];
  const T momentum = scalars[1]->data<T>()[0];
  T* var = slots[0].tensor->data<T>();
  T* accum = slots[1].tensor->data<T>();
  const T* g = grad.data<T>();
  const int64_t width = rows.empty() ? 0 : grad.NumElements() / static_cast<int64_t>(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    T* v = var + rows[i] * width;
    T* a = accum + rows[i] * width;
    const T* gi = g + static_cast<int64_t>(i) * width;
    for (int64_t j = 0; j < width; ++j) {
      a[j] = a[j] * momentum + gi[j];
      if (nesterov) {
        v[j] -= gi[j] * lr + a[j] * momentum * lr;
      } else {
        v[j] -= a[j] * lr;
      }
    }
  }
}

const char* const kMomentumScalars[] = {"lr", "momentum"};
const char* const kAdamScalars[] = {"beta1_power", "beta2_power", "lr",
                                    "beta1", "beta2", "epsilon"};

}  // namespace

DataTypeVector OptimizerTypes() { return {DT_FLOAT, DT_DOUBLE}; }

absl::Status CheckOptimizerInputs(absl::Span<const OptimizerSlot> slots,
                                  absl::Span<const Tensor* const> scalars,
                                  absl::Span<const char* const> scalar_names,
                                  const Tensor& grad, const Tensor* indices,
                                  std::vector<int64_t>* rows) {
  const DataType dtype = grad.dtype();
  if (dtype != DT_FLOAT && dtype != DT_DOUBLE) {
    return absl::UnimplementedError(absl::StrCat(
        "optimizer updates support float and double, not ",
        DataTypeString(dtype)));
  }
  for (const OptimizerSlot& slot : slots) {
    if (!slot.tensor->IsInitialized()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Attempting to use uninitialized value ", slot.name));
    }
    if (slot.tensor->dtype() != dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "variable ", slot.name, " has dtype ",
          DataTypeString(slot.tensor->dtype()), " but the gradient has dtype ",
          DataTypeString(dtype)));
    }
    if (indices != nullptr) {
      if (slot.tensor->shape() != slots[0].tensor->shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "variable ", slot.name, " has shape ", slot.tensor->shape().DebugString(),
            " but ", slots[0].name, " has shape ",
            slots[0].tensor->shape().DebugString()));
      }
      continue;
    }
    if (slot.tensor->shape() != grad.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "variable ", slot.name, " has shape ",
          slot.tensor->shape().DebugString(), " but ", slots[0].name,
          "'s gradient has shape ", grad.shape().DebugString(),
          "; var, its slots and grad must have the same shape"));
    }
  }
  for (size_t i = 0; i < scalars.size(); ++i) {
    if (scalars[i]->dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          scalar_names[i], " is not a scalar: ", scalars[i]->shape().DebugString(),
          " (updating ", slots[0].name, ")"));
    }
  }
  rows->clear();
  if (indices == nullptr) return absl::OkStatus();
  const Tensor& var = *slots[0].tensor;
  if (indices->dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "indices must be one-dimensional, got shape ", indices->shape().DebugString()));
  }
  TensorShape want({indices->dim_size(0)});
  for (int d = 1; d < var.dims(); ++d) want.AddDim(var.dim_size(d));
  if (var.dims() < 1 || grad.shape() != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "grad must be [indices.size] + var.shape[1:] = ", want.DebugString(),
        " for ", slots[0].name, " of shape ", var.shape().DebugString(), ", got ",
        grad.shape().DebugString()));
  }
  for (int64_t i = 0; i < indices->NumElements(); ++i) {
    const int64_t r = indices->dtype() == DT_INT64 ? indices->data<int64_t>()[i]
                                                   : indices->data<int32_t>()[i];
    if (r < 0 || r >= var.dim_size(0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Index ", r, " at offset ", i, " in indices is out of range (",
          slots[0].name, " has ", var.dim_size(0), " rows)"));
    }
    rows->push_back(r);
  }
  return absl::OkStatus();
}

absl::Status ApplyOptimizer(Optimizer opt, bool use_nesterov,
                            absl::Span<const OptimizerSlot> slots,
                            absl::Span<const Tensor* const> scalars,
                            const Tensor& grad, const Tensor* indices) {
  const bool momentum = opt == Optimizer::kMomentum;
  if (indices != nullptr && !momentum) {
    return absl::InternalError("ApplyOptimizer: sparse updates are momentum's only");
  }
  const size_t want_slots = momentum ? 2 : 3;
  const size_t want_scalars = momentum ? 2 : 6;
  if (slots.size() != want_slots || scalars.size() != want_scalars) {
    return absl::InternalError("ApplyOptimizer: wrong number of slots");
  }
  std::vector<int64_t> rows;
  WEFT_RETURN_IF_ERROR(CheckOptimizerInputs(
      slots, scalars,
      momentum ? absl::MakeConstSpan(kMomentumScalars) : absl::MakeConstSpan(kAdamScalars),
      grad, indices, &rows));
  for (const OptimizerSlot& slot : slots) {
    absl::Status s = PrepareToWrite(slot.tensor, slot.writes);
    if (!s.ok()) return s;
  }
  if (indices != nullptr) {
    if (grad.dtype() == DT_FLOAT) {
      ApplySparseMomentum<float>(use_nesterov, slots, scalars, grad, rows);
    } else {
      ApplySparseMomentum<double>(use_nesterov, slots, scalars, grad, rows);
    }
    return absl::OkStatus();
  }
  if (grad.dtype() == DT_FLOAT) {
    Apply<float>(opt, use_nesterov, slots, scalars, grad);
  } else {
    Apply<double>(opt, use_nesterov, slots, scalars, grad);
  }
  return absl::OkStatus();
}

OptimizerInputs OptimizerInputsOf(OpKernelContext* c, Optimizer opt, bool sparse) {
  OptimizerInputs in;
  if (sparse) {
    in.scalars = {&c->input(2), &c->input(5)};
    in.grad = &c->input(3);
    in.indices = &c->input(4);
  } else if (opt == Optimizer::kMomentum) {
    in.scalars = {&c->input(2), &c->input(4)};
    in.grad = &c->input(3);
  } else {
    for (int i = 0; i < 6; ++i) in.scalars.push_back(&c->input(3 + i));
    in.grad = &c->input(9);
  }
  return in;
}

SlotLocks::SlotLocks(std::vector<absl::Mutex*> mus) : mus_(std::move(mus)) {
  std::sort(mus_.begin(), mus_.end());
  mus_.erase(std::unique(mus_.begin(), mus_.end()), mus_.end());
  for (absl::Mutex* mu : mus_) {
    if (mu != nullptr) mu->Lock();
  }
}

SlotLocks::~SlotLocks() {
  for (auto it = mus_.rbegin(); it != mus_.rend(); ++it) {
    if (*it != nullptr) (*it)->Unlock();
  }
}

}  // namespace weft
