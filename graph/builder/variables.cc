#include "graph/builder/variables.h"

#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/state_ops.h"

namespace weft {

absl::Status ParseVariableKind(absl::string_view text, VariableKind* kind) {
  if (text == "ref") {
    *kind = VariableKind::kRef;
  } else if (text == "resource") {
    *kind = VariableKind::kResource;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "variable kind must be 'ref' or 'resource', not '", text, "'"));
  }
  return absl::OkStatus();
}

TrainableVariable NewTrainableVariable(const Scope& scope,
                                       const std::vector<int64_t>& shape,
                                       DataType dtype,
                                       const Output& initial_value,
                                       VariableKind kind) {
  TrainableVariable t;
  t.kind = kind;
  t.dtype = dtype;
  t.shape = shape;
  if (kind == VariableKind::kRef) {
    Variable v = NewVariable(scope, shape, dtype, initial_value);
    t.var = v.ref;
    t.value = v.value;
    t.initializer = v.initializer;
  } else {
    ResourceVariable v = NewResourceVariable(scope, shape, dtype, initial_value);
    t.var = v.handle;
    t.value = v.value;
    t.initializer = v.initializer;
  }
  t.name = t.var.node;
  return t;
}

TrainableVariable NewSlot(const Scope& scope, const TrainableVariable& primary,
                          absl::string_view slot_name) {
  if (!primary.valid()) {
    scope.UpdateStatus(absl::InvalidArgumentError(absl::StrCat(
        "slot '", slot_name, "' of a variable that failed to build")));
    return TrainableVariable();
  }
  const std::string name = absl::StrCat(primary.name, "/", slot_name);
  Scope at = scope.WithAbsoluteNameScope("").ColocateWith(primary.var.op());
  // Fill rather than a Const of zeros keeps the GraphDef small for big
  // variables.
  std::vector<int32_t> dims(primary.shape.begin(), primary.shape.end());
  Scope init = at.NewSubScope(absl::StrCat(name, "/Initializer"));
  Output zero = Const(init.WithOpName("zero"), 0.f);
  if (primary.dtype != DT_FLOAT) zero = Cast(init, zero, primary.dtype);
  Output zeros = Fill(init.WithOpName("zeros"),
                      Const(init.WithOpName("shape"), dims,
                            TensorShape({static_cast<int64_t>(dims.size())})),
                      zero);
  return NewTrainableVariable(at.WithOpName(name), primary.shape,
                              primary.dtype, zeros, primary.kind);
}

TrainableVariable NewGlobalStep(const Scope& scope, VariableKind kind) {
  Scope init = scope.NewSubScope("global_step/Initializer");
  Output zero = Const(init.WithOpName("zeros"), int64_t{0});
  return NewTrainableVariable(scope.WithOpName("global_step"), {}, DT_INT64,
                              zero, kind);
}

Operation AssignAddTo(const Scope& scope, const TrainableVariable& var,
                      const Output& value) {
  if (var.kind == VariableKind::kRef) {
    return AddNode1(scope, "AssignAdd", {var.var, value}).op();
  }
  return AddNode0(scope, "AssignAddVariableOp", {var.var, value},
                  {{"dtype", Attr(var.dtype)}});
}

Operation AssignTo(const Scope& scope, const TrainableVariable& var,
                   const Output& value) {
  if (var.kind == VariableKind::kRef) {
    return AddNode1(scope, "Assign", {var.var, value}).op();
  }
  return AssignVariable(scope, var.var, value);
}

Operation Group(const Scope& scope, const std::vector<Operation>& ops) {
  return NoOp(scope.WithControlDependencies(ops));
}

}  // namespace weft
