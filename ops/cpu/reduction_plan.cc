#include "ops/cpu/reduction_plan.h"

#include "absl/strings/str_cat.h"

namespace weft {

bool ReductionPlan::IsIdentity() const {
  for (bool r : reduced) {
    if (r) return false;
  }
  return true;
}

ReductionPlan MakeReductionPlanFromMask(const TensorShape& input,
                                        const std::vector<bool>& reduce,
                                        bool keep_dims) {
  ReductionPlan plan;
  for (int i = 0; i < input.dims(); ++i) {
    const int64_t d = input.dim_size(i);
    if (!reduce[i]) {
      plan.out_shape.AddDim(d);
    } else {
      if (keep_dims) plan.out_shape.AddDim(1);
      plan.reduced_count *= d;
    }
    if (d == 1) continue;  // folding one element is no folding at all
    if (!plan.dims.empty() && plan.reduced.back() == reduce[i]) {
      plan.dims.back() *= d;
    } else {
      plan.dims.push_back(d);
      plan.reduced.push_back(reduce[i]);
    }
  }
  return plan;
}

absl::StatusOr<ReductionPlan> MakeReductionPlan(const TensorShape& input,
                                                const Tensor& axes,
                                                bool keep_dims) {
  if (axes.dtype() != DT_INT32 && axes.dtype() != DT_INT64) {
    return absl::InvalidArgumentError(
        absl::StrCat("reduction axes must be int32 or int64, got ",
                     DataTypeString(axes.dtype())));
  }
  const int rank = input.dims();
  std::vector<bool> reduce(rank, false);
  for (int64_t i = 0; i < axes.NumElements(); ++i) {
    const int64_t axis = axes.dtype() == DT_INT32 ? axes.data<int32_t>()[i]
                                                  : axes.data<int64_t>()[i];
    if (axis < -rank || axis >= rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("Invalid reduction dimension ", axis, " for input with ",
                       rank, " dimension(s)"));
    }
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (reduce[a]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Invalid reduction arguments: Axes contains duplicate dimension: ",
          a));
    }
    reduce[a] = true;
  }
  return MakeReductionPlanFromMask(input, reduce, keep_dims);
}

}  // namespace weft
