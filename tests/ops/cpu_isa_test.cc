#include "runtime/core/cpu_isa.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace weft {
namespace {

using simd::CpuIsa;

TEST(CpuIsaTest, NamesRoundTrip) {
  for (CpuIsa isa : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    EXPECT_EQ(simd::ParseCpuIsa(simd::CpuIsaName(isa)), isa);
  }
  EXPECT_FALSE(simd::ParseCpuIsa("sse2").has_value());
  EXPECT_FALSE(simd::ParseCpuIsa("AVX2").has_value());
  EXPECT_FALSE(simd::ParseCpuIsa("").has_value());
}

TEST(CpuIsaTest, ActiveIsNoWiderThanSupported) {
  EXPECT_LE(static_cast<int>(simd::ActiveCpuIsa()),
            static_cast<int>(simd::SupportedCpuIsa()));
}

// What the dispatcher detects agrees with the kernel's view of the CPU
// (/proc/cpuinfo's flags; the OS lists only what it enables).
TEST(CpuIsaTest, SupportedMatchesProcCpuinfo) {
  std::ifstream in("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      flags = " " + line.substr(line.find(':') + 1) + " ";
      break;
    }
  }
  if (flags.empty()) GTEST_SKIP() << "no flags line in /proc/cpuinfo";
  auto has = [&](const char* f) {
    return flags.find(std::string(" ") + f + " ") != std::string::npos;
  };
  const bool avx2 = has("avx2") && has("fma");
  const bool avx512 = avx2 && has("avx512f") && has("avx512vl") &&
                      has("avx512bw") && has("avx512dq");
  const CpuIsa want = avx512 ? CpuIsa::kAvx512 : avx2 ? CpuIsa::kAvx2 : CpuIsa::kBaseline;
  EXPECT_EQ(simd::SupportedCpuIsa(), want) << flags;
}

}  // namespace
}  // namespace weft
