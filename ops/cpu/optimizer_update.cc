// Compiled once per ISA (simd_target.h): the AVX-512 and AVX2 compilations
// hold the float loops; the baseline one holds Eigen's loops (every dtype)
// and the dispatchers (cpu_isa.h).
#include "ops/cpu/optimizer_update.h"

#include "ops/cpu/simd_target.h"

#include "runtime/core/cpu_isa.h"

namespace weft {
namespace simd_update {
using MomentumFloatFn = void(int64_t, float*, float*, const float*,
                             const MomentumStep<float>&, bool);
using AdamFloatFn = void(int64_t, float*, float*, float*, const float*,
                         const AdamStep<float>&, bool);
}  // namespace simd_update
WEFT_SIMD_DECLARE(simd_update::MomentumFloatFn, MomentumFloat)
WEFT_SIMD_DECLARE(simd_update::AdamFloatFn, AdamFloat)
}  // namespace weft

#if defined(WEFT_SIMD_HAS_ISA)

WEFT_SIMD_BEGIN
#include "ops/cpu/simd_isa.h"

namespace weft {
namespace WEFT_SIMD_NS {
namespace {

using Isa = simd::TargetIsa;

// One vector of Momentum over arrays 0 grad, 1 accum, 2 var.
template <typename Load, typename Store>
inline void MomentumLanes(Isa::Vec lr, Isa::Vec mom, bool nesterov, Load load,
                          Store store) {
  const Isa::Vec g = load(0), a = Isa::Add(Isa::Mul(load(1), mom), g);
  const Isa::Vec w = load(2);
  store(1, a);
  if (nesterov) {
    store(2, Isa::Sub(w, Isa::Add(Isa::Mul(g, lr),
                                  Isa::Mul(Isa::Mul(a, mom), lr))));
  } else {
    store(2, Isa::Sub(w, Isa::Mul(a, lr)));
  }
}

struct AdamVecs {
  explicit AdamVecs(const AdamStep<float>& s)
      : alpha(Isa::Broadcast(s.alpha)),
        beta1(Isa::Broadcast(s.beta1)),
        c1(Isa::Broadcast(s.one_minus_beta1)),
        c2(Isa::Broadcast(s.one_minus_beta2)),
        eps(Isa::Broadcast(s.epsilon)) {}
  Isa::Vec alpha, beta1, c1, c2, eps;
};

// One vector of Adam over arrays 0 grad, 1 m, 2 v, 3 var.
template <typename Load, typename Store>
inline void AdamLanes(const AdamVecs& k, bool nesterov, Load load,
                      Store store) {
  const Isa::Vec g = load(0);
  const Isa::Vec m0 = load(1), v0 = load(2), w = load(3);
  const Isa::Vec m = Isa::Add(m0, Isa::Mul(Isa::Sub(g, m0), k.c1));
  const Isa::Vec v = Isa::Add(v0, Isa::Mul(Isa::Sub(Isa::Mul(g, g), v0), k.c2));
  const Isa::Vec num =
      nesterov ? Isa::Mul(Isa::Add(Isa::Mul(g, k.c1), Isa::Mul(k.beta1, m)),
                          k.alpha)
               : Isa::Mul(m, k.alpha);
  store(1, m);
  store(2, v);
  store(3, Isa::Sub(w, Isa::Div(num, Isa::Add(Isa::Sqrt(v), k.eps))));
}

// Runs body(load, store) over [0, n) a vector at a time, the last vector
// masked to the lanes left: load(a) reads array in[a]'s lanes at the current
// position, store(a, v) writes out[a]'s.
template <size_t kArrays, typename Body>
void ForEachVector(int64_t n, const float* const (&in)[kArrays],
                   float* const (&out)[kArrays], Body body) {
  int64_t i = 0;
  for (; i + Isa::kLanes <= n; i += Isa::kLanes) {
    body([&](int a) { return Isa::LoadU(in[a] + i); },
         [&](int a, Isa::Vec x) { Isa::StoreU(out[a] + i, x); });
  }
  if (i < n) {
    const Isa::Mask tail = Isa::Lanes(n - i);
    body([&](int a) { return Isa::MaskLoad(tail, in[a] + i); },
         [&](int a, Isa::Vec x) { Isa::MaskStore(out[a] + i, tail, x); });
  }
}

}  // namespace

void MomentumFloat(int64_t n, float* var, float* accum, const float* grad,
                   const MomentumStep<float>& step, bool nesterov) {
  const Isa::Vec lr = Isa::Broadcast(step.lr), mom = Isa::Broadcast(step.momentum);
  ForEachVector<3>(n, {grad, accum, var}, {nullptr, accum, var},
                   [&](auto load, auto store) {
                     MomentumLanes(lr, mom, nesterov, load, store);
                   });
}

void AdamFloat(int64_t n, float* var, float* m, float* v, const float* grad,
               const AdamStep<float>& step, bool nesterov) {
  const AdamVecs k(step);
  ForEachVector<4>(n, {grad, m, v, var}, {nullptr, m, v, var},
                   [&](auto load, auto store) { AdamLanes(k, nesterov, load, store); });
}

}  // namespace WEFT_SIMD_NS
}  // namespace weft
WEFT_SIMD_END

