// Kernels of the optimizers in optimizer_ops.cc (Adagrad, RMSProp, Ftrl,
// ...), every form with one class: Apply* (ref variables, updated in place
// under their mutexes, var forwarded), ResourceApply* (resource variables,
// copy-on-write under their mutexes), and the sparse forms of each, which
// update the rows indices names one after another (a row named twice is
// updated twice, as in TensorFlow).
//
// The class reads the roles of its inputs from the OpDef (the ref or
// resource inputs are the variables, grad/delta the gradient, indices the
// rows, global_step AdagradDA's step, the rest T scalars), so one
// registration loop covers all the ops; the arithmetic is
// optimizer_rules.h's, the checks training_apply.h's. Each op takes the
// dtypes TensorFlow's CPU kernels take for it (RuleTypes): half and
// bfloat16 compute in float (ApplyInFloat), complex runs the rules
// TensorFlow has complex kernels for.
#include <complex>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/optimizer_rules.h"
#include "ops/cpu/resource_variable.h"
#include "ops/cpu/training_apply.h"
#include "ops/cpu/training_kernels.h"
#include "ops/framework/op_kernel.h"
#include "ops/framework/op_registry.h"
#include "runtime/core/status.h"
#include "runtime/core/types.h"

namespace weft {

namespace {

// TensorFlow's CPU dtypes per optimizer and form: float and double for
// all; half, bfloat16 and complex for most.
DataTypeVector RuleTypes(OptimizerRule rule, bool sparse) {
  const DataTypeVector real = {DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE};
  DataTypeVector all = real;
  all.push_back(DT_COMPLEX64);
  all.push_back(DT_COMPLEX128);
  switch (rule) {
    case OptimizerRule::kAdagradDA:
    case OptimizerRule::kProximalAdagrad:
    case OptimizerRule::kProximalGradientDescent:
      return {DT_FLOAT, DT_DOUBLE};
    case OptimizerRule::kAdaMax:
      return {DT_HALF, DT_FLOAT, DT_DOUBLE};
    case OptimizerRule::kFtrl:
    case OptimizerRule::kFtrlV2:
    case OptimizerRule::kAddSign:
    case OptimizerRule::kPowerSign:
    case OptimizerRule::kAdamWithAmsgrad:
      return real;
    case OptimizerRule::kRMSProp:
    case OptimizerRule::kCenteredRMSProp:
      // The sparse forms have no bfloat16 kernel in TensorFlow.
      if (sparse) {
        return {DT_HALF, DT_FLOAT, DT_DOUBLE, DT_COMPLEX64, DT_COMPLEX128};
      }
      return all;
    default:  // Adagrad, AdagradV2, Adadelta, KerasMomentum
      return all;
  }
}

bool IsFtrl(OptimizerRule r) {
  return r == OptimizerRule::kFtrl || r == OptimizerRule::kFtrlV2;
}

// TensorFlow's value checks on Ftrl's and the proximal optimizers'
// scalars: lr positive (zero allowed with multiply_linear_by_lr), the
// regularization strengths non-negative, lr_power non-positive.
template <typename T>
absl::Status CheckScalarRange(OptimizerRule rule, const std::string& name,
                              T value, bool multiply_linear_by_lr) {
  // Ftrl and the proximal optimizers have no complex kernels.
  if constexpr (kIsComplex<T>) {
    return absl::OkStatus();
  } else {
    const bool proximal = rule == OptimizerRule::kProximalAdagrad ||
                          rule == OptimizerRule::kProximalGradientDescent;
    if (!IsFtrl(rule) && !proximal) return absl::OkStatus();
    const char* what = nullptr;
    if (name == "lr" && !(value > T(0) || (multiply_linear_by_lr && value >= T(0)))) {
      what = multiply_linear_by_lr ? "lr is not a positive scalar (or zero if "
                                     "multiply_linear_by_lr is set)"
                                   : "lr is not a positive scalar";
    } else if (name == "l1" && !(value >= T(0))) {
      what = "l1 regularization strength is not a non-negative scalar";
    } else if (name == "l2" && !(value >= T(0))) {
      what = "l2 regularization strength is not a non-negative scalar";
    } else if (name == "l2_shrinkage" && !(value >= T(0))) {
      what = "l2 shrinkage regularization strength is not a non-negative scalar";
    } else if (name == "lr_power" && !(value <= T(0))) {
      what = "lr_power is not a non-positive scalar";
    }
    if (what == nullptr) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", value));
  }
}

class OptimizerRuleOp : public OpKernel {
 public:
  OptimizerRuleOp(OpKernelConstruction* c, OptimizerRule rule)
      : OpKernel(c), rule_(rule) {
    const tensorflow::OpDef& def = c->op_def();
    for (int i = 0; i < def.input_arg_size(); ++i) {
      const auto& arg = def.input_arg(i);
      if (arg.is_ref() || arg.type() == tensorflow::DT_RESOURCE) {
        resource_ = !arg.is_ref();
        names_.push_back(i < c->def().input_size() ? c->def().input(i)
                                                   : arg.name());
        ++num_slots_;
      } else if (arg.name() == "grad" || arg.name() == "delta") {
        grad_ = i;
      } else if (arg.name() == "indices") {
        indices_ = i;
      } else if (arg.name() == "global_step") {
        step_ = i;
      } else {
        scalars_.push_back(i);
        scalar_names_.push_back(arg.name());
      }
    }
    absl::Status s = c->GetAttr("T", &dtype_);
    for (const auto& attr : def.attr()) {
      if (!s.ok()) break;
      if (attr.name() == "update_slots") s = c->GetAttr("update_slots", &update_slots_);
      if (attr.name() == "multiply_linear_by_lr") {
        s = c->GetAttr("multiply_linear_by_lr", &multiply_linear_by_lr_);
      }
      if (attr.name() == "use_nesterov") s = c->GetAttr("use_nesterov", &use_nesterov_);
    }
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* c) override {
    std::vector<std::shared_ptr<Var>> vars(num_slots_);
    std::vector<std::string> labels = names_;
    std::vector<absl::Mutex*> mus;
    for (int i = 0; i < num_slots_; ++i) {
      if (resource_) {
        absl::StatusOr<std::shared_ptr<Var>> var =
            LookupVarInput(c, i, dtype_, "update", &labels[i]);
        OP_REQUIRES_OK(c, var.status());
        vars[i] = *std::move(var);
        mus.push_back(vars[i]->mu());
      } else {
        OP_REQUIRES(c, c->input_is_ref(i),
                    absl::InvalidArgumentError(absl::StrCat(
                        type_string(), ": input ", i, " (", names_[i],
                        ") is not a reference")));
        mus.push_back(c->input_ref_mutex(i));
      }
    }
    int64_t step = 0;
    if (step_ >= 0) {
      const Tensor& t = c->input(step_);
      OP_REQUIRES(c, t.dims() == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "global_step is not a scalar: ", t.shape().DebugString())));
      step = t.data<int64_t>()[0];
    }
    std::vector<const Tensor*> scalars;
    for (int i : scalars_) scalars.push_back(&c->input(i));
    const Tensor& grad = c->input(grad_);
    const Tensor* indices = indices_ >= 0 ? &c->input(indices_) : nullptr;
    {
      SlotLocks lock(std::move(mus));
      std::vector<OptimizerSlot> slots;
      for (int i = 0; i < num_slots_; ++i) {
        if (resource_) {
          slots.push_back({vars[i]->tensor(), labels[i]});
        } else {
          slots.push_back({c->mutable_input(i), names_[i], Writes::kInPlace});
        }
      }
      OP_REQUIRES_OK(c, Update(c, slots, scalars, grad, indices, step));
    }
    if (!resource_) c->forward_ref_input_to_ref_output(0, 0);
  }

