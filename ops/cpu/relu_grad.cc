// Compiled once per ISA (simd_target.h); the baseline compilation holds the
// scalar loop and the dispatcher (cpu_isa.h).
#include "ops/cpu/relu_grad.h"

#include "ops/cpu/simd_target.h"

#include "runtime/core/cpu_isa.h"

namespace weft {
WEFT_SIMD_DECLARE(decltype(::weft::ReluGradFloat), ReluGradFloat)
}  // namespace weft

#if defined(WEFT_SIMD_HAS_ISA)

WEFT_SIMD_BEGIN
#include "ops/cpu/simd_isa.h"

namespace weft {
namespace WEFT_SIMD_NS {

void ReluGradFloat(const float* g, const float* f, float* out, int64_t n) {
  using Isa = simd::TargetIsa;
  const Isa::Vec zero = Isa::Zero();
  int64_t i = 0;
  for (; i + Isa::kLanes <= n; i += Isa::kLanes) {  // NaN features give 0
    const Isa::Mask pos = Isa::Less(zero, Isa::LoadU(f + i));
    Isa::StoreU(out + i, Isa::Select(pos, Isa::LoadU(g + i), zero));
  }
  if (i < n) {
    const Isa::Mask tail = Isa::Lanes(n - i);
    const Isa::Mask pos = Isa::Less(zero, Isa::MaskLoad(tail, f + i));
    Isa::MaskStore(out + i, tail, Isa::Select(pos, Isa::MaskLoad(tail, g + i), zero));
  }
}

}  // namespace WEFT_SIMD_NS
}  // namespace weft
WEFT_SIMD_END

#else  // the baseline compilation

namespace weft {

void ReluGradFloat(const float* g, const float* f, float* out, int64_t n) {
  if (auto* fn = WEFT_SIMD_CHOOSE(ReluGradFloat)) return fn(g, f, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = f[i] > 0.0f ? g[i] : 0.0f;
}

}  // namespace weft

#endif  // WEFT_SIMD_HAS_ISA
