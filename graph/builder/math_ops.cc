#include "graph/builder/math_ops.h"

namespace weft {

#define WEFT_BUILDER_BINARY(Name)                                      \
  Output Name(const Scope& scope, const Output& x, const Output& y) { \
    return AddNode1(scope, #Name, {x, y});                             \
  }
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

#define WEFT_BUILDER_UNARY(Name)                     \
  Output Name(const Scope& scope, const Output& x) { \
    return AddNode1(scope, #Name, {x});              \
  }
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

Output AddN(const Scope& scope, const std::vector<Output>& inputs) {
  return AddNode1(scope, "AddN", {Input(inputs)});
}
Output MatMul(const Scope& scope, const Output& a, const Output& b,
              bool transpose_a, bool transpose_b) {
  return AddNode1(scope, "MatMul", {a, b},
                  {{"transpose_a", Attr(transpose_a)},
                   {"transpose_b", Attr(transpose_b)}});
}
Output BatchMatMulV2(const Scope& scope, const Output& x, const Output& y,
                     bool adj_x, bool adj_y) {
  return AddNode1(scope, "BatchMatMulV2", {x, y},
                  {{"adj_x", Attr(adj_x)}, {"adj_y", Attr(adj_y)}});
}
#define WEFT_BUILDER_REDUCTION(Name)                                     \
  Output Name(const Scope& scope, const Output& x, const Output& axes, \
              bool keep_dims) {                                         \
    return AddNode1(scope, #Name, {x, axes},                            \
                    {{"keep_dims", Attr(keep_dims)}});                  \
  }
WEFT_BUILDER_REDUCTIONS(WEFT_BUILDER_REDUCTION)
#undef WEFT_BUILDER_REDUCTION
Output Cast(const Scope& scope, const Output& x, DataType to) {
  return AddNode1(scope, "Cast", {x}, {{"DstT", Attr(to)}});
}
Output ArgMax(const Scope& scope, const Output& x, const Output& axis,
              DataType out) {
  return AddNode1(scope, "ArgMax", {x, axis}, {{"output_type", Attr(out)}});
}

}  // namespace weft