 private:
  absl::Status Update(OpKernelContext* c, absl::Span<const OptimizerSlot> slots,
                      absl::Span<const Tensor* const> scalars,
                      const Tensor& grad, const Tensor* indices,
                      int64_t step) const {
    std::vector<const char*> names;
    for (const std::string& n : scalar_names_) names.push_back(n.c_str());
    std::vector<int64_t> rows;
    WEFT_RETURN_IF_ERROR(
        CheckOptimizerInputs(slots, scalars, names, grad, indices, &rows));
    const bool sparse = indices != nullptr;
    switch (grad.dtype()) {
      case DT_FLOAT:
        return Run<float>(c, slots, scalars, grad, sparse, rows, step);
      case DT_DOUBLE:
        return Run<double>(c, slots, scalars, grad, sparse, rows, step);
      case DT_COMPLEX64:
        return Run<std::complex<float>>(c, slots, scalars, grad, sparse, rows,
                                        step);
      case DT_COMPLEX128:
        return Run<std::complex<double>>(c, slots, scalars, grad, sparse,
                                         rows, step);
      default:  // half, bfloat16: in float
        break;
    }
    for (const OptimizerSlot& slot : slots) {
      WEFT_RETURN_IF_ERROR(PrepareToWrite(slot.tensor, slot.writes));
    }
    return ApplyInFloat(slots, scalars, grad,
                        [&](absl::Span<const OptimizerSlot> s,
                            absl::Span<const Tensor* const> k,
                            const Tensor& g) {
                          return Update(c, s, k, g, indices, step);
                        });
  }

