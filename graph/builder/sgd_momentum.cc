// GradientDescent and Momentum: ApplyGradientDescent / ApplyMomentum (or
// their Resource* forms), one per variable; Momentum keeps one zeros slot,
// "<var>/Momentum".
#include "graph/builder/optimizers.h"

namespace weft {
namespace {

class GradientDescent : public Optimizer {
 public:
  explicit GradientDescent(const GradientDescentOptions& o)
      : Optimizer("GradientDescent"), options_(o) {}

 protected:
  Operation ApplyDense(const Scope& s, const Output& grad,
                       const TrainableVariable& var) override {
    Output lr = Hyper(s, "learning_rate", options_.learning_rate, var.dtype);
    if (var.kind == VariableKind::kRef) {
      return AddNode1(s, "ApplyGradientDescent", {var.var, lr, grad}).op();
    }
    return AddNode0(s, "ResourceApplyGradientDescent", {var.var, lr, grad});
  }

 private:
  GradientDescentOptions options_;
};

class Momentum : public Optimizer {
 public:
  explicit Momentum(const MomentumOptions& o)
      : Optimizer("Momentum"), options_(o) {}

 protected:
  absl::Status CreateSlots(const Scope& s, const TrainableVariable& var,
                           bool) override {
    AddSlot(var.name, "Momentum", NewSlot(s, var, "Momentum"));
    return s.status();
  }
  Operation ApplyDense(const Scope& s, const Output& grad,
                       const TrainableVariable& var) override {
    const TrainableVariable* accum = slot(var.name, "Momentum");
    Output lr = Hyper(s, "learning_rate", options_.learning_rate, var.dtype);
    Output m = Hyper(s, "momentum", options_.momentum, var.dtype);
    AttrList attrs = {{"use_nesterov", Attr(options_.use_nesterov)}};
    if (var.kind == VariableKind::kRef) {
      return AddNode1(s, "ApplyMomentum", {var.var, accum->var, lr, grad, m},
                      attrs)
          .op();
    }
    return AddNode0(s, "ResourceApplyMomentum",
                    {var.var, accum->var, lr, grad, m}, attrs);
  }

 private:
  MomentumOptions options_;
};

}  // namespace

std::unique_ptr<Optimizer> NewGradientDescentOptimizer(
    const GradientDescentOptions& options) {
  return std::make_unique<GradientDescent>(options);
}

std::unique_ptr<Optimizer> NewMomentumOptimizer(const MomentumOptions& options) {
  return std::make_unique<Momentum>(options);
}

}  // namespace weft
