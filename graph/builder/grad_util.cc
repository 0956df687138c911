#include "graph/builder/grad_util.h"

#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"

namespace weft {
namespace grad_internal {

Output ScalarLike(const Scope& scope, float value, DataType dtype) {
  Output c = Const(scope, value);
  return BaseType(dtype) == DT_FLOAT ? c : Cast(scope, c, BaseType(dtype));
}

AttrList CopyAttrs(const tensorflow::NodeDef& node,
                   std::initializer_list<const char*> names) {
  AttrList attrs;
  for (const char* name : names) {
    auto it = node.attr().find(name);
    if (it != node.attr().end()) attrs.emplace_back(name, it->second);
  }
  return attrs;
}

Output ConjIfComplex(const Scope& scope, const Output& x) {
  const DataType t = BaseType(x.dtype);
  if (t != DT_COMPLEX64 && t != DT_COMPLEX128) return x;
  return AddNode1(scope, "Conj", {x});
}

Output RankOf(const Scope& scope, const Output& x) {
  return AddNode1(scope, "Rank", {x});
}

Output RangeOf(const Scope& scope, const Output& start, const Output& limit) {
  return AddNode1(scope, "Range", {start, limit, Const(scope, 1)});
}

Output NonNegativeAxes(const Scope& scope, const Output& axes,
                       const Output& rank) {
  Output a = Cast(scope, Reshape(scope, axes, Const(scope, {-1})), DT_INT32);
  // max(rank, 1): a scalar has no axes, but FloorMod must not divide by 0.
  return AddNode1(scope, "FloorMod", {AddV2(scope, a, rank),
                                      Maximum(scope, rank, Const(scope, 1))});
}

void ReduceForBroadcast(const Scope& scope, const Output& x, const Output& y,
                        Output* gx, Output* gy) {
  Output sx = Shape(scope, x), sy = Shape(scope, y);
  BroadcastArgs r = BroadcastGradientArgs(scope, sx, sy);
  if (gx->valid()) *gx = Reshape(scope, Sum(scope, *gx, r.r0), sx);
  if (gy->valid()) *gy = Reshape(scope, Sum(scope, *gy, r.r1), sy);
}

namespace {
// (s - 1) * m for shape s, with m[d] = 1 where dim d is in `axes`.
Output ReducedDimsMinusOne(const Scope& scope, const Output& shape,
                           const Output& axes) {
  Output rank = AddNode1(scope, "Size", {shape}, {{"out_type", Attr(DT_INT32)}});
  Output a = NonNegativeAxes(scope, axes, rank);
  Output dims = RangeOf(scope, Const(scope, 0), rank);
  Output hit = Equal(scope, ExpandDims(scope, dims, Const(scope, 1)),
                     ExpandDims(scope, a, Const(scope, 0)));
  Output mask = Sum(scope, Cast(scope, hit, DT_INT32), Const(scope, 1));
  return Mul(scope, Sub(scope, shape, Const(scope, 1)), mask);
}
}  // namespace

Output KeptShape(const Scope& scope, const Output& x, const Output& axes) {
  Output shape = Shape(scope, x);
  return Sub(scope, shape, ReducedDimsMinusOne(scope, shape, axes));
}

Output ReductionGrad(const Scope& scope, const Output& x, const Output& axes,
                     const Output& g) {
  // With shape s and the reduced axes as a 0/1 mask m over dims:
  // kept = s - (s - 1) * m, multiples = 1 + (s - 1) * m.
  Output shape = Shape(scope, x);
  Output s_minus_1 = ReducedDimsMinusOne(scope, shape, axes);
  Output kept = Sub(scope, shape, s_minus_1);
  Output multiples = AddV2(scope, Const(scope, 1), s_minus_1);
  return Tile(scope, Reshape(scope, g, kept), multiples);
}

}  // namespace grad_internal
}  // namespace weft
