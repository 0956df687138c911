#include "ops/cpu/training_apply.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ops/cpu/optimizer_update.h"
#include "ops/cpu/state_update.h"

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

const char* const kMomentumScalars[] = {"lr", "momentum"};
const char* const kAdamScalars[] = {"beta1_power", "beta2_power", "lr",
                                    "beta1", "beta2", "epsilon"};

}  // namespace

DataTypeVector OptimizerTypes() { return {DT_FLOAT, DT_DOUBLE}; }

absl::Status ApplyOptimizer(Optimizer opt, bool use_nesterov,
                            absl::Span<const OptimizerSlot> slots,
                            absl::Span<const Tensor* const> scalars,
                            const Tensor& grad) {
  const bool momentum = opt == Optimizer::kMomentum;
  const size_t want_slots = momentum ? 2 : 3;
  const size_t want_scalars = momentum ? 2 : 6;
  if (slots.size() != want_slots || scalars.size() != want_scalars) {
    return absl::InternalError("ApplyOptimizer: wrong number of slots");
  }
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
    if (slot.tensor->shape() != grad.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "variable ", slot.name, " has shape ",
          slot.tensor->shape().DebugString(), " but ", slots[0].name,
          "'s gradient has shape ", grad.shape().DebugString(),
          "; var, its slots and grad must have the same shape"));
    }
  }
  for (size_t i = 0; i < scalars.size(); ++i) {
    const char* name = momentum ? kMomentumScalars[i] : kAdamScalars[i];
    if (scalars[i]->dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, " is not a scalar: ", scalars[i]->shape().DebugString(),
          " (updating ", slots[0].name, ")"));
    }
  }
  for (const OptimizerSlot& slot : slots) {
    absl::Status s = MakeBufferUnique(slot.tensor);
    if (!s.ok()) return s;
  }
  if (dtype == DT_FLOAT) {
    Apply<float>(opt, use_nesterov, slots, scalars, grad);
  } else {
    Apply<double>(opt, use_nesterov, slots, scalars, grad);
  }
  return absl::OkStatus();
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
