// Gradients of array ops: pass-throughs, reshapes, Transpose, ConcatV2.
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/math_ops.h"

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
  for (const char* op : {"StopGradient", "Shape", "Size", "Rank", "ZerosLike",
                         "OnesLike", "BroadcastGradientArgs", "Const",
                         "Placeholder", "Range"}) {
    r->RegisterNoGradient(op);
  }
}

}  // namespace weft
