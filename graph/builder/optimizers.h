// Optimizers: the update ops TensorFlow's v1 optimizers build, for ref and
// resource variables.
//
//   std::unique_ptr<Optimizer> opt = NewAdamOptimizer({.learning_rate = 1e-3f});
//   TrainableVariable step = NewGlobalStep(root, VariableKind::kResource);
//   absl::StatusOr<Operation> train = opt->Minimize(root, loss, vars, &step);
//   // init: every variable's initializer plus opt->initializers()
//
// Minimize = ComputeGradients (AddGradients of the loss with respect to
// each variable) + ApplyGradients (one Apply* / ResourceApply* op per
// variable, then the optimizer's finishing updates, then global_step += 1
// after all of them). Towers and other replication call the two halves
// separately: compute per tower, average, apply once.
//
// Graph layout, as TensorFlow names it (optimizer name N = "GradientDescent",
// "Momentum" or "Adam", made unique per ApplyGradients call):
//   N/update_<var>/Apply...       the update of one variable
//   N/update                      a NoOp after all updates (with a step)
//   N                             the returned op: AssignAdd on the global
//                                 step, or the group of updates without one
//   <var>/Momentum, <var>/Adam, <var>/Adam_1    slot variables (zeros)
//   beta1_power, beta2_power      Adam's non-slot variables (TF v1), placed
//                                 with the first variable, updated in N/
// Hyper-parameters are Consts in the variable's dtype.
//
// Thread safety: an Optimizer is used from one thread, like its Scope.
// Ownership: the returned ops live in the scope's graph; the Optimizer only
// remembers the slots it made (one set per variable name, reused by later
// ApplyGradients calls on the same variable).
#ifndef WEFT_GRAPH_BUILDER_OPTIMIZERS_H_
#define WEFT_GRAPH_BUILDER_OPTIMIZERS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/builder/gradients.h"
#include "graph/builder/scope.h"
#include "graph/builder/variables.h"

namespace weft {

struct GradAndVar {
  Output grad;  // same shape and dtype as the variable's value
  TrainableVariable var;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // "GradientDescent", "Momentum" or "Adam".
  const std::string& name() const { return name_; }

  // The gradient of `loss` for each variable, in order. `options` as for
  // AddGradients (colocate_with_ops for model parallelism).
  absl::StatusOr<std::vector<GradAndVar>> ComputeGradients(
      const Scope& scope, const Output& loss,
      const std::vector<TrainableVariable>& vars,
      const GradientOptions& options = GradientOptions()) const;

  // The update ops; `global_step` (may be null) is incremented after all of
  // them. Returns the op to run once per training step. Virtual for
  // wrappers that aggregate before applying (SyncReplicasOptimizer).
  virtual absl::StatusOr<Operation> ApplyGradients(
      const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
      const TrainableVariable* global_step = nullptr);

  absl::StatusOr<Operation> Minimize(const Scope& scope, const Output& loss,
                                     const std::vector<TrainableVariable>& vars,
                                     const TrainableVariable* global_step =
                                         nullptr);

  // Initializers of every slot and non-slot variable made so far.
  virtual std::vector<Operation> initializers() const;
  // Slot `slot` ("Momentum", "m", "v") of variable `var_name`, or null.
  const TrainableVariable* slot(const std::string& var_name,
                                const std::string& slot) const;

 protected:
  explicit Optimizer(std::string name) : name_(std::move(name)) {}

  // Makes the slots of `var` (called once per variable) and any non-slot
  // variables (first is the first variable of the first call).
  virtual absl::Status CreateSlots(const Scope& scope,
                                   const TrainableVariable& var, bool first) {
    (void)scope, (void)var, (void)first;
    return absl::OkStatus();
  }
  // The update of one variable, built in `scope` ("N/update_<var>").
  virtual Operation ApplyDense(const Scope& scope, const Output& grad,
                               const TrainableVariable& var) = 0;
  // The op that completes a step once `updates` ran: helper nodes go in
  // `scope` ("N/"), the returned op is built through `result` (which names
  // it). By default a group of the updates.
  virtual Operation Finish(const Scope& scope,
                           const std::vector<Operation>& updates,
                           const Scope& result);
  // A hyper-parameter Const "N/<name>" in `dtype` (cast from float).
  static Output Hyper(const Scope& scope, absl::string_view name, float value,
                      DataType dtype);

  // For subclasses: remembers a slot / non-slot variable.
  const TrainableVariable& AddSlot(const std::string& var_name,
                                   const std::string& slot,
                                   TrainableVariable v);
  void AddNonSlot(TrainableVariable v) { non_slots_.push_back(std::move(v)); }
  const std::vector<TrainableVariable>& non_slots() const {
    return non_slots_;
  }

 private:
  std::string name_;
  std::map<std::string, std::map<std::string, TrainableVariable>> slots_;
  std::vector<TrainableVariable> non_slots_;
  bool created_non_slots_ = false;
};

// An optimizer that transforms the gradients (aggregates them, averages
// them across tasks) and hands the updates to the optimizer it wraps: a
// subclass overrides ApplyGradients and calls wrapped()->ApplyGradients.
// Slots and initializers are the wrapped optimizer's.
class WrappedOptimizer : public Optimizer {
 public:
  std::vector<Operation> initializers() const override {
    return wrapped_->initializers();
  }

 protected:
  WrappedOptimizer(std::string name, std::unique_ptr<Optimizer> wrapped)
      : Optimizer(std::move(name)), wrapped_(std::move(wrapped)) {}
  Optimizer* wrapped() const { return wrapped_.get(); }
  // Never called (ApplyGradients delegates the updates): an INTERNAL error
  // in the scope naming the variable.
  Operation ApplyDense(const Scope& scope, const Output& grad,
                       const TrainableVariable& var) final;

 private:
  const std::unique_ptr<Optimizer> wrapped_;
};

struct GradientDescentOptions {
  float learning_rate = 0.01f;
};
struct MomentumOptions {
  float learning_rate = 0.01f;
  float momentum = 0.9f;
  bool use_nesterov = false;
};
struct AdamOptions {
  float learning_rate = 0.001f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
};

std::unique_ptr<Optimizer> NewGradientDescentOptimizer(
    const GradientDescentOptions& options);
std::unique_ptr<Optimizer> NewMomentumOptimizer(const MomentumOptions& options);
std::unique_ptr<Optimizer> NewAdamOptimizer(const AdamOptions& options);

// By name, as the CLI spells it: "sgd", "momentum", "nesterov" or "adam",
// with `learning_rate` and the other options at their defaults.
// INVALID_ARGUMENT for another name.
absl::StatusOr<std::unique_ptr<Optimizer>> NewOptimizerByName(
    absl::string_view name, float learning_rate);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_OPTIMIZERS_H_