  template <typename T>
  absl::Status Run(OpKernelContext* c, absl::Span<const OptimizerSlot> slots,
                   absl::Span<const Tensor* const> scalars, const Tensor& grad,
                   bool sparse, const std::vector<int64_t>& rows,
                   int64_t step) const {
    RuleParams<T> p;
    for (size_t i = 0; i < scalars.size() && i < 6; ++i) {
      p.k[i] = scalars[i]->data<T>()[0];
      WEFT_RETURN_IF_ERROR(CheckScalarRange(rule_, scalar_names_[i], p.k[i],
                                            multiply_linear_by_lr_));
    }
    p.update_slots = update_slots_;
    p.multiply_linear_by_lr = multiply_linear_by_lr_;
    p.use_nesterov = use_nesterov_;
    p.global_step = step;
    for (const OptimizerSlot& slot : slots) {
      WEFT_RETURN_IF_ERROR(PrepareToWrite(slot.tensor, slot.writes));
    }
    std::vector<T*> base;
    for (const OptimizerSlot& slot : slots) base.push_back(slot.tensor->data<T>());
    const T* g = grad.data<T>();
    if (sparse) {
      const int64_t width =
          rows.empty() ? 0 : grad.NumElements() / static_cast<int64_t>(rows.size());
      std::vector<T*> at(base.size());
      for (size_t i = 0; i < rows.size(); ++i) {
        for (size_t s = 0; s < base.size(); ++s) at[s] = base[s] + rows[i] * width;
        RunOptimizerRule(rule_, p, at.data(), g + static_cast<int64_t>(i) * width, width);
      }
      return absl::OkStatus();
    }
    ParallelRange(c, grad.NumElements(), /*cost_per_unit=*/40,
                  [&](int64_t b, int64_t e) {
                    std::vector<T*> at(base.size());
                    for (size_t s = 0; s < base.size(); ++s) at[s] = base[s] + b;
                    RunOptimizerRule(rule_, p, at.data(), g + b, e - b);
                  });
    return absl::OkStatus();
  }

  const OptimizerRule rule_;
  bool resource_ = false;
  int num_slots_ = 0;
  int grad_ = -1;
  int indices_ = -1;
  int step_ = -1;
  std::vector<int> scalars_;
  std::vector<std::string> scalar_names_;
  std::vector<std::string> names_;  // the variables, for messages
  DataType dtype_ = DT_INVALID;
  bool update_slots_ = true;
  bool multiply_linear_by_lr_ = false;
  bool use_nesterov_ = false;
};

}  // namespace

void RegisterOptimizerRuleKernels(KernelRegistry* r) {
  const std::pair<const char*, OptimizerRule> rules[] = {
      {"Adagrad", OptimizerRule::kAdagrad},
      {"AdagradV2", OptimizerRule::kAdagradV2},
      {"RMSProp", OptimizerRule::kRMSProp},
      {"CenteredRMSProp", OptimizerRule::kCenteredRMSProp},
      {"Adadelta", OptimizerRule::kAdadelta},
      {"AdaMax", OptimizerRule::kAdaMax},
      {"Ftrl", OptimizerRule::kFtrl},
      {"FtrlV2", OptimizerRule::kFtrlV2},
      {"ProximalGradientDescent", OptimizerRule::kProximalGradientDescent},
      {"ProximalAdagrad", OptimizerRule::kProximalAdagrad},
      {"AddSign", OptimizerRule::kAddSign},
      {"PowerSign", OptimizerRule::kPowerSign},
      {"KerasMomentum", OptimizerRule::kKerasMomentum},
      {"AdamWithAmsgrad", OptimizerRule::kAdamWithAmsgrad},
      {"AdagradDA", OptimizerRule::kAdagradDA},
  };
  // Every form optimizer_ops.cc defines for the optimizer.
  for (const auto& [name, rule] : rules) {
    for (const char* form : {"Apply", "ResourceApply", "SparseApply",
                             "ResourceSparseApply"}) {
      const std::string op = absl::StrCat(form, name);
      if (GlobalOpRegistry().LookUpOpDef(op) == nullptr) continue;
      const OptimizerRule kernel_rule = rule;
      const bool sparse = absl::StrContains(form, "Sparse");
      r->Register(KernelDef(op, kDeviceTypeCpu)
                      .TypeConstraint("T", RuleTypes(rule, sparse)),
                  [kernel_rule](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                    return std::make_unique<OptimizerRuleOp>(c, kernel_rule);
                  });
    }
  }
}

}  // namespace weft
