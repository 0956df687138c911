// The element-wise arithmetic of the optimizers in optimizer_ops.cc, one
// function for the dense and the sparse forms: a dense update runs a rule
// over the whole (or a shard of the) variable, a sparse one over each row
// that indices names, in order.
//
//   RuleParams<float> p;  // scalars in the op's input order
//   RunOptimizerRule(OptimizerRule::kAdagrad, p, {var, accum}, grad, n);
//
// Formulas are TensorFlow's training_ops, written as the same Eigen array
// expressions in the same operation order (so rsqrt where TensorFlow takes
// rsqrt, x / sqrt where it divides), so results agree to a few ulps.
#ifndef WEFT_OPS_CPU_OPTIMIZER_RULES_H_
#define WEFT_OPS_CPU_OPTIMIZER_RULES_H_

#include <complex>
#include <cstdint>

namespace weft {

enum class OptimizerRule {
  kAdagrad,          // slots var, accum; scalars lr
  kAdagradV2,        // var, accum; lr, epsilon
  kRMSProp,          // var, ms, mom; lr, rho, momentum, epsilon
  kCenteredRMSProp,  // var, mg, ms, mom; lr, rho, momentum, epsilon
  kAdadelta,         // var, accum, accum_update; lr, rho, epsilon
  kAdaMax,           // var, m, v; beta1_power, lr, beta1, beta2, epsilon
  kFtrl,             // var, accum, linear; lr, l1, l2, lr_power
  kFtrlV2,           // var, accum, linear; lr, l1, l2, l2_shrinkage, lr_power
  kProximalGradientDescent,  // var; alpha, l1, l2
  kProximalAdagrad,  // var, accum; lr, l1, l2
  kAddSign,          // var, m; lr, alpha, sign_decay, beta
  kPowerSign,        // var, m; lr, logbase, sign_decay, beta
  kKerasMomentum,    // var, accum; lr, momentum
  kAdamWithAmsgrad,  // var, m, v, vhat; beta1_power, beta2_power, lr,
                     // beta1, beta2, epsilon
  kAdagradDA,        // var, gradient_accumulator, gradient_squared_accumulator;
                     // lr, l1, l2 (global_step apart)
};

template <typename T>
struct RuleParams {
  T k[6] = {};  // the T scalars, in input order
  bool update_slots = true;           // Adagrad*
  bool multiply_linear_by_lr = false;  // Ftrl*
  bool use_nesterov = false;           // KerasMomentum
  int64_t global_step = 0;             // AdagradDA
};

// Updates n elements of the slots (var first) from grad's n elements.
// The arrays may not overlap.
void RunOptimizerRule(OptimizerRule rule, const RuleParams<float>& p,
                      float* const* slots, const float* grad, int64_t n);
void RunOptimizerRule(OptimizerRule rule, const RuleParams<double>& p,
                      double* const* slots, const double* grad, int64_t n);
// Complex: the rules TensorFlow has complex kernels for, with its
// expressions (g * g, not |g|^2; the complex sqrt).
void RunOptimizerRule(OptimizerRule rule, const RuleParams<std::complex<float>>& p,
                      std::complex<float>* const* slots, const std::complex<float>* grad,
                      int64_t n);
void RunOptimizerRule(OptimizerRule rule, const RuleParams<std::complex<double>>& p,
                      std::complex<double>* const* slots, const std::complex<double>* grad,
                      int64_t n);

}  // namespace weft

#endif  // WEFT_OPS_CPU_OPTIMIZER_RULES_H_
