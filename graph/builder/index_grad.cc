// Gradients of indexing ops: StridedSlice (through StridedSliceGrad, and
// StridedSliceGrad's own, for second derivatives),
// GatherV2 and DynamicStitch (scatter / gather of dy), UnsortedSegmentSum,
// GatherNd, ScatterNd and TensorScatterUpdate/Add/Sub.
// All are dense: Weft has no IndexedSlices, so GatherV2's gradient is a
// full tensor of params' shape built with UnsortedSegmentSum.
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using grad_internal::CopyAttrs;
using grad_internal::RangeOf;
using grad_internal::RankOf;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

AttrList SliceMasks(In in) {
  return CopyAttrs(*in.node, {"begin_mask", "end_mask", "ellipsis_mask",
                              "new_axis_mask", "shrink_axis_mask"});
}

absl::Status StridedSliceGradFn(const Scope& s, In in, Dx dx) {
  // StridedSliceGrad scatters dy into zeros of x's shape with the forward
  // node's begin/end/strides and masks.
  Output shape = Shape(s, in.x[0], BaseType(in.x[1].dtype));
  (*dx)[0] = AddNode1(s, "StridedSliceGrad",
                      {shape, in.x[1], in.x[2], in.x[3], in.dy[0]},
                      SliceMasks(in));
  return absl::OkStatus();
}

// StridedSliceGrad(shape, begin, end, strides, dy) is linear in dy: its
// gradient is the same slice of g.
absl::Status StridedSliceGradGrad(const Scope& s, In in, Dx dx) {
  (*dx)[4] = AddNode1(s, "StridedSlice",
                      {in.dy[0], in.x[1], in.x[2], in.x[3]}, SliceMasks(in));
  return absl::OkStatus();
}

absl::Status GatherV2Grad(const Scope& s, In in, Dx dx) {
  int64_t batch_dims = 0;
  if (HasNodeAttr(*in.node, "batch_dims")) {
    WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "batch_dims", &batch_dims));
  }
  // With b = batch_dims, params' shape is B + O + [n] + R (B: b batch dims,
  // n at `axis`) and indices' is B + I, so dy's is B + O + I + R. Move I
  // next to B, flatten B + I into rows of O + R, number each row's segment
  // by (batch, index) as batch * n + index, sum the rows of each segment
  // into B + [n] + O + R, and move n back to `axis`. With b = 0 this is the
  // plain scatter-add of dy's rows into params' shape.
  const Output &params = in.x[0], &indices = in.x[1], &g = in.dy[0];
  Output zero = Const(s, 0), one = Const(s, 1);
  auto vec = [&](const Output& scalar) { return ExpandDims(s, scalar, zero); };
  Output pshape = Shape(s, params);
  Output prank = RankOf(s, params);
  Output irank = RankOf(s, indices);
  Output b = Const(s, static_cast<int32_t>(batch_dims));
  if (batch_dims < 0) b = AddV2(s, b, irank);
  Output axis = Cast(s, in.x[2], DT_INT32);
  axis = AddNode1(s, "FloorMod", {AddV2(s, axis, prank), prank});
  Output n_index_dims = Sub(s, irank, b);
  Output axis_end = AddV2(s, axis, n_index_dims);
  Output axis_next = AddV2(s, axis, one);
  Output batch = Slice(s, pshape, Const(s, {0}), vec(b));
  Output outer = Slice(s, pshape, vec(b), vec(Sub(s, axis, b)));
  Output inner = Slice(s, pshape, vec(axis_next), Const(s, {-1}));
  Output n = GatherV2(s, pshape, axis, zero);
  Output n_batch = Prod(s, batch, zero);
  Output to_front = ConcatV2(s, {RangeOf(s, zero, b),
                                 RangeOf(s, axis, axis_end),
                                 RangeOf(s, b, axis),
                                 RangeOf(s, axis_end, RankOf(s, g))},
                             zero);
  Output rows = Reshape(s, Transpose(s, g, to_front),
                        ConcatV2(s, {Const(s, {-1}), outer, inner}, zero));
  Output offsets = Reshape(
      s, Mul(s, RangeOf(s, zero, n_batch), n),
      ConcatV2(s, {batch, Fill(s, vec(n_index_dims), one)}, zero));
  Output ids = AddV2(s, indices, Cast(s, offsets, BaseType(indices.dtype)));
  Output summed = AddNode1(s, "UnsortedSegmentSum",
                           {rows, Reshape(s, ids, Const(s, {-1})),
                            Mul(s, n_batch, n)});
  summed = Reshape(s, summed, ConcatV2(s, {batch, vec(n), outer, inner}, zero));
  Output back = ConcatV2(s, {RangeOf(s, zero, b), RangeOf(s, AddV2(s, b, one),
                                                          axis_next),
                             vec(b), RangeOf(s, axis_next, prank)},
                         zero);
  (*dx)[0] = Transpose(s, summed, back);
  return absl::OkStatus();
}

