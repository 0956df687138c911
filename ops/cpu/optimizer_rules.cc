#include "ops/cpu/optimizer_rules.h"

#include <cmath>
#include <complex>

#include "ops/cpu/cwise_ops.h"

namespace weft {
namespace {

template <typename T>
using Arr = ArrayMap<T>;
template <typename T>
using ConstArr = ConstArrayMap<T>;

// Adagrad: accum += g^2; var -= g * lr * rsqrt(accum).
// V2: var -= g * lr / (sqrt(accum) + epsilon).
template <typename T>
void Adagrad(const RuleParams<T>& p, bool v2, T* const* s, ConstArr<T> g) {
  Arr<T> var(s[0], g.size()), accum(s[1], g.size());
  if (p.update_slots) accum += g.square();
  if (v2) {
    var -= g * p.k[0] / (accum.sqrt() + p.k[1]);
  } else {
    var -= g * p.k[0] * accum.rsqrt();
  }
}

// RMSProp: ms += (g^2 - ms) * (1 - rho); mom = mom * momentum +
// g * lr / sqrt(ms + epsilon); var -= mom. Centered: also mg += (g - mg) *
// (1 - rho), and the denominator is sqrt(ms - mg^2 + epsilon).
template <typename T>
void RmsProp(const RuleParams<T>& p, bool centered, T* const* s,
             ConstArr<T> g) {
  const int64_t n = g.size();
  const T lr = p.k[0], rho = p.k[1], momentum = p.k[2], eps = p.k[3];
  Arr<T> var(s[0], n);
  Arr<T> ms(s[centered ? 2 : 1], n), mom(s[centered ? 3 : 2], n);
  ms += (g.square() - ms) * (T(1) - rho);
  if (centered) {
    Arr<T> mg(s[1], n);
    mg += (g - mg) * (T(1) - rho);
    mom = mom * momentum + (g * lr) / ((ms - mg.square()) + eps).sqrt();
  } else {
    mom = mom * momentum + (g * lr) / (ms + eps).sqrt();
  }
  var -= mom;
}

// Adadelta: accum = accum * rho + g^2 * (1 - rho);
// update = sqrt(accum_update + eps) * rsqrt(accum + eps) * g;
// var -= update * lr; accum_update = accum_update * rho + update^2 * (1 - rho).
template <typename T>
void Adadelta(const RuleParams<T>& p, T* const* s, ConstArr<T> g) {
  const int64_t n = g.size();
  const T lr = p.k[0], rho = p.k[1], eps = p.k[2];
  Arr<T> var(s[0], n), accum(s[1], n), accum_update(s[2], n);
  accum = accum * rho + g.square() * (T(1) - rho);
  const Eigen::Array<T, Eigen::Dynamic, 1> update =
      (accum_update + eps).sqrt() * (accum + eps).rsqrt() * g;
  var -= update * lr;
  accum_update = accum_update * rho + update.square() * (T(1) - rho);
}

// AdaMax: m += (g - m) * (1 - beta1); v = max(beta2 * v, |g|);
// var -= lr / (1 - beta1_power) * (m / (v + epsilon)).
template <typename T>
void AdaMax(const RuleParams<T>& p, T* const* s, ConstArr<T> g) {
  const int64_t n = g.size();
  const T beta1_power = p.k[0], lr = p.k[1], beta1 = p.k[2], beta2 = p.k[3],
          eps = p.k[4];
  Arr<T> var(s[0], n), m(s[1], n), v(s[2], n);
  m += (g - m) * (T(1) - beta1);
  v = (beta2 * v).cwiseMax(g.abs());
  var -= lr / (T(1) - beta1_power) * (m / (v + eps));
}

// accum^(-lr_power): a square root for the usual lr_power = -0.5.
template <typename T, typename E>
auto AccumPower(const E& accum, T lr_power) {
  return (lr_power == T(-0.5)) ? accum.sqrt().eval()
                               : accum.pow(-lr_power).eval();
}

// Ftrl (V2 adds l2_shrinkage): with new_accum = accum + g^2 and
// g' = g + 2 * l2_shrinkage * var,
//   linear += g' - (new_accum^p - accum^p) / lr * var    (p = -lr_power)
//   var = (clamp(linear, -l1, l1) - linear) / (new_accum^p / lr + 2 * l2)
//   accum = new_accum
// multiply_linear_by_lr scales linear by lr: linear += g' * lr -
// (new_accum^p - accum^p) * var, l1 becomes l1 * lr and the denominator
// new_accum^p + 2 * l2 * lr.
template <typename T>
void Ftrl(const RuleParams<T>& p, bool v2, T* const* s, ConstArr<T> g) {
  const int64_t n = g.size();
  const T lr = p.k[0], l1 = p.k[1], l2 = p.k[2];
  const T shrinkage = v2 ? p.k[3] : T(0);
  const T lr_power = v2 ? p.k[4] : p.k[3];
  Arr<T> var(s[0], n), accum(s[1], n), linear(s[2], n);
  const Eigen::Array<T, Eigen::Dynamic, 1> new_accum = accum + g.square();
  const Eigen::Array<T, Eigen::Dynamic, 1> new_pow = AccumPower(new_accum, lr_power);
  const Eigen::Array<T, Eigen::Dynamic, 1> old_pow = AccumPower(accum, lr_power);
  Eigen::Array<T, Eigen::Dynamic, 1> g_shrunk = g;
  if (v2) g_shrunk = g + T(2) * shrinkage * var;
  T l1_bound = l1;
  if (p.multiply_linear_by_lr) {
    linear += g_shrunk * lr - (new_pow - old_pow) * var;
    l1_bound = l1 * lr;
    var = (linear.cwiseMin(l1_bound).cwiseMax(-l1_bound) - linear) /
          (new_pow + T(2) * l2 * lr);
  } else {
    linear += g_shrunk - (new_pow - old_pow) / lr * var;
    var = (linear.cwiseMin(l1_bound).cwiseMax(-l1_bound) - linear) /
          (new_pow / lr + T(2) * l2);
  }
  accum = new_accum;
}

// Proximal step: var = sign(var) * max(|var| - rate * l1, 0) /
// (1 + l2 * rate) when l1 > 0, else var / (1 + l2 * rate); `var` already
// holds the plain gradient step.
template <typename T, typename Rate>
void ProximalShrink(Arr<T> var, const Rate& shrink_l1, const Rate& denom,
                    T l1) {
  if (l1 > T(0)) {
    var = var.sign() * (var.abs() - shrink_l1).cwiseMax(T(0)) / denom;
  } else {
    var = var / denom;
  }
}

// ProximalGradientDescent: var -= g * alpha, then the proximal step with
// rate alpha.
template <typename T>
void ProximalGd(const RuleParams<T>& p, T* const* s, ConstArr<T> g) {
  const int64_t n = g.size();
  const T alpha = p.k[0], l1 = p.k[1], l2 = p.k[2];
  Arr<T> var(s[0], n);
  var -= g * alpha;
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  ProximalShrink(var, Array::Constant(n, alpha * l1),
                 Array::Constant(n, T(1) + l2 * alpha), l1);
}

// ProximalAdagrad: accum += g^2; rate = lr * rsqrt(accum); var -= g * rate,
// then the proximal step with that rate.
template <typename T>
void ProximalAdagrad(const RuleParams<T>& p, T* const* s, ConstArr<T> g) {
  const int64_t n = g.size();
  const T lr = p.k[0], l1 = p.k[1], l2 = p.k[2];
  Arr<T> var(s[0], n), accum(s[1], n);
  accum += g.square();
  const Eigen::Array<T, Eigen::Dynamic, 1> rate = lr * accum.rsqrt();
  var -= g * rate;
  ProximalShrink(var, (rate * l1).eval(), (T(1) + l2 * rate).eval(), l1);
}

// AddSign / PowerSign: m = m * beta + g * (1 - beta); with
// s = sign(g) * sign(m), AddSign: var -= lr * (alpha + sign_decay * s) * g;
// PowerSign: var -= lr * exp(logbase * sign_decay * s) * g.
template <typename T>
void SignUpdate(const RuleParams<T>& p, bool power, T* const* s,
                ConstArr<T> g) {
  const int64_t n = g.size();
  const T lr = p.k[0], base = p.k[1], sign_decay = p.k[2], beta = p.k[3];
  Arr<T> var(s[0], n), m(s[1], n);
  m = m * beta + g * (T(1) - beta);
  const auto sign_gm = g.sign() * m.sign();
  if (power) {
    var -= lr * (base * sign_decay * sign_gm).exp() * g;
  } else {
    var -= lr * (base + sign_decay * sign_gm) * g;
  }
}

// KerasMomentum: accum = accum * momentum - g * lr; var += accum
// (Nesterov: var += accum * momentum - g * lr).
template <typename T>
void KerasMomentum(const RuleParams<T>& p, T* const* s, ConstArr<T> g) {
  const int64_t n = g.size();
  const T lr = p.k[0], momentum = p.k[1];
  Arr<T> var(s[0], n), accum(s[1], n);
  accum = accum * momentum - g * lr;
  if (p.use_nesterov) {
    var += accum * momentum - g * lr;
  } else {
    var += accum;
  }
}

// AdamWithAmsgrad: Adam's m and v, vhat = max(vhat, v),
// var -= m * alpha / (sqrt(vhat) + epsilon) with
// alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power).
template <typename T>
void Amsgrad(const RuleParams<T>& p, T* const* s, ConstArr<T> g) {
  const int64_t n = g.size();
  const T beta1_power = p.k[0], beta2_power = p.k[1], lr = p.k[2],
          beta1 = p.k[3], beta2 = p.k[4], eps = p.k[5];
  const T alpha = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
  Arr<T> var(s[0], n), m(s[1], n), v(s[2], n), vhat(s[3], n);
  m += (g - m) * (T(1) - beta1);
  v += (g.square() - v) * (T(1) - beta2);
  vhat = vhat.cwiseMax(v);
  var -= (m * alpha) / (vhat.sqrt() + eps);
}

// AdagradDA: ga += g; gg += g^2; with step = global_step,
// var = -lr * sign(ga) * max(|ga| - l1 * step, 0) / (l2 * step * lr +
// sqrt(gg)) when l1 > 0, else -lr * ga / (same denominator).
template <typename T>
void AdagradDa(const RuleParams<T>& p, T* const* s, ConstArr<T> g) {
  const int64_t n = g.size();
  const T lr = p.k[0], l1 = p.k[1], l2 = p.k[2];
  const T step = static_cast<T>(p.global_step);
  Arr<T> var(s[0], n), ga(s[1], n), gg(s[2], n);
  ga += g;
  gg += g.square();
  const auto denom = l2 * (step * lr) + gg.sqrt();
  if (l1 > T(0)) {
    var = lr * T(-1) * ga.sign() * (ga.abs() - step * l1).cwiseMax(T(0)) /
          denom;
  } else {
    var = lr * ga * T(-1) / denom;
  }
}

// The rules TensorFlow also registers for complex numbers, with the same
// expressions (square is g * g, sqrt and rsqrt the complex principal
// ones); false, doing nothing, for the others (no complex kernel is
// registered for them).
template <typename T>
bool RunFieldRule(OptimizerRule rule, const RuleParams<T>& p, T* const* s,
                  ConstArr<T> g) {
  switch (rule) {
    case OptimizerRule::kAdagrad: Adagrad(p, false, s, g); return true;
    case OptimizerRule::kAdagradV2: Adagrad(p, true, s, g); return true;
    case OptimizerRule::kRMSProp: RmsProp(p, false, s, g); return true;
    case OptimizerRule::kCenteredRMSProp: RmsProp(p, true, s, g); return true;
    case OptimizerRule::kAdadelta: Adadelta(p, s, g); return true;
    case OptimizerRule::kKerasMomentum: KerasMomentum(p, s, g); return true;
    default: return false;
  }
}

template <typename T>
void Run(OptimizerRule rule, const RuleParams<T>& p, T* const* s,
         const T* grad, int64_t n) {
  ConstArr<T> g(grad, n);
  if (RunFieldRule(rule, p, s, g)) return;
  switch (rule) {
    case OptimizerRule::kAdaMax: return AdaMax(p, s, g);
    case OptimizerRule::kFtrl: return Ftrl(p, false, s, g);
    case OptimizerRule::kFtrlV2: return Ftrl(p, true, s, g);
    case OptimizerRule::kProximalGradientDescent: return ProximalGd(p, s, g);
    case OptimizerRule::kProximalAdagrad: return ProximalAdagrad(p, s, g);
    case OptimizerRule::kAddSign: return SignUpdate(p, false, s, g);
    case OptimizerRule::kPowerSign: return SignUpdate(p, true, s, g);
    case OptimizerRule::kAdamWithAmsgrad: return Amsgrad(p, s, g);
    case OptimizerRule::kAdagradDA: return AdagradDa(p, s, g);
    default: return;  // run above
  }
}

}  // namespace

void RunOptimizerRule(OptimizerRule rule,
                      const RuleParams<std::complex<float>>& p,
                      std::complex<float>* const* slots,
                      const std::complex<float>* grad, int64_t n) {
  RunFieldRule(rule, p, slots, ConstArr<std::complex<float>>(grad, n));
}

void RunOptimizerRule(OptimizerRule rule,
                      const RuleParams<std::complex<double>>& p,
                      std::complex<double>* const* slots,
                      const std::complex<double>* grad, int64_t n) {
  RunFieldRule(rule, p, slots, ConstArr<std::complex<double>>(grad, n));
}

void RunOptimizerRule(OptimizerRule rule, const RuleParams<float>& p,
                      float* const* slots, const float* grad, int64_t n) {
  Run(rule, p, slots, grad, n);
}

void RunOptimizerRule(OptimizerRule rule, const RuleParams<double>& p,
                      double* const* slots, const double* grad, int64_t n) {
  Run(rule, p, slots, grad, n);
}

}  // namespace weft
