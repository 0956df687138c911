// Trainable variables of either kind, slots and the global step: what
// optimizers (optimizers.h) and models (graph/models/) build on.
//
//   TrainableVariable w = NewTrainableVariable(
//       scope.WithOpName("w"), {784, 10}, DT_FLOAT,
//       TruncatedNormal(scope, {784, 10}, DT_FLOAT, 0.f, 0.1f, /*seed=*/1),
//       VariableKind::kResource);
//   Output y = MatMul(scope, x, w.value);
//   TrainableVariable step = NewGlobalStep(root, VariableKind::kRef);
//
// A kRef variable is TF1's VariableV2 (+ "<name>/Assign", "<name>/read");
// a kResource one is VarHandleOp (+ "<name>/Assign", "<name>/Read"); see
// state_ops.h. Errors are recorded in the scope (scope.h); the returned
// variable then has invalid Outputs.
#ifndef WEFT_GRAPH_BUILDER_VARIABLES_H_
#define WEFT_GRAPH_BUILDER_VARIABLES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/builder/scope.h"

namespace weft {

enum class VariableKind { kRef, kResource };

// Parses "ref" / "resource"; INVALID_ARGUMENT otherwise.
absl::Status ParseVariableKind(absl::string_view text, VariableKind* kind);

struct TrainableVariable {
  std::string name;  // the variable node: VariableV2 or VarHandleOp
  VariableKind kind = VariableKind::kRef;
  DataType dtype = DT_INVALID;
  std::vector<int64_t> shape;
  Output var;             // kRef: the Ref(T) output; kResource: the handle
  Output value;           // the value model code reads (Identity / Read)
  Operation initializer;  // assigns the initial value

  bool valid() const { return var.valid() && value.valid(); }
  // What AddGradients differentiates with respect to: the handle of a
  // resource variable (the gradient flows through every ReadVariableOp),
  // the read Identity of a ref variable.
  Output grad_target() const {
    return kind == VariableKind::kResource ? var : value;
  }
};

// A variable named by the scope (WithOpName), initialized to `initial_value`.
TrainableVariable NewTrainableVariable(const Scope& scope,
                                       const std::vector<int64_t>& shape,
                                       DataType dtype,
                                       const Output& initial_value,
                                       VariableKind kind);

// A zero-initialized variable shaped like `primary`, named
// "<primary.name>/<slot_name>" (made unique), of the same kind, colocated
// with it: the per-variable state of an optimizer (Momentum's accumulator,
// Adam's m and v). `scope` supplies the device and is otherwise ignored.
TrainableVariable NewSlot(const Scope& scope, const TrainableVariable& primary,
                          absl::string_view slot_name);

// The int64 scalar "global_step" (made unique), initialized to 0.
TrainableVariable NewGlobalStep(const Scope& scope, VariableKind kind);

// var += value: AssignAdd (kRef) or AssignAddVariableOp (kResource).
Operation AssignAddTo(const Scope& scope, const TrainableVariable& var,
                      const Output& value);
// var = value: Assign (kRef) or AssignVariableOp (kResource).
Operation AssignTo(const Scope& scope, const TrainableVariable& var,
                   const Output& value);

// A NoOp that runs after every op in `ops` (tf.group).
Operation Group(const Scope& scope, const std::vector<Operation>& ops);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_VARIABLES_H_
