// The minval and maxval inputs of the integer random ops (RandomUniformInt,
// StatelessRandomUniformInt and its V2), checked as TensorFlow checks them:
// both scalars before anything else, and minval < maxval only when the
// output is not empty.
#ifndef WEFT_OPS_CPU_RANDOM_BOUNDS_H_
#define WEFT_OPS_CPU_RANDOM_BOUNDS_H_

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/core/tensor.h"

namespace weft {

inline absl::Status CheckBoundsAreScalars(const Tensor& minval, const Tensor& maxval) {
  if (minval.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "minval must be 0-D, got shape ", minval.shape().DebugString()));
  }
  if (maxval.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "maxval must be 0-D, got shape ", maxval.shape().DebugString()));
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status CheckRange(T lo, T hi) {
  if (lo < hi) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("Need minval < maxval, got ", lo, " >= ", hi));
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_RANDOM_BOUNDS_H_
