// Which compilation of the SIMD kernels (simd_target.h) this process runs:
// the widest ISA the CPU and the operating system support, or less when the
// environment asks.
//
//   WEFT_MAX_CPU_ISA=avx2 weft run ...       # AVX2 + FMA kernels even on AVX-512
//   WEFT_MAX_CPU_ISA=baseline weft run ...   # the portable x86-64 kernels
//
// as oneDNN's ONEDNN_MAX_CPU_ISA does: a cap, never a promise (a CPU
// without AVX2 runs the baseline whatever the variable says). An unknown
// value is reported once on stderr and ignored.
//
// With an entry point defined per ISA as weft::avx512::Kernel and
// weft::avx2::Kernel, the source that dispatches (compiled without an ISA):
//
//   using KernelFn = void(float* x, int64_t n);
//   WEFT_SIMD_DECLARE(KernelFn, Kernel)
//   void Run(float* x, int64_t n) {
//     if (auto* f = WEFT_SIMD_CHOOSE(Kernel)) return f(x, n);
//     ... portable code ...
//   }
//
// Thread safety: every function may be called from any thread; the choice
// is made once, on the first call, and never changes.
#ifndef WEFT_RUNTIME_CORE_CPU_ISA_H_
#define WEFT_RUNTIME_CORE_CPU_ISA_H_

#include <optional>
#include <string_view>

namespace weft {
namespace simd {

enum class CpuIsa { kBaseline = 0, kAvx2 = 1, kAvx512 = 2 };

// "baseline", "avx2" or "avx512" (the values WEFT_MAX_CPU_ISA takes).
const char* CpuIsaName(CpuIsa isa);
std::optional<CpuIsa> ParseCpuIsa(std::string_view name);

// The widest ISA of simd_target.h this CPU and its OS support (AVX-512 F,
// VL, BW and DQ; AVX2 and FMA).
CpuIsa SupportedCpuIsa();

// SupportedCpuIsa() capped by WEFT_MAX_CPU_ISA: what the kernels run.
CpuIsa ActiveCpuIsa();

// avx512 or avx2 for the active ISA, nullptr for the baseline.
template <typename F>
F* ChooseForActiveIsa(F* avx512, F* avx2) {
  switch (ActiveCpuIsa()) {
    case CpuIsa::kAvx512:
      return avx512;
    case CpuIsa::kAvx2:
      return avx2;
    case CpuIsa::kBaseline:
      break;
  }
  return nullptr;
}

}  // namespace simd
}  // namespace weft

// Inside namespace weft: declares avx512::fn and avx2::fn, functions of
// type `type` (a function type, say decltype(weft::Sgemm)).
#define WEFT_SIMD_DECLARE(type, fn) \
  namespace avx512 {                \
  type fn;                          \
  }                                 \
  namespace avx2 {                  \
  type fn;                          \
  }

// The active ISA's fn (a function pointer), or nullptr for the baseline.
#define WEFT_SIMD_CHOOSE(fn) \
  ::weft::simd::ChooseForActiveIsa(&::weft::avx512::fn, &::weft::avx2::fn)

#endif  // WEFT_RUNTIME_CORE_CPU_ISA_H_
