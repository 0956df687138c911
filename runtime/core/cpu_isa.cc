#include "runtime/core/cpu_isa.h"

#include <cstdio>
#include <cstdlib>

namespace weft {
namespace simd {
namespace {

CpuIsa Detect() {
#if defined(__x86_64__) || defined(__i386__)
  // Also checks that the OS saves the wider registers (XGETBV).
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return CpuIsa::kAvx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return CpuIsa::kAvx2;
  }
#endif
  return CpuIsa::kBaseline;
}

CpuIsa Choose() {
  const CpuIsa supported = SupportedCpuIsa();
  const char* cap = std::getenv("WEFT_MAX_CPU_ISA");
  if (cap == nullptr || *cap == '\0') return supported;
  const std::optional<CpuIsa> parsed = ParseCpuIsa(cap);
  if (!parsed) {
    std::fprintf(stderr,
                 "weft: WEFT_MAX_CPU_ISA='%s' is not one of avx512, avx2, "
                 "baseline; ignored (running %s kernels)\n",
                 cap, CpuIsaName(supported));
    return supported;
  }
  return *parsed < supported ? *parsed : supported;
}

}  // namespace

const char* CpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kBaseline:
      break;
  }
  return "baseline";
}

std::optional<CpuIsa> ParseCpuIsa(std::string_view name) {
  for (CpuIsa isa : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (name == CpuIsaName(isa)) return isa;
  }
  return std::nullopt;
}

CpuIsa SupportedCpuIsa() {
  static const CpuIsa isa = Detect();
  return isa;
}

CpuIsa ActiveCpuIsa() {
  static const CpuIsa isa = Choose();
  return isa;
}

}  // namespace simd
}  // namespace weft
