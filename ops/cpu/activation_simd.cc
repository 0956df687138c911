// Compiled once per ISA (simd_target.h): the AVX-512 and AVX2 compilations
// hold the vector loops; the baseline one holds Eigen's and the
// dispatchers (cpu_isa.h).
#include "ops/cpu/activation_simd.h"

#include "ops/cpu/simd_target.h"

#include "runtime/core/cpu_isa.h"

namespace weft {
namespace simd_activation {
using ActivationFn = void(const float*, float*, int64_t);
}  // namespace simd_activation
WEFT_SIMD_DECLARE(simd_activation::ActivationFn, SigmoidVec)
WEFT_SIMD_DECLARE(simd_activation::ActivationFn, TanhVec)
}  // namespace weft

#if defined(WEFT_SIMD_HAS_ISA)

WEFT_SIMD_BEGIN
#include "ops/cpu/simd_isa.h"

namespace weft {
namespace WEFT_SIMD_NS {
namespace {

using Isa = simd::TargetIsa;
using Vec = Isa::Vec;

// e^x for x clamped to [-87, 88] (beyond, e^x is under the smallest normal
// float or over 2^127 times e^(ln2/2), which still fits).
inline Vec Exp(Vec x) {
  x = Isa::Min(Isa::Max(x, Isa::Broadcast(-87.0f)), Isa::Broadcast(88.0f));
  const Vec n = Isa::Round(Isa::Mul(x, Isa::Broadcast(1.44269504088896341f)));
  // ln2 in two parts, the first with few enough bits that n * it is exact.
  Vec r = Isa::Fma(n, Isa::Broadcast(-0.693145751953125f), x);
  r = Isa::Fma(n, Isa::Broadcast(-1.428606765330187e-06f), r);
  static constexpr float kTaylor[] = {1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f};
  Vec p = Isa::Broadcast(1.0f / 720);
  for (float c : kTaylor) p = Isa::Fma(p, r, Isa::Broadcast(c));
  return Isa::Mul(p, Isa::Pow2(n));
}

inline Vec Sigmoid(Vec x) {
  const Vec one = Isa::Broadcast(1.0f);
  const Vec y = Isa::Div(one, Isa::Add(one, Exp(Isa::Sub(Isa::Zero(), x))));
  return Isa::Select(Isa::IsNan(x), x, y);
}

inline Vec Tanh(Vec x) {
  const Vec a = Isa::Abs(x);
  const Vec x2 = Isa::Mul(x, x);
  // tanh's odd Taylor coefficients, x^11 down to x^3.
  static constexpr float kOdd[] = {62.0f / 2835, -17.0f / 315, 2.0f / 15, -1.0f / 3};
  Vec p = Isa::Broadcast(-1382.0f / 155925);
  for (float c : kOdd) p = Isa::Fma(p, x2, Isa::Broadcast(c));
  const Vec small = Isa::Fma(Isa::Mul(x, x2), p, x);
  const Vec one = Isa::Broadcast(1.0f);
  const Vec e = Exp(Isa::Add(a, a));
  const Vec large = Isa::Sub(one, Isa::Div(Isa::Broadcast(2.0f), Isa::Add(e, one)));
  // x's sign on both (tanh is odd; -0 stays -0).
  const Vec y = Isa::CopySign(
      Isa::Select(Isa::Less(a, Isa::Broadcast(0.4f)), small, large), x);
  return Isa::Select(Isa::IsNan(x), x, y);
}

template <typename F>
void Map(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + Isa::kLanes <= n; i += Isa::kLanes) Isa::StoreU(y + i, f(Isa::LoadU(x + i)));
  if (i < n) {
    const Isa::Mask tail = Isa::Lanes(n - i);
    Isa::MaskStore(y + i, tail, f(Isa::MaskLoad(tail, x + i)));
  }
}

}  // namespace

void SigmoidVec(const float* x, float* y, int64_t n) { Map(x, y, n, Sigmoid); }
void TanhVec(const float* x, float* y, int64_t n) { Map(x, y, n, Tanh); }

}  // namespace WEFT_SIMD_NS
}  // namespace weft
WEFT_SIMD_END

#else  // the baseline compilation

#include <Eigen/Core>

namespace weft {
namespace {

using ConstArray = Eigen::Map<const Eigen::ArrayXf>;
using Array = Eigen::Map<Eigen::ArrayXf>;

}  // namespace

void SigmoidFloat(const float* x, float* y, int64_t n) {
  if (auto* fn = WEFT_SIMD_CHOOSE(SigmoidVec)) return fn(x, y, n);
  Array(y, n) = ConstArray(x, n).logistic();
}

void TanhFloat(const float* x, float* y, int64_t n) {
  if (auto* fn = WEFT_SIMD_CHOOSE(TanhVec)) return fn(x, y, n);
  Array(y, n) = ConstArray(x, n).tanh();
}

}  // namespace weft

#endif  // WEFT_SIMD_HAS_ISA
