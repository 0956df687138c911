// Adam as TensorFlow v1 builds it: slots "<var>/Adam" (m) and "<var>/Adam_1"
// (v); non-slot scalars beta1_power and beta2_power (initialized to beta1,
// beta2, placed with the first variable) that each step multiplies by
// beta1/beta2 after every ApplyAdam has read them.
#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/optimizers.h"
#include "graph/builder/state_ops.h"

namespace weft {
namespace {

class Adam : public Optimizer {
 public:
  explicit Adam(const AdamOptions& o) : Optimizer("Adam"), options_(o) {}

 protected:
  absl::Status CreateSlots(const Scope& s, const TrainableVariable& var,
                           bool first) override {
    if (first) {
      Scope at = s.WithAbsoluteNameScope("").ColocateWith(var.var.op());
      for (auto [name, beta] : {std::pair{"beta1_power", options_.beta1},
                                std::pair{"beta2_power", options_.beta2}}) {
        Scope init = at.NewSubScope(absl::StrCat(name, "/Initializer"));
        Output value = Hyper(init, "initial_value", beta, var.dtype);
        AddNonSlot(NewTrainableVariable(at.WithOpName(name), {}, var.dtype,
                                        value, var.kind));
      }
    }
    AddSlot(var.name, "m", NewSlot(s, var, "Adam"));
    AddSlot(var.name, "v", NewSlot(s, var, "Adam_1"));
    return s.status();
  }

  Operation ApplyDense(const Scope& s, const Output& grad,
                       const TrainableVariable& var) override {
    const TrainableVariable* m = slot(var.name, "m");
    const TrainableVariable* v = slot(var.name, "v");
    std::vector<Input> inputs = {var.var, m->var, v->var};
    for (const TrainableVariable& power : non_slots()) {
      Output read = Read(s, power);
      inputs.push_back(power.dtype == var.dtype ? read
                                                : Cast(s, read, var.dtype));
    }
    inputs.push_back(Hyper(s, "learning_rate", options_.learning_rate,
                           var.dtype));
    inputs.push_back(Hyper(s, "beta1", options_.beta1, var.dtype));
    inputs.push_back(Hyper(s, "beta2", options_.beta2, var.dtype));
    inputs.push_back(Hyper(s, "epsilon", options_.epsilon, var.dtype));
    inputs.push_back(grad);
    if (var.kind == VariableKind::kRef) {
      return AddNode1(s, "ApplyAdam", inputs).op();
    }
    return AddNode0(s, "ResourceApplyAdam", inputs);
  }

  Operation Finish(const Scope& s, const std::vector<Operation>& updates,
                   const Scope& result) override {
    std::vector<Operation> all = updates;
    Scope after = s.WithControlDependencies(updates);
    const float betas[] = {options_.beta1, options_.beta2};
    for (size_t i = 0; i < non_slots().size(); ++i) {
      const TrainableVariable& power = non_slots()[i];
      Scope at = after.ColocateWith(power.var.op());
      Output next = Mul(at, Read(at, power),
                        Hyper(at, "beta", betas[i], power.dtype));
      all.push_back(AssignTo(at.WithOpName("Assign"), power, next));
    }
    return Group(result, all);
  }

 private:
  // A read of a scalar variable in this step (a fresh ReadVariableOp for a
  // resource variable, so control dependencies order it). The read asks for
  // the variable's device, as TensorFlow's ResourceVariable.value() does:
  // it is colocated with the variable, whatever device the update of
  // another variable (model parallelism) asks for.
  static Output Read(const Scope& s, const TrainableVariable& v) {
    if (v.kind == VariableKind::kRef) return v.value;
    const tensorflow::NodeDef* node = s.FindNode(v.var.node);
    Scope at = s.WithDevice(node != nullptr ? node->device() : "");
    return ReadVariable(at, v.var, v.dtype);
  }

  AdamOptions options_;
};

}  // namespace

std::unique_ptr<Optimizer> NewAdamOptimizer(const AdamOptions& options) {
  return std::make_unique<Adam>(options);
}

}  // namespace weft
