// Variables and random initializers.
//
//   Variable w = NewVariable(scope.WithOpName("w"), {784, 10}, DT_FLOAT,
//                            RandomNormal(scope, {784, 10}, DT_FLOAT, 0.f, 0.1f));
//   ResourceVariable v = NewResourceVariable(scope.WithOpName("v"), {10},
//                                            DT_FLOAT, Const(scope, ...));
//   session->Run({}, {}, {w.initializer.node, v.initializer.node}, nullptr);
//
// Variable is the TF1 reference variable (VariableV2 + Assign); its `value`
// is an Identity of the ref (what graph code reads). ResourceVariable is
// VarHandleOp + AssignVariableOp + ReadVariableOp; `value` reads it.
#ifndef WEFT_GRAPH_BUILDER_STATE_OPS_H_
#define WEFT_GRAPH_BUILDER_STATE_OPS_H_

#include <cstdint>
#include <vector>

#include "graph/builder/scope.h"

namespace weft {

struct Variable {
  Output ref;          // VariableV2, dtype Ref(T)
  Output value;        // Identity(ref): the value graph code uses
  Operation initializer;  // Assign(ref, initial_value)
};
// Named by the scope (WithOpName); initializer and value are "<name>/Assign"
// and "<name>/read" as in TensorFlow.
Variable NewVariable(const Scope& scope, const std::vector<int64_t>& shape,
                     DataType dtype, const Output& initial_value);

struct ResourceVariable {
  Output handle;       // VarHandleOp (shared_name = node name)
  Output value;        // ReadVariableOp at construction
  Operation initializer;  // AssignVariableOp
};
ResourceVariable NewResourceVariable(const Scope& scope,
                                     const std::vector<int64_t>& shape,
                                     DataType dtype,
                                     const Output& initial_value);
// A fresh read of the variable.
Output ReadVariable(const Scope& scope, const Output& handle, DataType dtype);
Operation AssignVariable(const Scope& scope, const Output& handle,
                         const Output& value);

// Random tensors of a static shape (seed 0 and seed2 0 mean "random").
Output RandomUniform(const Scope& scope, const std::vector<int64_t>& shape,
                     DataType dtype, int64_t seed = 0, int64_t seed2 = 0);
Output RandomNormal(const Scope& scope, const std::vector<int64_t>& shape,
                    DataType dtype, float mean, float stddev,
                    int64_t seed = 0, int64_t seed2 = 0);
Output TruncatedNormal(const Scope& scope, const std::vector<int64_t>& shape,
                       DataType dtype, float mean, float stddev,
                       int64_t seed = 0, int64_t seed2 = 0);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_STATE_OPS_H_
