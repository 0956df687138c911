#include "graph/builder/grad_util.h"

#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"

namespace weft {
namespace grad_internal {

Output ScalarLike(const Scope& scope, float value, DataType dtype) {
  Output c = Const(scope, value);
  return BaseType(dtype) == DT_FLOAT ? c : Cast(scope, c, BaseType(dtype));
}

void ReduceForBroadcast(const Scope& scope, const Output& x, const Output& y,
                        Output* gx, Output* gy) {
  Output sx = Shape(scope, x), sy = Shape(scope, y);
  BroadcastArgs r = BroadcastGradientArgs(scope, sx, sy);
  if (gx->valid()) *gx = Reshape(scope, Sum(scope, *gx, r.r0), sx);
  if (gy->valid()) *gy = Reshape(scope, Sum(scope, *gy, r.r1), sy);
}

Output ReductionGrad(const Scope& scope, const Output& x, const Output& axes,
                     const Output& g) {
  // With shape s (rank r) and the reduced axes as a 0/1 mask m over dims:
  // kept = s - (s - 1) * m, multiples = 1 + (s - 1) * m.
  Output shape = Shape(scope, x);
  Output rank = AddNode1(scope, "Size", {shape}, {{"out_type", Attr(DT_INT32)}});
  Output one = Const(scope, 1);
  Output a = Cast(scope, Reshape(scope, axes, Const(scope, {-1})), DT_INT32);
  a = AddNode1(scope, "FloorMod", {AddV2(scope, a, rank), rank});
  Output dims = AddNode1(scope, "Range", {Const(scope, 0), rank, one});
  Output hit = Equal(scope, ExpandDims(scope, dims, Const(scope, 1)),
                     ExpandDims(scope, a, Const(scope, 0)));
  Output mask = Sum(scope, Cast(scope, hit, DT_INT32), Const(scope, 1));
  Output s_minus_1 = Mul(scope, Sub(scope, shape, one), mask);
  Output kept = Sub(scope, shape, s_minus_1);
  Output multiples = AddV2(scope, one, s_minus_1);
  return Tile(scope, Reshape(scope, g, kept), multiples);
}

}  // namespace grad_internal
}  // namespace weft
