// Which dims a reduction folds, in the simplest form a kernel can walk.
//
//   absl::StatusOr<ReductionPlan> p =
//       MakeReductionPlan(input.shape(), axes_tensor, keep_dims);
//   // input [2,3,4,5], axes {1,2}: dims {2,12,5}, reduced {F,T,F};
//   // out_shape [2,5] (or [2,1,1,5] with keep_dims).
//
// Size-1 dims are dropped and neighbouring dims that are both reduced or
// both kept are merged, so any axis set becomes alternating groups. Kernels
// then reduce one group at a time in [outer, reduced, inner] form (see
// reduction_ops.h). Plain data; no Eigen here.
#ifndef WEFT_OPS_CPU_REDUCTION_PLAN_H_
#define WEFT_OPS_CPU_REDUCTION_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_shape.h"

namespace weft {

struct ReductionPlan {
  TensorShape out_shape;
  // Merged input dims, outermost first, and whether each is reduced. Empty
  // when the input has no dims larger than 1.
  absl::InlinedVector<int64_t, 6> dims;
  absl::InlinedVector<bool, 6> reduced;
  // Input elements folded into each output element (Mean's divisor).
  int64_t reduced_count = 1;

  // True when no element is folded with another: the output is the input,
  // reshaped.
  bool IsIdentity() const;
};

// `axes` is an int32 or int64 tensor of any rank listing the dims to
// reduce; negative axes count from the end. INVALID_ARGUMENT for an axis out
// of range or listed twice (TensorFlow's messages).
absl::StatusOr<ReductionPlan> MakeReductionPlan(const TensorShape& input,
                                                const Tensor& axes,
                                                bool keep_dims);

// `reduce[i]` says whether input dim i is reduced (one flag per dim).
ReductionPlan MakeReductionPlanFromMask(const TensorShape& input,
                                        const std::vector<bool>& reduce,
                                        bool keep_dims);

}  // namespace weft

#endif  // WEFT_OPS_CPU_REDUCTION_PLAN_H_
