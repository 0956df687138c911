// NumPy broadcasting of two shapes, reduced to the simplest loop nest.
//
//   absl::StatusOr<BroadcastPlan> p = MakeBroadcastPlan(x.shape(), y.shape());
//   // [8,1,5] op [4,1]: out_shape [8,4,5]; dims {8,4,5};
//   // x_strides {5,0,1}; y_strides {0,1,0}.
//
// Size-1 output dims are dropped and neighbouring dims that broadcast the
// same way are merged, so a same-shape pair becomes one dim, [M,N] op [N]
// becomes dims {M,N} with y_strides {0,1}, and so on. A kernel then walks
// `dims` as rows of `inner()` elements: per row each operand is either a
// contiguous vector (inner stride 1) or a single repeated element (0).
//
// Plain data, cheap to build (no allocation for rank <= 6); no Eigen here.
#ifndef WEFT_OPS_CPU_BROADCAST_H_
#define WEFT_OPS_CPU_BROADCAST_H_

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "runtime/core/tensor_shape.h"

namespace weft {

struct BroadcastPlan {
  TensorShape out_shape;  // the broadcast shape, unmerged
  // The output as a row-major array of `dims` (never empty). Strides are in
  // elements of each input; 0 where that input is broadcast.
  absl::InlinedVector<int64_t, 6> dims;
  absl::InlinedVector<int64_t, 6> x_strides;
  absl::InlinedVector<int64_t, 6> y_strides;

  int64_t inner() const { return dims.back(); }
  // Number of rows of inner() elements.
  int64_t rows() const;
  bool x_inner_contiguous() const { return x_strides.back() != 0; }
  bool y_inner_contiguous() const { return y_strides.back() != 0; }
};

// INVALID_ARGUMENT "Incompatible shapes: [2,3] vs. [4]" (TensorFlow's words)
// when the shapes do not broadcast.
absl::StatusOr<BroadcastPlan> MakeBroadcastPlan(const TensorShape& x,
                                                const TensorShape& y);

// True if the shapes broadcast (no plan built).
bool ShapesBroadcast(const TensorShape& x, const TensorShape& y);

// Walks the rows of a plan, giving each row's offset into x and y.
//
//   BroadcastRowIterator it(plan, first_row);
//   for (int64_t r = first_row; r < last_row; ++r, it.Next()) {
//     f(x + it.x_offset(), y + it.y_offset(), out + r * plan.inner());
//   }
class BroadcastRowIterator {
 public:
  BroadcastRowIterator(const BroadcastPlan& plan, int64_t row);
  int64_t x_offset() const { return x_offset_; }
  int64_t y_offset() const { return y_offset_; }
  void Next();

 private:
  const BroadcastPlan& plan_;
  absl::InlinedVector<int64_t, 6> index_;  // over plan.dims[0 .. n-1)
  int64_t x_offset_ = 0;
  int64_t y_offset_ = 0;
};

}  // namespace weft

#endif  // WEFT_OPS_CPU_BROADCAST_H_
