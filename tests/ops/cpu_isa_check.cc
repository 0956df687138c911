// Linked into every kernel test that runs once per ISA (tests/ops/BUILD):
// fails if the kernels do not run the ISA that WEFT_MAX_CPU_ISA asks for
// (capped by the CPU), so a variant cannot pass by testing another path.
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "runtime/core/cpu_isa.h"
#include "ops/cpu/matmul_sgemm.h"

namespace weft {
namespace {

using simd::CpuIsa;

TEST(CpuIsaCheck, KernelsRunTheIsaAsked) {
  const CpuIsa supported = simd::SupportedCpuIsa();
  const char* cap = std::getenv("WEFT_MAX_CPU_ISA");
  CpuIsa want = supported;
  if (cap != nullptr && *cap != '\0') {
    const auto parsed = simd::ParseCpuIsa(cap);
    ASSERT_TRUE(parsed.has_value()) << "WEFT_MAX_CPU_ISA=" << cap;
    want = *parsed < supported ? *parsed : supported;
  }
  EXPECT_EQ(simd::ActiveCpuIsa(), want)
      << "active " << simd::CpuIsaName(simd::ActiveCpuIsa()) << ", supported "
      << simd::CpuIsaName(supported);
  EXPECT_EQ(SgemmAvailable(), want != CpuIsa::kBaseline);
  RecordProperty("cpu_isa", simd::CpuIsaName(simd::ActiveCpuIsa()));
}

}  // namespace
}  // namespace weft
