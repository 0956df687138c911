// Array ops that TensorFlow's gradient functions emit: ConcatOffset,
// DynamicStitch, InvertPermutation, ListDiff, PadV2, PreventGradient, ShapeN
// and StridedSliceGrad. OpDefs match TensorFlow 2.21's
// (tests/ops/op_def_compat_test checks).
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/array_shape_fns.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using array_shapes::Dims;

// ConcatOffset(concat_dim, shape_0..shape_N-1): output i is like shape i.
absl::Status ConcatOffsetShape(InferenceContext* c) {
  for (int i = 1; i < c->num_inputs(); ++i) c->set_output(i - 1, c->input(i));
  return absl::OkStatus();
}

// ShapeN: output i is the rank-1 shape of input i.
absl::Status ShapeNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_inputs(); ++i) {
    const PartialShape& in = c->input(i);
    c->set_output(i, PartialShape({in.known_rank() ? in.rank() : -1}));
  }
  return absl::OkStatus();
}

absl::Status VectorShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 1));
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

absl::Status ListDiffShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 1));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 1));
  c->set_output(0, PartialShape({-1}));
  c->set_output(1, PartialShape({-1}));
  return absl::OkStatus();
}

// DynamicStitch(indices_0..N-1, data_0..N-1): [?] + data_0's shape past
// indices_0's rank (the first dim needs the index values).
absl::Status DynamicStitchShape(InferenceContext* c) {
  const int n = c->num_inputs() / 2;
  const PartialShape& idx = c->input(0);
  const PartialShape& data = c->input(n);
  if (!idx.known_rank() || !data.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  if (data.rank() < idx.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data ", data.DebugString(), " must have indices ", idx.DebugString(),
        " as a prefix"));
  }
  Dims out = {-1};
  for (int i = idx.rank(); i < data.rank(); ++i) out.push_back(data.dim(i));
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// StridedSliceGrad: the output has the shape given by input 0.
absl::Status StridedSliceGradShape(InferenceContext* c) {
  c->set_output(0, c->InputAsShape(0));
  return absl::OkStatus();
}

}  // namespace

void RegisterArrayGradOps(OpRegistry* r) {
  r->Register(OpDefBuilder("ConcatOffset")
                  .Input("concat_dim: int32")
                  .Input("shape: N * shape_type")
                  .Output("offset: N * shape_type")
                  .Attr("N: int >= 2")
                  .Attr("shape_type: {int32, int64} = int32"),
              ConcatOffsetShape);
  // ParallelDynamicStitch: TensorFlow's gradient of DynamicPartition.
  for (const char* op : {"DynamicStitch", "ParallelDynamicStitch"}) {
    r->Register(OpDefBuilder(op)
                    .Input("indices: N * int32")
                    .Input("data: N * T")
                    .Output("merged: T")
                    .Attr("N: int >= 1")
                    .Attr("T: type"),
                DynamicStitchShape);
  }
  r->Register(OpDefBuilder("InvertPermutation")
                  .Input("x: T")
                  .Output("y: T")
                  .Attr("T: {int32, int64} = int32"),
              VectorShape);
  r->Register(OpDefBuilder("ListDiff")
                  .Input("x: T")
                  .Input("y: T")
                  .Output("out: T")
                  .Output("idx: out_idx")
                  .Attr("T: type")
                  .Attr("out_idx: {int32, int64} = int32"),
              ListDiffShape);
  r->Register(OpDefBuilder("PadV2")
                  .Input("input: T")
                  .Input("paddings: Tpaddings")
                  .Input("constant_values: T")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("Tpaddings: {int32, int64} = int32"),
              array_shapes::PadShape);
  // Identity that documents "no gradient here" (TF's gradient raises).
  r->Register(OpDefBuilder("PreventGradient")
                  .Input("input: T")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("message: string = ''"),
              UnchangedShape);
  r->Register(OpDefBuilder("ShapeN")
                  .Input("input: N * T")
                  .Output("output: N * out_type")
                  .Attr("N: int >= 1")
                  .Attr("T: type")
                  .Attr("out_type: {int32, int64} = int32"),
              ShapeNShape);
  r->Register(OpDefBuilder("StridedSliceGrad")
                  .Input("shape: Index")
                  .Input("begin: Index")
                  .Input("end: Index")
                  .Input("strides: Index")
                  .Input("dy: T")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("Index: {int32, int64}")
                  .Attr("begin_mask: int = 0")
                  .Attr("end_mask: int = 0")
                  .Attr("ellipsis_mask: int = 0")
                  .Attr("new_axis_mask: int = 0")
                  .Attr("shrink_axis_mask: int = 0"),
              StridedSliceGradShape);
}

}  // namespace weft
