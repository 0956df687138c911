// Gradients of the layout and indexing ops of ops/array_layout_ops.cc and
// ops/array_index_ops.cc, as TensorFlow defines them: each layout op's
// gradient is its inverse applied to dy (SpaceToBatchND <-> BatchToSpaceND,
// SpaceToDepth <-> DepthToSpace, MirrorPad <-> MirrorPadGrad, Roll by
// -shift, ReverseSequence and MatrixBandPart by themselves, Diag <->
// DiagPart, the MatrixDiag* ops by each other); CheckNumerics checks the gradient too; TopKV2 scatters dy to
// the chosen indices of each row.
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using grad_internal::CopyAttrs;
using grad_internal::RankOf;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

// dy through `op` with the forward node's non-tensor inputs 1.. and the
// listed attrs: the gradient of input 0 for the ops whose gradient is
// another (or the same) op.
GradFn Through(const char* op, std::initializer_list<const char*> attrs = {}) {
  std::vector<const char*> names(attrs);
  return [op, names](const Scope& s, In in, Dx dx) {
    std::vector<Input> inputs = {in.dy[0]};
    for (size_t i = 1; i < in.x.size(); ++i) inputs.push_back(in.x[i]);
    AttrList copied;
    for (const char* name : names) {
      AttrList one = CopyAttrs(*in.node, {name});
      copied.insert(copied.end(), one.begin(), one.end());
    }
    (*dx)[0] = AddNode1(s, op, inputs, copied);
    return absl::OkStatus();
  };
}

absl::Status RollGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = AddNode1(s, "Roll", {in.dy[0], Neg(s, in.x[1]), in.x[2]});
  return absl::OkStatus();
}

GradFn CheckNumericsGrad(const char* op) {
  return [op](const Scope& s, In in, Dx dx) {
    std::string message;
    WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "message", &message));
    (*dx)[0] = AddNode1(
        s, op, {in.dy[0]},
        {{"message",
          Attr(absl::StrCat("Not a number (NaN) or infinity (Inf) values "
                            "detected in gradient. ",
                            message))}});
    return absl::OkStatus();
  };
}

// x: [..., n]; indices and dy: [..., k]. Row r's index i goes to flat
// position r * n + i of x; ScatterNd adds dy there.
absl::Status TopKGrad(const Scope& s, In in, Dx dx) {
  const Output& x = in.x[0];
  Output zero = Const(s, 0);
  Output last = Sub(s, RankOf(s, x), Const(s, 1));
  Output x_shape = Shape(s, x, DT_INT64);
  Output n = GatherV2(s, x_shape, last, zero);
  Output indices = Cast(s, in.y[1], DT_INT64);
  Output k = GatherV2(s, Shape(s, indices, DT_INT64), last, zero);
  Output rows2d = Reshape(s, indices, Pack(s, {Const(s, int64_t{-1}), k}));
  Output rows = GatherV2(s, Shape(s, rows2d, DT_INT64), zero, zero);
  Output starts = Mul(s, AddNode1(s, "Range", {Const(s, int64_t{0}), rows,
                                               Const(s, int64_t{1})}),
                      n);
  Output flat = Reshape(s, Add(s, rows2d, ExpandDims(s, starts, Const(s, 1))),
                        Const(s, {int64_t{-1}}));
  Output size = AddNode1(s, "Size", {x}, {{"out_type", Attr(DT_INT64)}});
  Output scattered = AddNode1(
      s, "ScatterNd",
      {ExpandDims(s, flat, Const(s, 1)), Reshape(s, in.dy[0], Const(s, {-1})),
       ExpandDims(s, size, zero)});
  (*dx)[0] = Reshape(s, scattered, x_shape);
  return absl::OkStatus();
}

// The MatrixDiag* gradients (every form through the V3 ops): the same
// band, read or written the other way (TensorFlow's), with the forward
// node's align (V2's diagonals are all left-aligned; V1's one diagonal
// needs none).
AttrList AlignOf(In in) {
  if (HasNodeAttr(*in.node, "align")) return CopyAttrs(*in.node, {"align"});
  return {{"align", Attr(std::string("LEFT_LEFT"))}};
}

// The forward node's k (input i), or the main diagonal for the V1 forms.
Output BandOf(const Scope& s, In in, size_t i) {
  return i < in.x.size() ? in.x[i] : Const(s, 0);
}

absl::Status MatrixDiagGrad(const Scope& s, In in, Dx dx) {
  Output zero = grad_internal::ScalarLike(s, 0, in.dy[0].dtype);
  (*dx)[0] = AddNode1(s, "MatrixDiagPartV3", {in.dy[0], BandOf(s, in, 1), zero},
                      AlignOf(in));
  return absl::OkStatus();
}

absl::Status MatrixDiagPartGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = AddNode1(s, "MatrixSetDiagV3",
                      {ZerosLike(s, in.x[0]), in.dy[0], BandOf(s, in, 1)}, AlignOf(in));
  return absl::OkStatus();
}

absl::Status MatrixSetDiagGrad(const Scope& s, In in, Dx dx) {
  Output zero = grad_internal::ScalarLike(s, 0, in.dy[0].dtype);
  Output k = BandOf(s, in, 2);
  (*dx)[0] = AddNode1(s, "MatrixSetDiagV3", {in.dy[0], ZerosLike(s, in.x[1]), k},
                      AlignOf(in));
  (*dx)[1] = AddNode1(s, "MatrixDiagPartV3", {in.dy[0], k, zero}, AlignOf(in));
  return absl::OkStatus();
}

}  // namespace

void RegisterArrayIndexGrads(GradRegistry* r) {
  r->Register("SpaceToBatchND", Through("BatchToSpaceND"));
  r->Register("BatchToSpaceND", Through("SpaceToBatchND"));
  r->Register("SpaceToDepth", Through("DepthToSpace", {"block_size", "data_format"}));
  r->Register("DepthToSpace", Through("SpaceToDepth", {"block_size", "data_format"}));
  r->Register("MirrorPad", Through("MirrorPadGrad", {"mode"}));
  r->Register("MirrorPadGrad", Through("MirrorPad", {"mode"}));
  r->Register("MatrixBandPart", Through("MatrixBandPart"));
  r->Register("ReverseSequence", Through("ReverseSequence", {"seq_dim", "batch_dim"}));
  r->Register("Diag", Through("DiagPart"));
  r->Register("DiagPart", Through("Diag"));
  for (const char* v : {"", "V2", "V3"}) {
    r->Register(absl::StrCat("MatrixDiag", v), MatrixDiagGrad);
    r->Register(absl::StrCat("MatrixDiagPart", v), MatrixDiagPartGrad);
    r->Register(absl::StrCat("MatrixSetDiag", v), MatrixSetDiagGrad);
  }
  r->Register("Roll", RollGrad);
  r->Register("TopKV2", TopKGrad);
  r->Register("CheckNumerics", CheckNumericsGrad("CheckNumerics"));
  r->Register("CheckNumericsV2", CheckNumericsGrad("CheckNumericsV2"));
}

}  // namespace weft
