#include "ops/cpu/scatter_util.h"

#include <algorithm>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/state_update.h"
#include "runtime/core/types.h"

namespace weft {
namespace {

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

template <typename T>
absl::Status Apply(ScatterKind kind, Tensor* target,
                   const std::vector<int64_t>& offsets, int64_t slice,
                   const Tensor& updates) {
  const bool scalar = updates.dims() == 0;
  T* out = target->data<T>();
  const T* in = updates.data<T>();
  for (size_t i = 0; i < offsets.size(); ++i) {
    T* dst = out + offsets[i];
    for (int64_t j = 0; j < slice; ++j) {
      if (!Combine<T>(kind, dst + j, scalar ? in[0] : in[i * slice + j])) {
        return absl::InvalidArgumentError(absl::StrCat(
            "integer division by zero in updates[", i, "]"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplySlices(ScatterKind kind, Tensor* target,
                         const std::vector<int64_t>& offsets, int64_t slice,
                         const Tensor& updates, absl::string_view op) {
  if (offsets.empty() || slice == 0) return absl::OkStatus();
  if (kind == ScatterKind::kUpdate) {  // any dtype: element copies
    for (size_t i = 0; i < offsets.size(); ++i) {
      if (updates.dims() != 0) {
        CopyElements(updates, i * slice, *target, offsets[i], slice);
        continue;
      }
      for (int64_t j = 0; j < slice; ++j) {
        CopyElements(updates, 0, *target, offsets[i] + j, 1);
      }
    }
    return absl::OkStatus();
  }
  absl::Status s = absl::UnimplementedError(absl::StrCat(
      op, " is not supported for dtype ", DataTypeString(target->dtype())));
  WEFT_SWITCH_ALL_TYPES(
      target->dtype(),
      if constexpr ((std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) ||
                    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        s = Apply<T>(kind, target, offsets, slice, updates);
      },
      break);
  return s;
}

void ChangeRefInput(OpKernelContext* c, absl::string_view var_name,
                    const std::function<absl::Status(Tensor*)>& change) {
  OP_REQUIRES(c, c->input_is_ref(0),
              absl::InvalidArgumentError(absl::StrCat(
                  c->op_kernel().type_string(), "'s first input is not a reference")));
  {
    absl::MutexLock lock(c->input_ref_mutex(0));
    Tensor* var = c->mutable_input(0);
    OP_REQUIRES(c, var->IsInitialized(),
                absl::FailedPreconditionError(absl::StrCat(
                    "Attempting to use uninitialized value ", var_name)));
    OP_REQUIRES_OK(c, change(var));
  }
  c->forward_ref_input_to_ref_output(0, 0);
}

}  // namespace weft
