// Shape functions of the array ops (ops/array_ops.cc registers them), split
// by sub-family: constants, feeds, reshaping, joining and tiling in
// array_shape_fns.cc; slicing, gathering, padding, selecting, ranges,
// splitting and broadcasting in array_slice_shape_fns.cc.
//
// Each narrows what it can from constant inputs and returns INVALID_ARGUMENT
// only for inputs that can never work (see ops/framework/shape_inference.h).
#ifndef WEFT_OPS_ARRAY_SHAPE_FNS_H_
#define WEFT_OPS_ARRAY_SHAPE_FNS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ops/framework/shape_inference.h"

namespace weft {
namespace array_shapes {

// array_shape_fns.cc
absl::Status ConstShape(InferenceContext* c);
absl::Status ShapeFromAttr(InferenceContext* c);
absl::Status PlaceholderWithDefaultShape(InferenceContext* c);
absl::Status PassThroughShapes(InferenceContext* c);
absl::Status ReshapeShape(InferenceContext* c);
absl::Status VectorOfRankShape(InferenceContext* c);
absl::Status FillShape(InferenceContext* c);
absl::Status ExpandDimsShape(InferenceContext* c);
absl::Status SqueezeShape(InferenceContext* c);
absl::Status TransposeShape(InferenceContext* c);
absl::Status ConcatV2Shape(InferenceContext* c);
absl::Status PackShape(InferenceContext* c);
absl::Status UnpackShape(InferenceContext* c);
absl::Status TileShape(InferenceContext* c);

// array_slice_shape_fns.cc
absl::Status SliceShape(InferenceContext* c);
absl::Status StridedSliceShape(InferenceContext* c);
absl::Status GatherV2Shape(InferenceContext* c);
absl::Status OneHotShape(InferenceContext* c);
absl::Status PadShape(InferenceContext* c);
absl::Status SelectShape(InferenceContext* c);
absl::Status SelectV2Shape(InferenceContext* c);
absl::Status RangeShape(InferenceContext* c);
absl::Status SplitShape(InferenceContext* c);
absl::Status SplitVShape(InferenceContext* c);
absl::Status BroadcastToShape(InferenceContext* c);
// BroadcastArgs and BroadcastGradientArgs: int vectors of unknown length.
absl::Status BroadcastGradientArgsShape(InferenceContext* c);

// Shared by the array shape functions (defined in array_shape_fns.cc).
using Dims = std::vector<int64_t>;
// The values of input i when it is a known constant of an index type
// (int16, uint16, int32 or int64); false for any other dtype.
bool ConstInts(InferenceContext* c, int i, Dims* out);
// Input i when it is a known constant with exactly one element.
bool ConstScalar(InferenceContext* c, int i, int64_t* out);
Dims DimsOf(const PartialShape& s);
// Merges two partial shapes known to describe the same tensor.
absl::StatusOr<PartialShape> Merge(const PartialShape& a, const PartialShape& b);
// Maps axis in [-rank, rank) to [0, rank); `what` names it in the error.
absl::Status Canonical(int64_t axis, int rank, absl::string_view what,
                       int64_t* out);
// Products and sums of dims, unknown (-1) if either is.
int64_t MulDims(int64_t a, int64_t b);
int64_t AddDims(int64_t a, int64_t b);

}  // namespace array_shapes
}  // namespace weft

#endif  // WEFT_OPS_ARRAY_SHAPE_FNS_H_
