// Helpers shared by the gradient functions (*_grad.cc). Internal.
#ifndef WEFT_GRAPH_BUILDER_GRAD_UTIL_H_
#define WEFT_GRAPH_BUILDER_GRAD_UTIL_H_

#include "graph/builder/scope.h"

namespace weft {
namespace grad_internal {

// A scalar constant of `dtype` (built in float, then cast if needed).
Output ScalarLike(const Scope& scope, float value, DataType dtype);

// Reduces the gradients `gx` of x and `gy` of y of a broadcasting binary op
// back to x's and y's shapes (BroadcastGradientArgs + Sum + Reshape), as
// TensorFlow does; invalid inputs stay invalid.
void ReduceForBroadcast(const Scope& scope, const Output& x, const Output& y,
                        Output* gx, Output* gy);

// The gradient of a reduction of `x` over `axes` with gradient `g` (of the
// reduced tensor): g reshaped to x's rank with the reduced dims kept as 1,
// then tiled to x's shape.
Output ReductionGrad(const Scope& scope, const Output& x, const Output& axes,
                     const Output& g);

}  // namespace grad_internal
}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_GRAD_UTIL_H_