// merged[indices[i]] = data[i]: data[i]'s gradient is dy gathered at
// indices[i]. (With duplicate indices only the last write reaches the
// output; like TensorFlow, this gradient does not single it out.)
absl::Status DynamicStitchGrad(const Scope& s, In in, Dx dx) {
  const size_t n = in.x.size() / 2;
  for (size_t i = 0; i < n; ++i) {
    (*dx)[n + i] = GatherV2(s, in.dy[0], Cast(s, in.x[i], DT_INT32),
                            Const(s, 0));
  }
  return absl::OkStatus();
}

// Each data row's gradient is dy's row of its segment; rows with a
// negative segment id were dropped by the forward op and get zeros.
absl::Status UnsortedSegmentSumGrad(const Scope& s, In in, Dx dx) {
  const Output &ids = in.x[1], &g = in.dy[0];
  Output zero_ids = ZerosLike(s, ids);
  Output gathered = GatherV2(s, g, Maximum(s, ids, zero_ids), Const(s, 0));
  Output extra_dims = Sub(s, RankOf(s, gathered), RankOf(s, ids));
  Output ones = Fill(s, ExpandDims(s, extra_dims, Const(s, 0)), Const(s, 1));
  Output kept = Reshape(s, GreaterEqual(s, ids, zero_ids),
                        ConcatV2(s, {Shape(s, ids), ones}, Const(s, 0)));
  (*dx)[0] = SelectV2(s, kept, gathered, ZerosLike(s, gathered));
  return absl::OkStatus();
}

// GatherNd: dy's slices added back where they were gathered from.
absl::Status GatherNdGrad(const Scope& s, In in, Dx dx) {
  const Output &params = in.x[0], &indices = in.x[1];
  (*dx)[0] = AddNode1(s, "ScatterNd",
                      {indices, in.dy[0], Shape(s, params, BaseType(indices.dtype))});
  return absl::OkStatus();
}

// ScatterNd: each update's gradient is dy at its index.
absl::Status ScatterNdGrad(const Scope& s, In in, Dx dx) {
  (*dx)[1] = AddNode1(s, "GatherNd", {in.dy[0], in.x[0]});
  return absl::OkStatus();
}

// TensorScatterUpdate: the overwritten slices pass no gradient to tensor;
// updates get dy at their indices.
absl::Status TensorScatterUpdateGrad(const Scope& s, In in, Dx dx) {
  const Output &indices = in.x[1], &g = in.dy[0];
  Output at = AddNode1(s, "GatherNd", {g, indices});
  (*dx)[0] = AddNode1(s, "TensorScatterUpdate", {g, indices, ZerosLike(s, at)});
  (*dx)[2] = at;
  return absl::OkStatus();
}

// TensorScatterAdd / Sub: tensor gets dy; updates dy at their indices
// (negated for Sub).
absl::Status TensorScatterAddGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = in.dy[0];
  (*dx)[2] = AddNode1(s, "GatherNd", {in.dy[0], in.x[1]});
  return absl::OkStatus();
}
absl::Status TensorScatterSubGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = in.dy[0];
  (*dx)[2] = Neg(s, AddNode1(s, "GatherNd", {in.dy[0], in.x[1]}));
  return absl::OkStatus();
}

}  // namespace

void RegisterIndexGrads(GradRegistry* r) {
  r->Register("GatherNd", GatherNdGrad);
  r->Register("ScatterNd", ScatterNdGrad);
  r->Register("TensorScatterUpdate", TensorScatterUpdateGrad);
  r->Register("TensorScatterAdd", TensorScatterAddGrad);
  r->Register("ScatterNdNonAliasingAdd", TensorScatterAddGrad);
  r->Register("TensorScatterSub", TensorScatterSubGrad);
  r->Register("StridedSlice", StridedSliceGradFn);
  r->Register("StridedSliceGrad", StridedSliceGradGrad);
  r->Register("GatherV2", GatherV2Grad);
  r->Register("DynamicStitch", DynamicStitchGrad);
  r->Register("ParallelDynamicStitch", DynamicStitchGrad);
  r->Register("UnsortedSegmentSum", UnsortedSegmentSumGrad);
}

}  // namespace weft
