// Gradients of array ops: pass-throughs, reshapes, Transpose, ConcatV2,
// Tile, Slice, Pack/Unpack and Select.
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/status.h"

namespace weft {
namespace {

using In = const GradInputs&;
using Dx = std::vector<Output>*;

absl::Status PassThrough(const Scope&, In in, Dx dx) {
  (*dx)[0] = in.dy[0];
  return absl::OkStatus();
}

// Reshape, ExpandDims, Squeeze: reshape the gradient back to x's shape.
absl::Status ReshapeBack(const Scope& s, In in, Dx dx) {
  (*dx)[0] = Reshape(s, in.dy[0], Shape(s, in.x[0]));
  return absl::OkStatus();
}

absl::Status TransposeGrad(const Scope& s, In in, Dx dx) {
  // The inverse permutation: inv[j] = i where perm[i] == j, found as the
  // argmax of the one-hot matrix [j == perm[i]].
  Output perm = Cast(s, in.x[1], DT_INT32);
  Output n = AddNode1(s, "Size", {perm}, {{"out_type", Attr(DT_INT32)}});
  Output range = AddNode1(s, "Range", {Const(s, 0), n, Const(s, 1)});
  Output hit = Equal(s, ExpandDims(s, range, Const(s, 1)),
                     ExpandDims(s, perm, Const(s, 0)));
  Output inv = ArgMax(s, Cast(s, hit, DT_FLOAT), Const(s, 1), DT_INT32);
  (*dx)[0] = Transpose(s, in.dy[0], inv);
  return absl::OkStatus();
}

absl::Status ConcatV2Grad(const Scope& s, In in, Dx dx) {
  const int n = static_cast<int>(in.x.size()) - 1;
  Output axis = Cast(s, in.x[n], DT_INT32);
  Output rank = AddNode1(s, "Rank", {in.x[0]});
  axis = AddNode1(s, "FloorMod", {axis, rank});
  std::vector<Output> sizes;
  for (int i = 0; i < n; ++i) {
    sizes.push_back(AddNode1(s, "GatherV2",
                             {Shape(s, in.x[i]), axis, Const(s, 0)}));
  }
  Output size_splits = AddNode1(s, "Pack", {Input(sizes)});
  std::vector<Output> parts =
      AddNode(s, "SplitV", {in.dy[0], size_splits, axis},
              {{"num_split", Attr(int64_t{n})}});
  if (static_cast<int>(parts.size()) != n) return s.status();
  for (int i = 0; i < n; ++i) (*dx)[i] = parts[i];
  return absl::OkStatus();
}

absl::Status FillGrad(const Scope& s, In in, Dx dx) {
  Output all = AddNode1(s, "Range",
                        {Const(s, 0), AddNode1(s, "Rank", {in.dy[0]}),
                         Const(s, 1)});
  (*dx)[1] = Sum(s, in.dy[0], all);
  return absl::OkStatus();
}

absl::Status TileGrad(const Scope& s, In in, Dx dx) {
  // Viewing dy as [m0, s0, m1, s1, ...] (multiples interleaved with x's
  // dims), every copy of x is one index along the even axes: sum them.
  Output multiples = Cast(s, in.x[1], DT_INT32);
  Output split = Reshape(s, Pack(s, {multiples, Shape(s, in.x[0])}, 1),
                         Const(s, {-1}));
  Output n = AddNode1(s, "Size", {split}, {{"out_type", Attr(DT_INT32)}});
  Output even = AddNode1(s, "Range", {Const(s, 0), n, Const(s, 2)});
  (*dx)[0] = Sum(s, Reshape(s, in.dy[0], split), even);
  return absl::OkStatus();
}

absl::Status SliceGrad(const Scope& s, In in, Dx dx) {
  // Pad dy back to x's shape: `begin` zeros before, the rest after.
  Output begin = Cast(s, in.x[1], DT_INT32);
  Output after = Sub(s, Sub(s, Shape(s, in.x[0]), begin), Shape(s, in.y[0]));
  (*dx)[0] = Pad(s, in.dy[0], Pack(s, {begin, after}, 1));
  return absl::OkStatus();
}

absl::Status PackGrad(const Scope& s, In in, Dx dx) {
  int64_t axis = 0;
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "axis", &axis));
  const int64_t n = static_cast<int64_t>(in.x.size());
  std::vector<Output> parts = Unpack(s, in.dy[0], n, axis);
  if (static_cast<int64_t>(parts.size()) != n) return s.status();
  for (int64_t i = 0; i < n; ++i) (*dx)[i] = parts[i];
  return absl::OkStatus();
}

absl::Status UnpackGrad(const Scope& s, In in, Dx dx) {
  int64_t axis = 0;
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "axis", &axis));
  std::vector<Output> parts;
  for (size_t i = 0; i < in.y.size(); ++i) {
    // Slices nobody differentiated contribute zeros.
    parts.push_back(in.dy[i].valid() ? in.dy[i] : ZerosLike(s, in.y[i]));
  }
  (*dx)[0] = Pack(s, parts, axis);
  return absl::OkStatus();
}

// Select (condition of t's shape or of its first dimension) and SelectV2
// (all three broadcast): the gradient goes to t where the condition holds
// and to e elsewhere; SelectV2 then reduces over the broadcast dims.
absl::Status SelectGrad(const Scope& s, In in, Dx dx) {
  const Output &c = in.x[0], &g = in.dy[0];
  Output zeros = ZerosLike(s, g);
  const std::string& op = in.node->op();
  Output gt = AddNode1(s, op, {c, g, zeros});
  Output ge = AddNode1(s, op, {c, zeros, g});
  if (op == "SelectV2") {
    Output none;
    grad_internal::ReduceForBroadcast(s, in.x[1], in.y[0], &gt, &none);
    grad_internal::ReduceForBroadcast(s, in.x[2], in.y[0], &ge, &none);
  }
  (*dx)[1] = gt;
  (*dx)[2] = ge;
  return absl::OkStatus();
}

}  // namespace

void RegisterArrayGrads(GradRegistry* r) {
  r->Register("Identity", PassThrough);
  r->Register("ReadVariableOp", PassThrough);
  r->Register("Reshape", ReshapeBack);
  r->Register("ExpandDims", ReshapeBack);
  r->Register("Squeeze", ReshapeBack);
  r->Register("Transpose", TransposeGrad);
  r->Register("ConcatV2", ConcatV2Grad);
  r->Register("Fill", FillGrad);
  r->Register("Tile", TileGrad);
  r->Register("Slice", SliceGrad);
  r->Register("Pack", PackGrad);
  r->Register("Unpack", UnpackGrad);
  r->Register("Select", SelectGrad);
  r->Register("SelectV2", SelectGrad);
  // StridedSlice and GatherV2 have no gradient yet: theirs need the
  // StridedSliceGrad and UnsortedSegmentSum kernels, which Weft lacks.
  for (const char* op : {"StopGradient", "Shape", "Size", "Rank", "ZerosLike",
                         "OnesLike", "BroadcastGradientArgs", "Const",
                         "Placeholder", "Range", "OneHot"}) {
    r->RegisterNoGradient(op);
  }
}

}  // namespace weft
