#include "ops/cpu/training_apply.h"

#include <algorithm>
#include <complex>
#include <functional>
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

// Adam on complex numbers, with TensorFlow's Eigen expressions for them:
// v follows g * g (not |g|^2), and the complex square root divides.
//   alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
//   m += (g - m) * (1 - beta1); v += (g * g - v) * (1 - beta2)
//   var -= m * alpha / (sqrt(v) + epsilon)
//   (Nesterov: (g * (1 - beta1) + beta1 * m) * alpha in place of m * alpha)
template <typename T>
void ComplexAdam(bool nesterov, absl::Span<const OptimizerSlot> slots,
                 absl::Span<const Tensor* const> scalars, const Tensor& grad) {
  T k[6];
  for (int i = 0; i < 6; ++i) k[i] = scalars[i]->data<T>()[0];
  const T one(1);
  const T alpha = k[2] * std::sqrt(one - k[1]) / (one - k[0]);
  const T beta1 = k[3], eps = k[5];
  T* var = slots[0].tensor->data<T>();
  T* m = slots[1].tensor->data<T>();
  T* v = slots[2].tensor->data<T>();
  const T* g = grad.data<T>();
  for (int64_t i = 0; i < grad.NumElements(); ++i) {
    m[i] += (g[i] - m[i]) * (one - beta1);
    v[i] += (g[i] * g[i] - v[i]) * (one - k[4]);
    const T step = nesterov ? (g[i] * (one - beta1) + beta1 * m[i]) * alpha
                            : m[i] * alpha;
    var[i] -= step / (std::sqrt(v[i]) + eps);
  }
}

bool IsHalfOrBFloat16(DataType t) { return t == DT_HALF || t == DT_BFLOAT16; }

// t's values as float (t: half or bfloat16).
Tensor Widen(const Tensor& t) {
  Tensor f(DT_FLOAT, t.shape());
  float* out = f.data<float>();
  const int64_t n = t.NumElements();
  if (t.dtype() == DT_HALF) {
    const Half* in = t.data<Half>();
    for (int64_t i = 0; i < n; ++i) out[i] = HalfToFloat(in[i]);
  } else {
    const BFloat16* in = t.data<BFloat16>();
    for (int64_t i = 0; i < n; ++i) out[i] = BFloat16ToFloat(in[i]);
  }
  return f;
}

// Rounds float `f` into `t` (half or bfloat16, same element count).
void Narrow(const Tensor& f, Tensor* t) {
  const float* in = f.data<float>();
  const int64_t n = t->NumElements();
  if (t->dtype() == DT_HALF) {
    Half* out = t->data<Half>();
    for (int64_t i = 0; i < n; ++i) out[i] = FloatToHalf(in[i]);
  } else {
    BFloat16* out = t->data<BFloat16>();
    for (int64_t i = 0; i < n; ++i) out[i] = FloatToBFloat16(in[i]);
  }
}

const char* const kMomentumScalars[] = {"lr", "momentum"};
const char* const kAdamScalars[] = {"beta1_power", "beta2_power", "lr",
                                    "beta1", "beta2", "epsilon"};

}  // namespace

DataTypeVector OptimizerTypes() {
  return {DT_HALF,   DT_BFLOAT16,  DT_FLOAT,
          DT_DOUBLE, DT_COMPLEX64, DT_COMPLEX128};
}

absl::Status ApplyInFloat(absl::Span<const OptimizerSlot> slots,
                          absl::Span<const Tensor* const> scalars,
                          const Tensor& grad, const FloatOptimizerApply& apply) {
  std::vector<Tensor> wide;
  wide.reserve(slots.size() + scalars.size() + 1);
  std::vector<OptimizerSlot> wide_slots;
  for (const OptimizerSlot& slot : slots) {
    wide.push_back(Widen(*slot.tensor));
    wide_slots.push_back({&wide.back(), slot.name, Writes::kInPlace});
  }
  std::vector<const Tensor*> wide_scalars;
  for (const Tensor* scalar : scalars) {
    wide.push_back(Widen(*scalar));
    wide_scalars.push_back(&wide.back());
  }
  wide.push_back(Widen(grad));
  WEFT_RETURN_IF_ERROR(apply(wide_slots, wide_scalars, wide.back()));
  for (size_t i = 0; i < slots.size(); ++i) {
    Narrow(*wide_slots[i].tensor, slots[i].tensor);
  }
  return absl::OkStatus();
}

absl::Status CheckOptimizerInputs(absl::Span<const OptimizerSlot> slots,
                                  absl::Span<const Tensor* const> scalars,
                                  absl::Span<const char* const> scalar_names,
                                  const Tensor& grad, const Tensor* indices,
                                  std::vector<int64_t>* rows) {
  const DataType dtype = grad.dtype();
  const DataTypeVector supported = OptimizerTypes();
  if (std::find(supported.begin(), supported.end(), dtype) == supported.end()) {
    return absl::UnimplementedError(absl::StrCat(
        "optimizer updates support half, bfloat16, float, double and "
        "complex, not ",
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
  const DataType dtype = grad.dtype();
  if (IsHalfOrBFloat16(dtype)) {
    return ApplyInFloat(
        slots, scalars, grad,
        [&](absl::Span<const OptimizerSlot> s,
            absl::Span<const Tensor* const> k, const Tensor& g) {
          return ApplyOptimizer(opt, use_nesterov, s, k, g, indices);
        });
  }
  if (dtype == DT_COMPLEX64 || dtype == DT_COMPLEX128) {
    // Dense momentum is the sparse loop over one row holding everything.
    const std::vector<int64_t> all = {0};
    const bool c64 = dtype == DT_COMPLEX64;
    if (!momentum) {
      c64 ? ComplexAdam<std::complex<float>>(use_nesterov, slots, scalars, grad)
          : ComplexAdam<std::complex<double>>(use_nesterov, slots, scalars, grad);
    } else if (c64) {
      ApplySparseMomentum<std::complex<float>>(
          use_nesterov, slots, scalars, grad, indices != nullptr ? rows : all);
    } else {
      ApplySparseMomentum<std::complex<double>>(
          use_nesterov, slots, scalars, grad, indices != nullptr ? rows : all);
    }
    return absl::OkStatus();
  }
  if (indices != nullptr) {
    if (dtype == DT_FLOAT) {
      ApplySparseMomentum<float>(use_nesterov, slots, scalars, grad, rows);
    } else {
      ApplySparseMomentum<double>(use_nesterov, slots, scalars, grad, rows);
    }
    return absl::OkStatus();
  }
  if (dtype == DT_FLOAT) {
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
