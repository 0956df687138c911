// Sigmoid and Tanh of floats (ops/cpu/activation_simd.h), on every ISA this
// binary is run for (isa_test.sh caps the ISA): the vector loops within
// 2e-6 relative of the exact values (Eigen's on the baseline within 1e-4
// relative or 2e-7 absolute, its fast logistic's error) over [-30, 30] and at the ends (+-inf, values past the
// exponent's range, NaN, -0), writing exactly the n elements asked for at
// every length around the vector widths.
#include "ops/cpu/activation_simd.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/core/cpu_isa.h"

namespace weft {
namespace {

double ExactSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double ExactTanh(double x) { return std::tanh(x); }

std::vector<float> Inputs() {
  std::vector<float> x;
  for (double v = -30; v <= 30; v += 0.0137) x.push_back(static_cast<float>(v));
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-8f, -1e-8f, 0.39999f, 0.4f,
                  -0.4f, 0.40001f, 9.0f, -9.0f, 87.0f, -87.0f, 88.5f, -88.5f,
                  100.0f, -100.0f, 1e30f, -1e30f,
                  std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity()}) {
    x.push_back(v);
  }
  return x;
}

void ExpectClose(void (*fn)(const float*, float*, int64_t), double (*exact)(double),
                 const std::string& what) {
  // Eigen's fast logistic (the baseline) bounds its error absolutely.
  const bool eigen = simd::ActiveCpuIsa() == simd::CpuIsa::kBaseline;
  const double rel = eigen ? 1e-4 : 2e-6, abs = eigen ? 2e-7 : 1e-37;
  const std::vector<float> x = Inputs();
  std::vector<float> y(x.size());
  fn(x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = exact(x[i]);
    EXPECT_LE(std::abs(y[i] - want), rel * std::abs(want) + abs)
        << what << "(" << x[i] << ") = " << y[i] << ", exactly " << want << " on "
        << simd::CpuIsaName(simd::ActiveCpuIsa());
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  float out = 0;
  fn(&nan, &out, 1);
  EXPECT_TRUE(std::isnan(out)) << what << "(NaN) = " << out;
}

TEST(ActivationSimdTest, SigmoidIsCloseToTheExactValue) {
  ExpectClose(SigmoidFloat, ExactSigmoid, "sigmoid");
}

TEST(ActivationSimdTest, TanhIsCloseToTheExactValueAndOdd) {
  ExpectClose(TanhFloat, ExactTanh, "tanh");
  const float minus_zero = -0.0f;
  float out = 1;
  TanhFloat(&minus_zero, &out, 1);
  EXPECT_TRUE(out == 0 && std::signbit(out)) << out;
}

TEST(ActivationSimdTest, WritesExactlyTheElementsAsked) {
  for (int64_t n : {0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 100}) {
    std::vector<float> x(n + 4, 0.5f), y(n + 4, -7.0f);
    SigmoidFloat(x.data(), y.data(), n);
    for (int64_t i = 0; i < n + 4; ++i) {
      EXPECT_FLOAT_EQ(y[i], i < n ? static_cast<float>(ExactSigmoid(0.5)) : -7.0f)
          << "n " << n << " element " << i;
    }
    TanhFloat(x.data(), x.data(), n);  // in place
    for (int64_t i = 0; i < n + 4; ++i) {
      EXPECT_FLOAT_EQ(x[i], i < n ? static_cast<float>(std::tanh(0.5)) : 0.5f)
          << "n " << n << " element " << i;
    }
  }
}

}  // namespace
}  // namespace weft
