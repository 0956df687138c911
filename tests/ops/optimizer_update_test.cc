// The optimizer updates (ops/cpu/optimizer_update.h) give the bits of the
// plain scalar loop written here, on every ISA this binary is run for
// (isa_test.sh caps the ISA; cpu_isa_check prints which one runs), for
// every length around the vector widths (whole vectors, masked tails) and
// plain and Nesterov forms. The scalar loop is compiled without fusing
// (copts in BUILD), so a contracted multiply-add in a kernel would show.
#include "ops/cpu/optimizer_update.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace weft {
namespace {

const int64_t kLengths[] = {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 1023};

template <typename T>
std::vector<T> Random(int64_t n, T lo, T hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<T> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = dist(gen);
  return v;
}

// Bitwise equality, naming the first element that differs.
template <typename T>
void ExpectSameBits(const std::vector<T>& got, const std::vector<T>& want,
                    const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      ADD_FAILURE() << what << ": element " << i << " of " << got.size()
                    << " is " << got[i] << ", the scalar loop gives " << want[i];
      return;
    }
  }
}

template <typename T>
void CheckAdam(bool nesterov) {
  const AdamStep<T> step(T(0.9 * 0.9 * 0.9), T(0.999 * 0.999 * 0.999), T(0.01),
                         T(0.9), T(0.999), T(1e-7));
  for (int64_t n : kLengths) {
    std::vector<T> g = Random<T>(n, -1, 1, 1), m = Random<T>(n, -1, 1, 2),
                   v = Random<T>(n, 0, 1, 3), w = Random<T>(n, -2, 2, 4);
    std::vector<T> m2 = m, v2 = v, w2 = w;
    for (int64_t i = 0; i < n; ++i) {
      m2[i] = m2[i] + (g[i] - m2[i]) * step.one_minus_beta1;
      v2[i] = v2[i] + (g[i] * g[i] - v2[i]) * step.one_minus_beta2;
      const T num = nesterov ? (g[i] * step.one_minus_beta1 + step.beta1 * m2[i]) *
                                   step.alpha
                             : m2[i] * step.alpha;
      w2[i] = w2[i] - num / (std::sqrt(v2[i]) + step.epsilon);
    }
    AdamUpdate(n, w.data(), m.data(), v.data(), g.data(), step, nesterov);
    const std::string what = std::string(sizeof(T) == 4 ? "float" : "double") +
                             (nesterov ? " Nesterov" : "") + " Adam, n=" +
                             std::to_string(n);
    ExpectSameBits(m, m2, what + ", m");
    ExpectSameBits(v, v2, what + ", v");
    ExpectSameBits(w, w2, what + ", var");
  }
}

template <typename T>
void CheckMomentum(bool nesterov) {
  const MomentumStep<T> step{T(0.1), T(0.9)};
  for (int64_t n : kLengths) {
    std::vector<T> g = Random<T>(n, -1, 1, 5), a = Random<T>(n, -1, 1, 6),
                   w = Random<T>(n, -2, 2, 7);
    std::vector<T> a2 = a, w2 = w;
    for (int64_t i = 0; i < n; ++i) {
      a2[i] = a2[i] * step.momentum + g[i];
      w2[i] = nesterov ? w2[i] - (g[i] * step.lr + a2[i] * step.momentum * step.lr)
                       : w2[i] - a2[i] * step.lr;
    }
    MomentumUpdate(n, w.data(), a.data(), g.data(), step, nesterov);
    const std::string what = std::string(sizeof(T) == 4 ? "float" : "double") +
                             (nesterov ? " Nesterov" : "") + " Momentum, n=" +
                             std::to_string(n);
    ExpectSameBits(a, a2, what + ", accum");
    ExpectSameBits(w, w2, what + ", var");
  }
}

TEST(OptimizerUpdateTest, AdamFloatMatchesScalarLoopBitForBit) {
  CheckAdam<float>(false);
  CheckAdam<float>(true);
}

TEST(OptimizerUpdateTest, AdamDoubleMatchesScalarLoopBitForBit) {
  CheckAdam<double>(false);
  CheckAdam<double>(true);
}

TEST(OptimizerUpdateTest, MomentumFloatMatchesScalarLoopBitForBit) {
  CheckMomentum<float>(false);
  CheckMomentum<float>(true);
}

TEST(OptimizerUpdateTest, MomentumDoubleMatchesScalarLoopBitForBit) {
  CheckMomentum<double>(false);
  CheckMomentum<double>(true);
}

// The coefficients are TensorFlow's: alpha = lr * sqrt(1 - beta2^t) /
// (1 - beta1^t), in the variable's dtype.
TEST(OptimizerUpdateTest, AdamStepCoefficients) {
  const AdamStep<float> s(0.81f, 0.998001f, 0.01f, 0.9f, 0.999f, 1e-7f);
  EXPECT_EQ(s.alpha, 0.01f * std::sqrt(1.0f - 0.998001f) / (1.0f - 0.81f));
  EXPECT_EQ(s.beta1, 0.9f);
  EXPECT_EQ(s.one_minus_beta1, 1.0f - 0.9f);
  EXPECT_EQ(s.one_minus_beta2, 1.0f - 0.999f);
  EXPECT_EQ(s.epsilon, 1e-7f);
}

}  // namespace
}  // namespace weft
