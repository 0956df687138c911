// Bulk float <-> half / bfloat16 conversions (ops/cpu/narrow_convert.h), on
// every ISA this binary is run for (isa_test.sh caps the ISA): bit for bit
// what runtime/core/types.h's scalar conversions give, over every half and
// bfloat16 value, the floats between them (rounding ties to even), the
// ends (overflow, subnormals, +-inf) and NaNs (a NaN of the same sign:
// the AVX-512 half conversion keeps NaN payloads), writing exactly the n
// elements asked for at every length around the vector widths.
#include "ops/cpu/narrow_convert.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/core/cpu_isa.h"
#include "runtime/core/types.h"

namespace weft {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
const char* Isa() { return simd::CpuIsaName(simd::ActiveCpuIsa()); }

// Every float that narrowing must get right: each 16-bit pattern's value
// (as a half and as a bfloat16) and the values just around and halfway to
// the next, plus the ends and random floats.
std::vector<float> Floats() {
  std::vector<float> x;
  for (uint32_t b = 0; b < 65536; ++b) {
    for (float v : {HalfToFloat(Half{static_cast<uint16_t>(b)}),
                    BFloat16ToFloat(BFloat16{static_cast<uint16_t>(b)})}) {
      if (std::isnan(v)) continue;
      x.push_back(v);
      x.push_back(FromBits(Bits(v) + 1));
      x.push_back(FromBits(Bits(v) - 1));
    }
    // Halfway between bfloat16 b and b + 1 (a tie), and a hair above.
    x.push_back(FromBits((b << 16) | 0x8000));
    x.push_back(FromBits((b << 16) | 0x8001));
    x.push_back(FromBits((b << 16) | 0x7fff));
  }
  for (uint32_t b = 0; b < 65535; ++b) {  // halfway between halves
    const float lo = HalfToFloat(Half{static_cast<uint16_t>(b)});
    const float hi = HalfToFloat(Half{static_cast<uint16_t>(b + 1)});
    if (std::isfinite(lo) && std::isfinite(hi)) x.push_back((lo + hi) / 2);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, -0.0f, inf, -inf, 65504.0f, 65519.99f, 65520.0f,
                  -65520.0f, 1e-45f, -1e-45f, 1e-40f, 5.96e-8f, 2.98e-8f,
                  2.99e-8f, 3.4028235e38f, -3.4028235e38f}) {
    x.push_back(v);
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 100000; ++i) x.push_back(FromBits(rng()));
  for (uint32_t nan : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u,
                       0x7fffffffu, 0x7fa12345u, 0xffbfffffu}) {
    x.push_back(FromBits(nan));
  }
  return x;
}

TEST(NarrowConvert, WideningIsExact) {
  std::vector<Half> h(65536);
  std::vector<BFloat16> b(65536);
  for (uint32_t i = 0; i < 65536; ++i) {
    h[i].bits = static_cast<uint16_t>(i);
    b[i].bits = static_cast<uint16_t>(i);
  }
  std::vector<float> fh(65536), fb(65536);
  HalfToFloatN(h.data(), fh.data(), 65536);
  BFloat16ToFloatN(b.data(), fb.data(), 65536);
  for (uint32_t i = 0; i < 65536; ++i) {
    const float want = HalfToFloat(h[i]);
    if (std::isnan(want)) {  // vcvtph2ps quiets signalling NaNs
      ASSERT_TRUE(std::isnan(fh[i]) && std::signbit(fh[i]) == std::signbit(want))
          << "half " << i << " on " << Isa();
    } else {
      ASSERT_EQ(Bits(fh[i]), Bits(want)) << "half " << i << " on " << Isa();
    }
    ASSERT_EQ(Bits(fb[i]), Bits(BFloat16ToFloat(b[i]))) << "bfloat16 " << i << " on " << Isa();
  }
}

TEST(NarrowConvert, NarrowingRoundsToNearestEven) {
  const std::vector<float> x = Floats();
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<Half> h(n);
  std::vector<BFloat16> b(n);
  FloatToHalfN(x.data(), h.data(), n);
  FloatToBFloat16N(x.data(), b.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t want_h = FloatToHalf(x[i]).bits;
    const uint16_t want_b = FloatToBFloat16(x[i]).bits;
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(HalfToFloat(h[i])) &&
                  (h[i].bits & 0x8000) == (want_h & 0x8000))
          << std::hex << Bits(x[i]) << " -> half " << h[i].bits << " on " << Isa();
      EXPECT_EQ(b[i].bits, want_b) << std::hex << Bits(x[i]) << " on " << Isa();
      continue;
    }
    ASSERT_EQ(h[i].bits, want_h) << std::hex << "float " << Bits(x[i]) << " (" << x[i]
                                 << ") to half on " << Isa();
    ASSERT_EQ(b[i].bits, want_b) << std::hex << "float " << Bits(x[i]) << " (" << x[i]
                                 << ") to bfloat16 on " << Isa();
  }
}

TEST(NarrowConvert, WritesExactlyN) {
  for (int64_t n = 0; n <= 40; ++n) {
    std::vector<float> f(n + 1, 1.5f);
    std::vector<Half> h(n + 1, Half{0x1234});
    std::vector<BFloat16> b(n + 1, BFloat16{0x1234});
    FloatToHalfN(f.data(), h.data(), n);
    FloatToBFloat16N(f.data(), b.data(), n);
    EXPECT_EQ(h[n].bits, 0x1234) << "n " << n << " on " << Isa();
    EXPECT_EQ(b[n].bits, 0x1234) << "n " << n << " on " << Isa();
    f[n] = -7.0f;
    HalfToFloatN(h.data(), f.data(), n);
    EXPECT_EQ(f[n], -7.0f) << "n " << n << " on " << Isa();
    BFloat16ToFloatN(b.data(), f.data(), n);
    EXPECT_EQ(f[n], -7.0f) << "n " << n << " on " << Isa();
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(f[i], 1.5f);
  }
}

}  // namespace
}  // namespace weft
