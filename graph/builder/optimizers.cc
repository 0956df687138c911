#include "graph/builder/optimizers.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/gradients.h"
#include "graph/builder/math_ops.h"
#include "runtime/core/status.h"

namespace weft {

absl::StatusOr<std::vector<GradAndVar>> Optimizer::ComputeGradients(
    const Scope& scope, const Output& loss,
    const std::vector<TrainableVariable>& vars,
    const GradientOptions& options) const {
  std::vector<Output> xs;
  for (const TrainableVariable& v : vars) {
    if (!v.valid()) {
      return absl::InvalidArgumentError(absl::StrCat(
          name_, ": variable '", v.name, "' failed to build"));
    }
    xs.push_back(v.grad_target());
  }
  std::vector<Output> grads;
  WEFT_RETURN_IF_ERROR(AddGradients(scope, {loss}, xs, {}, options, &grads));
  std::vector<GradAndVar> out;
  for (size_t i = 0; i < vars.size(); ++i) {
    // A resource variable the loss does not use gets AddGradients' zeros
    // of its handle; zeros of its value are what the update needs.
    if (BaseType(grads[i].dtype) == DT_RESOURCE) {
      grads[i] = ZerosLike(scope, vars[i].value);
    }
    out.push_back({grads[i], vars[i]});
  }
  return out;
}

absl::StatusOr<Operation> Optimizer::ApplyGradients(
    const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
    const TrainableVariable* global_step) {
  WEFT_RETURN_IF_ERROR(scope.status());
  if (grads_and_vars.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": no variables to update"));
  }
  for (const GradAndVar& gv : grads_and_vars) {
    if (!gv.var.valid() || !gv.grad.valid()) {
      return absl::InvalidArgumentError(absl::StrCat(
          name_, ": variable '", gv.var.name, "' or its gradient is invalid"));
    }
    if (BaseType(gv.grad.dtype) != gv.var.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          name_, ": the gradient of '", gv.var.name, "' is ",
          DataTypeString(gv.grad.dtype), ", the variable ",
          DataTypeString(gv.var.dtype)));
    }
    if (slots_.count(gv.var.name) == 0) {
      slots_[gv.var.name];  // marks the variable as having its slots
      WEFT_RETURN_IF_ERROR(CreateSlots(scope, gv.var, !created_non_slots_));
      created_non_slots_ = true;
    }
  }
  Scope opt = scope.NewSubScope(name_);
  const std::string op_name = opt.name_scope();
  // Ref variables are written in place (ops/cpu/state_update.h): a read of
  // one that the backward pass still uses (dX = dY * W^T) would see W's
  // update if that ran first, TensorFlow 1.x's race. Here the updates wait
  // for every gradient, so they all come from one set of values.
  std::optional<Operation> gradients_ready;
  for (const GradAndVar& gv : grads_and_vars) {
    if (gv.var.kind != VariableKind::kRef) continue;
    std::vector<Operation> grads;
    for (const GradAndVar& g : grads_and_vars) grads.push_back(g.grad.op());
    gradients_ready = NoOp(opt.WithOpName("gradients_ready").WithControlDependencies(grads));
    break;
  }
  std::vector<Operation> updates;
  for (const GradAndVar& gv : grads_and_vars) {
    Scope update = opt.NewSubScope(absl::StrCat("update_", gv.var.name));
    if (gradients_ready.has_value()) {
      update = update.WithControlDependencies({*gradients_ready});
    }
    // Updates run where their variable lives, as TensorFlow places them.
    const tensorflow::NodeDef* node = scope.FindNode(gv.var.name);
    if (node != nullptr && !node->device().empty()) {
      update = update.WithDevice(node->device());
    }
    updates.push_back(ApplyDense(update, gv.grad, gv.var));
  }
  Operation result;
  Scope top = opt.WithAbsoluteNameScope("").WithExactName(op_name);
  if (global_step == nullptr) {
    result = Finish(opt, updates, top);
  } else {
    Operation finished = Finish(opt, updates, opt.WithOpName("update"));
    Scope step = top.WithControlDependencies({finished})
                     .ColocateWith(global_step->var.op());
    Output one = Const(opt.WithOpName("one"), int64_t{1});
    result = AssignAddTo(step, *global_step, one);
  }
  WEFT_RETURN_IF_ERROR(scope.status());
  return result;
}

absl::StatusOr<Operation> Optimizer::Minimize(
    const Scope& scope, const Output& loss,
    const std::vector<TrainableVariable>& vars,
    const TrainableVariable* global_step) {
  WEFT_ASSIGN_OR_RETURN(std::vector<GradAndVar> gvs,
                        ComputeGradients(scope, loss, vars));
  return ApplyGradients(scope, gvs, global_step);
}

Operation Optimizer::Finish(const Scope& scope,
                            const std::vector<Operation>& updates,
                            const Scope& result) {
  (void)scope;
  return Group(result, updates);
}

std::vector<Operation> Optimizer::initializers() const {
  std::vector<Operation> ops;
  for (const TrainableVariable& v : non_slots_) ops.push_back(v.initializer);
  for (const auto& [var, slots] : slots_) {
    for (const auto& [name, v] : slots) ops.push_back(v.initializer);
  }
  return ops;
}

Operation WrappedOptimizer::ApplyDense(const Scope& scope, const Output&,
                                       const TrainableVariable& var) {
  scope.UpdateStatus(absl::InternalError(absl::StrCat(
      name(), " has no update of its own for '", var.name, "'")));
  return Operation();
}

const TrainableVariable* Optimizer::slot(const std::string& var_name,
                                         const std::string& slot) const {
  auto it = slots_.find(var_name);
  if (it == slots_.end()) return nullptr;
  auto jt = it->second.find(slot);
  return jt == it->second.end() ? nullptr : &jt->second;
}

const TrainableVariable& Optimizer::AddSlot(const std::string& var_name,
                                            const std::string& slot,
                                            TrainableVariable v) {
  return slots_[var_name][slot] = std::move(v);
}

Output Optimizer::Hyper(const Scope& scope, absl::string_view name,
                        float value, DataType dtype) {
  Output c = Const(scope.WithOpName(name), value);
  return dtype == DT_FLOAT ? c : Cast(scope, c, dtype);
}

}  // namespace weft

namespace weft {

absl::StatusOr<std::unique_ptr<Optimizer>> NewOptimizerByName(
    absl::string_view name, float learning_rate) {
  if (name == "sgd") return NewGradientDescentOptimizer({learning_rate});
  if (name == "momentum" || name == "nesterov") {
    MomentumOptions o;
    o.learning_rate = learning_rate;
    o.use_nesterov = name == "nesterov";
    return NewMomentumOptimizer(o);
  }
  if (name == "adam") {
    AdamOptions o;
    o.learning_rate = learning_rate;
    return NewAdamOptimizer(o);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown optimizer '", name, "' (sgd, momentum, nesterov or adam)"));
}

}  // namespace weft
