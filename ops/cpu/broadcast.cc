#include "ops/cpu/broadcast.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace weft {
namespace {

// Size of dim i of `s` when s is right-aligned to `rank` dims.
int64_t AlignedDim(const TensorShape& s, int rank, int i) {
  const int j = i - (rank - s.dims());
  return j >= 0 ? s.dim_size(j) : 1;
}

absl::Status Incompatible(const TensorShape& x, const TensorShape& y) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Incompatible shapes: ", x.DebugString(), " vs. ", y.DebugString()));
}

}  // namespace

int64_t BroadcastPlan::rows() const {
  int64_t r = 1;
  for (size_t i = 0; i + 1 < dims.size(); ++i) r *= dims[i];
  return r;
}

bool ShapesBroadcast(const TensorShape& x, const TensorShape& y) {
  const int rank = std::max(x.dims(), y.dims());
  for (int i = 0; i < rank; ++i) {
    const int64_t a = AlignedDim(x, rank, i);
    const int64_t b = AlignedDim(y, rank, i);
    if (a != b && a != 1 && b != 1) return false;
  }
  return true;
}

absl::StatusOr<BroadcastPlan> MakeBroadcastPlan(const TensorShape& x,
                                                const TensorShape& y) {
  BroadcastPlan plan;
  const int rank = std::max(x.dims(), y.dims());
  // Per merged dim: whether x / y really have it (false = broadcast).
  absl::InlinedVector<bool, 6> x_has, y_has;
  for (int i = 0; i < rank; ++i) {
    const int64_t a = AlignedDim(x, rank, i);
    const int64_t b = AlignedDim(y, rank, i);
    if (a != b && a != 1 && b != 1) return Incompatible(x, y);
    const int64_t d = a == 1 ? b : a;
    plan.out_shape.AddDim(d);
    if (d == 1) continue;  // contributes nothing to the loop nest
    const bool xh = a != 1;
    const bool yh = b != 1;
    if (!plan.dims.empty() && x_has.back() == xh && y_has.back() == yh) {
      plan.dims.back() *= d;
    } else {
      plan.dims.push_back(d);
      x_has.push_back(xh);
      y_has.push_back(yh);
    }
  }
  if (plan.dims.empty()) {  // every dim is 1: one element
    plan.dims.push_back(1);
    x_has.push_back(true);
    y_has.push_back(true);
  }
  const size_t n = plan.dims.size();
  plan.x_strides.resize(n);
  plan.y_strides.resize(n);
  int64_t xs = 1, ys = 1;
  for (size_t i = n; i-- > 0;) {
    plan.x_strides[i] = x_has[i] ? xs : 0;
    plan.y_strides[i] = y_has[i] ? ys : 0;
    if (x_has[i]) xs *= plan.dims[i];
    if (y_has[i]) ys *= plan.dims[i];
  }
  return plan;
}

BroadcastRowIterator::BroadcastRowIterator(const BroadcastPlan& plan,
                                           int64_t row)
    : plan_(plan), index_(plan.dims.size() - 1, 0) {
  // Decompose `row` over the outer dims, innermost first.
  for (size_t i = index_.size(); i-- > 0;) {
    const int64_t d = plan.dims[i];
    index_[i] = d == 0 ? 0 : row % d;
    row = d == 0 ? 0 : row / d;
    x_offset_ += index_[i] * plan.x_strides[i];
    y_offset_ += index_[i] * plan.y_strides[i];
  }
}

void BroadcastRowIterator::Next() {
  for (size_t i = index_.size(); i-- > 0;) {
    x_offset_ += plan_.x_strides[i];
    y_offset_ += plan_.y_strides[i];
    if (++index_[i] < plan_.dims[i]) return;
    x_offset_ -= plan_.x_strides[i] * plan_.dims[i];
    y_offset_ -= plan_.y_strides[i] * plan_.dims[i];
    index_[i] = 0;
  }
}

}  // namespace weft
