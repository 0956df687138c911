// Gradients of array ops: pass-throughs, reshapes, Transpose, ConcatV2,
// Split/SplitV, Tile, BroadcastTo, Slice, Pad, Pack/Unpack and Select.
// (Indexing ops are in index_grad.cc.)
#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

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
  Output inv = AddNode1(s, "InvertPermutation", {Cast(s, in.x[1], DT_INT32)});
  (*dx)[0] = Transpose(s, in.dy[0], inv);
  return absl::OkStatus();
}

// Reversing is its own inverse: the gradient is the incoming one reversed
// along the same axes.
absl::Status ReverseV2Grad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = AddNode1(s, "ReverseV2", {in.dy[0], in.x[1]});
  return absl::OkStatus();
}

// Outputs nobody differentiated contribute zeros.
std::vector<Output> GradsOrZeros(const Scope& s, In in) {
  std::vector<Output> parts;
  for (size_t i = 0; i < in.y.size(); ++i) {
    parts.push_back(in.dy[i].valid() ? in.dy[i] : ZerosLike(s, in.y[i]));
  }
  return parts;
}

absl::Status IdentityNGrad(const Scope&, In in, Dx dx) {
  for (size_t i = 0; i < dx->size(); ++i) (*dx)[i] = in.dy[i];
  return absl::OkStatus();
}

// Split(split_dim, value) and SplitV(value, size_splits, split_dim): the
// pieces' gradients concatenated back.
absl::Status SplitGrad(const Scope& s, In in, Dx dx) {
  (*dx)[1] = ConcatV2(s, GradsOrZeros(s, in), in.x[0]);
  return absl::OkStatus();
}

absl::Status SplitVGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = ConcatV2(s, GradsOrZeros(s, in), in.x[2]);
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
  (*dx)[0] = Pack(s, GradsOrZeros(s, in), axis);
  return absl::OkStatus();
}

// BroadcastTo: the broadcast dims summed away, as for a binary op.
absl::Status BroadcastToGrad(const Scope& s, In in, Dx dx) {
  Output gx = in.dy[0], none;
  grad_internal::ReduceForBroadcast(s, in.x[0], in.y[0], &gx, &none);
  (*dx)[0] = gx;
  return absl::OkStatus();
}

// Pad / PadV2: x's gradient is the slice of dy where x was. PadV2's
// constant fills the rest, so its gradient is the sum of dy outside that
// slice. (TensorFlow gives the constant none; we give the true value.)
absl::Status PadGrad(const Scope& s, In in, Dx dx) {
  Output paddings = Cast(s, in.x[1], DT_INT32);
  Output before = Reshape(s, Slice(s, paddings, Const(s, {0, 0}),
                                   Const(s, {-1, 1})),
                          Const(s, {-1}));
  const Output& g = in.dy[0];
  (*dx)[0] = Slice(s, g, before, Shape(s, in.x[0]));
  if (in.x.size() == 3) {
    auto total = [&s](const Output& t) {
      return Sum(s, t, grad_internal::RangeOf(s, Const(s, 0),
                                              grad_internal::RankOf(s, t)));
    };
    (*dx)[2] = Sub(s, total(g), total((*dx)[0]));
  }
  return absl::OkStatus();
}

absl::Status PreventGradientFn(const Scope&, In in, Dx) {
  std::string message;
  if (HasNodeAttr(*in.node, "message")) {
    WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "message", &message));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "gradient explicitly prevented on node '", in.node->name(), "'",
      message.empty() ? "" : ": ", message));
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
  // Print (v1) passes its input through, as TensorFlow's _PrintGrad does;
  // its data inputs get none.
  for (const char* op : {"Identity", "RefIdentity", "ReadVariableOp",
                         "PlaceholderWithDefault", "Print"}) {
    r->Register(op, PassThrough);
  }
  r->Register("IdentityN", IdentityNGrad);
  r->Register("PreventGradient", PreventGradientFn);
  r->Register("Reshape", ReshapeBack);
  r->Register("ExpandDims", ReshapeBack);
  r->Register("Squeeze", ReshapeBack);
  r->Register("Transpose", TransposeGrad);
  r->Register("ReverseV2", ReverseV2Grad);
  r->Register("ConcatV2", ConcatV2Grad);
  r->Register("Split", SplitGrad);
  r->Register("SplitV", SplitVGrad);
  r->Register("Fill", FillGrad);
  r->Register("Tile", TileGrad);
  r->Register("BroadcastTo", BroadcastToGrad);
  r->Register("Slice", SliceGrad);
  r->Register("Pad", PadGrad);
  r->Register("PadV2", PadGrad);
  r->Register("Pack", PackGrad);
  r->Register("Unpack", UnpackGrad);
  r->Register("Select", SelectGrad);
  r->Register("SelectV2", SelectGrad);
  // ResourceGather: the builder differentiates a variable through its
  // ReadVariableOp (a dense gradient); to differentiate a lookup, read the
  // variable and GatherV2 it.
  r->RegisterNoGradient("ResourceGather");
  // Integer-valued or constant outputs; OneHot's only float inputs are its
  // on/off values, which TensorFlow does not differentiate either.
  for (const char* op : {"StopGradient", "Shape", "ShapeN", "Size", "Rank",
                         "ZerosLike", "OnesLike", "BroadcastGradientArgs",
                         "BroadcastArgs", "RandomPoisson", "RandomPoissonV2",
                         "ConcatOffset", "InvertPermutation", "ListDiff",
                         "Const", "Placeholder", "Range", "OneHot",
                         "RandomStandardNormal", "RandomUniform",
                         "RandomUniformInt", "TruncatedNormal",
                         "ParameterizedTruncatedNormal",
                         "RandomShuffle", "StatelessRandomUniform",
                         "StatelessRandomNormal", "StatelessTruncatedNormal",
                         "StatelessRandomUniformInt",
                         "StatelessRandomUniformFullInt",
                         "StatelessRandomUniformV2", "StatelessRandomNormalV2",
                         "StatelessTruncatedNormalV2",
                         "StatelessRandomUniformIntV2",
                         "StatelessRandomUniformFullIntV2",
                         "StatelessRandomGetKeyCounter",
                         "StatelessRandomGetKeyCounterAlg",
                         "StatelessRandomGetAlg", "Multinomial",
                         "StatelessMultinomial",
                         "VarIsInitializedOp", "IsVariableInitialized",
                         "CountUpTo", "ResourceCountUpTo", "ScatterUpdate",
                         "ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv",
                         "ScatterMin", "ScatterMax", "ResourceScatterUpdate",
                         "ResourceScatterAdd", "ResourceScatterSub",
                         "ResourceScatterMul", "ResourceScatterDiv",
                         "ResourceScatterMin", "ResourceScatterMax",
                         "ResourceGatherNd", "Unique", "UniqueWithCounts",
                         "TensorScatterMin",
                         "TensorScatterMax", "ScatterNdUpdate", "ScatterNdAdd",
                         "ScatterNdSub", "ScatterNdMin", "ScatterNdMax",
                         "ResourceScatterNdUpdate", "ResourceScatterNdAdd",
                         "ResourceScatterNdSub", "ResourceScatterNdMin",
                         "ResourceScatterNdMax",
                         "TensorListLength", "TensorListElementShape",
                         "TensorArraySizeV3", "TensorArrayCloseV3",
                         "VariableShape"}) {
    r->RegisterNoGradient(op);
  }
}

}  // namespace weft
