// Math-op wrappers: elementwise arithmetic (broadcasting as TensorFlow does),
// reductions, MatMul, casts and comparisons.
//
//   Output y = Add(scope, MatMul(scope, x, w), b);
//   Output loss = Mean(scope, Square(scope, Sub(scope, y, t)), Const(scope, 0));
//
// Errors are recorded in the scope and give an invalid Output (scope.h).
#ifndef WEFT_GRAPH_BUILDER_MATH_OPS_H_
#define WEFT_GRAPH_BUILDER_MATH_OPS_H_

#include <vector>

#include "graph/builder/scope.h"

namespace weft {

#define WEFT_BUILDER_BINARY(Name) \
  Output Name(const Scope& scope, const Output& x, const Output& y);
WEFT_BUILDER_BINARY(Add)
WEFT_BUILDER_BINARY(AddV2)
WEFT_BUILDER_BINARY(Sub)
WEFT_BUILDER_BINARY(Mul)
WEFT_BUILDER_BINARY(RealDiv)
WEFT_BUILDER_BINARY(Maximum)
WEFT_BUILDER_BINARY(Minimum)
WEFT_BUILDER_BINARY(Pow)
WEFT_BUILDER_BINARY(SquaredDifference)
WEFT_BUILDER_BINARY(Equal)
WEFT_BUILDER_BINARY(Greater)
WEFT_BUILDER_BINARY(GreaterEqual)
WEFT_BUILDER_BINARY(Less)
WEFT_BUILDER_BINARY(LessEqual)
#undef WEFT_BUILDER_BINARY

#define WEFT_BUILDER_UNARY(Name) \
  Output Name(const Scope& scope, const Output& x);
WEFT_BUILDER_UNARY(Neg)
WEFT_BUILDER_UNARY(Square)
WEFT_BUILDER_UNARY(Sqrt)
WEFT_BUILDER_UNARY(Rsqrt)
WEFT_BUILDER_UNARY(Exp)
WEFT_BUILDER_UNARY(Log)
WEFT_BUILDER_UNARY(Tanh)
WEFT_BUILDER_UNARY(Sigmoid)
WEFT_BUILDER_UNARY(Reciprocal)
WEFT_BUILDER_UNARY(Abs)
WEFT_BUILDER_UNARY(Sign)
#undef WEFT_BUILDER_UNARY

Output AddN(const Scope& scope, const std::vector<Output>& inputs);
Output MatMul(const Scope& scope, const Output& a, const Output& b,
              bool transpose_a = false, bool transpose_b = false);
// Batched matrix product of the last two dims; the batch dims broadcast
// (x [..., m, k] @ y [..., k, n]); adj_x / adj_y transpose those two dims.
Output BatchMatMulV2(const Scope& scope, const Output& x, const Output& y,
                     bool adj_x = false, bool adj_y = false);
// Reductions of x over `axes` (a scalar or vector; negative counts from the
// end): Sum, Mean, Max, Min, Prod.
#define WEFT_BUILDER_REDUCTIONS(X) X(Sum) X(Mean) X(Max) X(Min) X(Prod)
#define WEFT_BUILDER_REDUCTION(Name)                                     \
  Output Name(const Scope& scope, const Output& x, const Output& axes, \
              bool keep_dims = false);
WEFT_BUILDER_REDUCTIONS(WEFT_BUILDER_REDUCTION)
#undef WEFT_BUILDER_REDUCTION
Output Cast(const Scope& scope, const Output& x, DataType to);
Output ArgMax(const Scope& scope, const Output& x, const Output& axis,
              DataType out = DT_INT64);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_MATH_OPS_H_