#else  // the baseline compilation

#include <cmath>

#include <Eigen/Core>

#include "ops/cpu/ieee_sqrt.h"

namespace weft {
namespace {

template <typename T>
using Vec = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using ConstVec = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// Eigen array expressions, so that they run several lanes at a time (sqrt
// and division included); GCC -O2 leaves the equivalent loops scalar. The
// same operations in the same order as the ISA loops above, with a
// correctly rounded sqrt (ieee_sqrt.h: Eigen's own float sqrt is not).
template <typename T>
void EigenMomentum(int64_t n, T* var, T* accum, const T* grad,
                   const MomentumStep<T>& s, bool nesterov) {
  Vec<T> a(accum, n), w(var, n);
  ConstVec<T> g(grad, n);
  a = a * s.momentum + g;
  if (nesterov) {
    w -= g * s.lr + a * s.momentum * s.lr;
  } else {
    w -= a * s.lr;
  }
}

template <typename T>
void EigenAdam(int64_t n, T* var, T* m, T* v, const T* grad,
               const AdamStep<T>& s, bool nesterov) {
  Vec<T> w(var, n), mv(m, n), vv(v, n);
  ConstVec<T> g(grad, n);
  mv += (g - mv) * s.one_minus_beta1;
  vv += (g * g - vv) * s.one_minus_beta2;
  if (nesterov) {
    w -= ((g * s.one_minus_beta1 + s.beta1 * mv) * s.alpha) /
         (IeeeSqrt(vv) + s.epsilon);
  } else {
    w -= (mv * s.alpha) / (IeeeSqrt(vv) + s.epsilon);
  }
}

}  // namespace

template <typename T>
AdamStep<T>::AdamStep(T beta1_power, T beta2_power, T lr, T beta1_in, T beta2,
                      T epsilon_in)
    : alpha(lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power)),
      beta1(beta1_in),
      one_minus_beta1(T(1) - beta1_in),
      one_minus_beta2(T(1) - beta2),
      epsilon(epsilon_in) {}
template struct AdamStep<float>;
template struct AdamStep<double>;

void MomentumUpdate(int64_t n, float* var, float* accum, const float* grad,
                    const MomentumStep<float>& step, bool nesterov) {
  if (auto* fn = WEFT_SIMD_CHOOSE(MomentumFloat)) {
    return fn(n, var, accum, grad, step, nesterov);
  }
  EigenMomentum(n, var, accum, grad, step, nesterov);
}

void MomentumUpdate(int64_t n, double* var, double* accum, const double* grad,
                    const MomentumStep<double>& step, bool nesterov) {
  EigenMomentum(n, var, accum, grad, step, nesterov);
}

void AdamUpdate(int64_t n, float* var, float* m, float* v, const float* grad,
                const AdamStep<float>& step, bool nesterov) {
  if (auto* fn = WEFT_SIMD_CHOOSE(AdamFloat)) {
    return fn(n, var, m, v, grad, step, nesterov);
  }
  EigenAdam(n, var, m, v, grad, step, nesterov);
}

void AdamUpdate(int64_t n, double* var, double* m, double* v,
                const double* grad, const AdamStep<double>& step,
                bool nesterov) {
  EigenAdam(n, var, m, v, grad, step, nesterov);
}

}  // namespace weft

#endif  // WEFT_SIMD_HAS_ISA
