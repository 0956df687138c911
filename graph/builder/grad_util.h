// Helpers shared by the gradient functions (*_grad.cc). Internal.
#ifndef WEFT_GRAPH_BUILDER_GRAD_UTIL_H_
#define WEFT_GRAPH_BUILDER_GRAD_UTIL_H_

#include <initializer_list>

#include "graph/builder/scope.h"
#include "proto/node_def.pb.h"

namespace weft {
namespace grad_internal {

// A scalar constant of `dtype` (built in float, then cast if needed).
Output ScalarLike(const Scope& scope, float value, DataType dtype);

// The forward node's attrs among `names` (those it has), to pass on
// unchanged to a backprop op (Conv2D's strides, StridedSlice's masks, ...).
AttrList CopyAttrs(const tensorflow::NodeDef& node,
                   std::initializer_list<const char*> names);

// conj(x) for complex x, x itself otherwise: TensorFlow's gradients of
// Mul, RealDiv, Square, Exp, Log and MatMul conjugate (for a real loss L
// of complex z, they propagate dL/d(real z) + i dL/d(imag z)).
Output ConjIfComplex(const Scope& scope, const Output& x);

// Rank(x) as an int32 scalar, and int32 [start, limit) as a vector.
Output RankOf(const Scope& scope, const Output& x);
Output RangeOf(const Scope& scope, const Output& start, const Output& limit);

// `axes` (a scalar or vector of any int type; negative counts from the
// end) as an int32 vector in [0, rank).
Output NonNegativeAxes(const Scope& scope, const Output& axes,
                       const Output& rank);

// Reduces the gradients `gx` of x and `gy` of y of a broadcasting binary op
// back to x's and y's shapes (BroadcastGradientArgs + Sum + Reshape), as
// TensorFlow does; invalid inputs stay invalid.
void ReduceForBroadcast(const Scope& scope, const Output& x, const Output& y,
                        Output* gx, Output* gy);

// x's shape with the dims in `axes` (any int type, negative allowed) set to
// 1: the shape of a keep_dims reduction of x over axes.
Output KeptShape(const Scope& scope, const Output& x, const Output& axes);

// The gradient of a reduction of `x` over `axes` with gradient `g` (of the
// reduced tensor): g reshaped to x's rank with the reduced dims kept as 1,
// then tiled to x's shape.
Output ReductionGrad(const Scope& scope, const Output& x, const Output& axes,
                     const Output& g);

}  // namespace grad_internal
}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_GRAD_UTIL_H_
