#include "graph/builder/state_ops.h"

#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"

namespace weft {

namespace {
Output ShapeConst(const Scope& scope, const std::vector<int64_t>& shape) {
  std::vector<int32_t> dims(shape.begin(), shape.end());
  return Const(scope.WithOpName("shape"), dims,
               TensorShape({static_cast<int64_t>(dims.size())}));
}
Output RandomOp(const Scope& scope, const char* op,
                const std::vector<int64_t>& shape, DataType dtype,
                int64_t seed, int64_t seed2) {
  Output dims = ShapeConst(scope.NewSubScope(""), shape);
  return AddNode1(scope, op, {dims},
                  {{"dtype", Attr(dtype)},
                   {"seed", Attr(seed)},
                   {"seed2", Attr(seed2)}});
}
Output ScaleShift(const Scope& scope, const Output& x, float mean,
                  float stddev) {
  Scope inner = scope.NewSubScope("");  // drops the op name
  Output s = Cast(inner, Const(inner, stddev), x.dtype);
  Output m = Cast(inner, Const(inner, mean), x.dtype);
  return AddV2(scope, Mul(inner, x, s), m);
}
}  // namespace

Variable NewVariable(const Scope& scope, const std::vector<int64_t>& shape,
                     DataType dtype, const Output& initial_value) {
  Variable v;
  v.ref = AddNode1(scope, "VariableV2", {},
                   {{"shape", ShapeAttr(shape)}, {"dtype", Attr(dtype)}});
  if (!v.ref.valid()) return v;
  Scope sub = scope.WithAbsoluteNameScope(v.ref.node);
  v.initializer =
      AddNode1(sub.WithOpName("Assign"), "Assign", {v.ref, initial_value})
          .op();
  v.value = Identity(sub.WithOpName("read"), v.ref);
  return v;
}

ResourceVariable NewResourceVariable(const Scope& scope,
                                     const std::vector<int64_t>& shape,
                                     DataType dtype,
                                     const Output& initial_value) {
  ResourceVariable v;
  std::string name = scope.UniqueNodeName("Variable");
  v.handle = AddNode1(scope.WithExactName(name), "VarHandleOp", {},
                      {{"shape", ShapeAttr(shape)},
                       {"dtype", Attr(dtype)},
                       {"shared_name", Attr(name)}});
  if (!v.handle.valid()) return v;
  Scope sub = scope.WithAbsoluteNameScope(name);
  v.initializer = AssignVariable(sub.WithOpName("Assign"), v.handle,
                                 initial_value);
  v.value = ReadVariable(sub.WithOpName("Read"), v.handle, dtype);
  return v;
}

Output ReadVariable(const Scope& scope, const Output& handle, DataType dtype) {
  return AddNode1(scope, "ReadVariableOp", {handle}, {{"dtype", Attr(dtype)}});
}

Operation AssignVariable(const Scope& scope, const Output& handle,
                         const Output& value) {
  return AddNode0(scope, "AssignVariableOp", {handle, value},
                  {{"dtype", Attr(value.dtype)}});
}

Output RandomUniform(const Scope& scope, const std::vector<int64_t>& shape,
                     DataType dtype, int64_t seed, int64_t seed2) {
  return RandomOp(scope, "RandomUniform", shape, dtype, seed, seed2);
}
Output RandomNormal(const Scope& scope, const std::vector<int64_t>& shape,
                    DataType dtype, float mean, float stddev, int64_t seed,
                    int64_t seed2) {
  return ScaleShift(
      scope, RandomOp(scope.NewSubScope(""), "RandomStandardNormal", shape, dtype, seed, seed2),
      mean, stddev);
}
Output TruncatedNormal(const Scope& scope, const std::vector<int64_t>& shape,
                       DataType dtype, float mean, float stddev, int64_t seed,
                       int64_t seed2) {
  return ScaleShift(
      scope, RandomOp(scope.NewSubScope(""), "TruncatedNormal", shape, dtype, seed, seed2),
      mean, stddev);
}

}  // namespace weft
