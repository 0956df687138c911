// Distributions over Philox words, bit-compatible with TensorFlow's CPU
// kernels for the same (seed, seed2), and the fill loop that uses them.
//
// Each distribution turns one 128-bit Philox block (or, for rejection
// sampling, a variable number of words) into a group of kGroupSize values:
//
//   Uniform<T>         [0, 1) from the low mantissa bits: float uses 23 bits
//                      of one word, double 52 bits of two, half 10 and
//                      bfloat16 7 bits of one word.
//   UniformFullInt<T>  every value of a 32- or 64-bit integer type.
//   Normal<T>          Box-Muller on pairs of uniforms (float, and half and
//                      bfloat16 computed in float; double uses two words per
//                      uniform).
//   TruncatedNormal<T> Box-Muller samples with |x| < 2 kept, the rest
//                      rejected. Group g draws from its own reserved stretch
//                      of the stream (kReservedBlocksPerValue blocks per
//                      value), so the result does not depend on how groups
//                      are split across threads.
//
// FillPhilox(gen, data, size, begin_group, end_group) writes groups
// [begin_group, end_group) of a `size`-element output; calling it on
// disjoint group ranges (from several threads) fills the whole output.
#ifndef WEFT_OPS_CPU_RANDOM_DISTRIBUTIONS_H_
#define WEFT_OPS_CPU_RANDOM_DISTRIBUTIONS_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ops/cpu/philox_random.h"
#include "runtime/core/types.h"

namespace weft {
namespace philox {

// 1.0 + 23 random mantissa bits, minus 1.0: uniform in [0, 1).
inline float Uint32ToFloat(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}

// 20 mantissa bits from x0 and 32 from x1.
inline double Uint64ToDouble(uint32_t x0, uint32_t x1) {
  const uint64_t man = (static_cast<uint64_t>(x0 & 0xfffffu) << 32) | x1;
  const uint64_t bits = (uint64_t{1023} << 52) | man;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d - 1.0;
}

// m / 2^10 and m / 2^7 are exact in half and bfloat16, so going through
// float gives the same bits as subtracting in the narrow type.
inline Half Uint16ToHalf(uint16_t x) {
  return FloatToHalf(static_cast<float>(x & 0x3ffu) / 1024.0f);
}
inline BFloat16 Uint16ToBFloat16(uint16_t x) {
  return FloatToBFloat16(static_cast<float>(x & 0x7fu) / 128.0f);
}

// Two standard normals from two words.
inline void BoxMullerFloat(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  const float epsilon = 1.0e-7f;  // keeps log() away from 0
  float u1 = Uint32ToFloat(x0);
  if (u1 < epsilon) u1 = epsilon;
  // The product is formed in double (M_PI is a double) and then rounded.
  const float v1 = 2.0 * M_PI * static_cast<double>(Uint32ToFloat(x1));
  const float u2 = std::sqrt(-2.0f * std::log(u1));
  ::sincosf(v1, f0, f1);
  *f0 *= u2;
  *f1 *= u2;
}

// Two standard normals from four words.
inline void BoxMullerDouble(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3,
                            double* d0, double* d1) {
  const double epsilon = 1.0e-7;
  double u1 = Uint64ToDouble(x0, x1);
  if (u1 < epsilon) u1 = epsilon;
  const double v1 = 2 * M_PI * Uint64ToDouble(x2, x3);
  const double u2 = std::sqrt(-2.0 * std::log(u1));
  ::sincos(v1, d0, d1);
  *d0 *= u2;
  *d1 *= u2;
}

template <typename T>
T FromFloat(float f);
template <>
inline float FromFloat<float>(float f) {
  return f;
}
template <>
inline Half FromFloat<Half>(float f) {
  return FloatToHalf(f);
}
template <>
inline BFloat16 FromFloat<BFloat16>(float f) {
  return FloatToBFloat16(f);
}

// ---- Uniform ----------------------------------------------------------------

template <typename T>
struct Uniform {  // float, Half, BFloat16: one value per word
  static constexpr int kGroupSize = 4;
  static constexpr bool kVariableSamples = false;
  std::array<T, kGroupSize> operator()(PhiloxRandom* gen) const {
    const PhiloxRandom::Block b = (*gen)();
    std::array<T, kGroupSize> out;
    for (int i = 0; i < kGroupSize; ++i) {
      if constexpr (std::is_same_v<T, float>) {
        out[i] = Uint32ToFloat(b[i]);
      } else if constexpr (std::is_same_v<T, Half>) {
        out[i] = Uint16ToHalf(static_cast<uint16_t>(b[i]));
      } else {
        out[i] = Uint16ToBFloat16(static_cast<uint16_t>(b[i]));
      }
    }
    return out;
  }
};

template <>
struct Uniform<double> {
  static constexpr int kGroupSize = 2;
  static constexpr bool kVariableSamples = false;
  std::array<double, kGroupSize> operator()(PhiloxRandom* gen) const {
    const PhiloxRandom::Block b = (*gen)();
    return {Uint64ToDouble(b[0], b[1]), Uint64ToDouble(b[2], b[3])};
  }
};

// ---- Uniform integers in [lo, hi) ---------------------------------------------

// TensorFlow's integer UniformDistribution: a word (int32) or two words,
// the first the low half (int64), modulo the range, plus lo. The slight
// bias of the modulo is TensorFlow's too.
template <typename T>
struct UniformInt {
  using Unsigned = std::make_unsigned_t<T>;
  static constexpr int kGroupSize = sizeof(T) == 4 ? 4 : 2;
  static constexpr bool kVariableSamples = false;
  UniformInt() = default;
  UniformInt(T lo, T hi)
      : lo(static_cast<Unsigned>(lo)),
        range(static_cast<Unsigned>(hi) - static_cast<Unsigned>(lo)) {}
  std::array<T, kGroupSize> operator()(PhiloxRandom* gen) const {
    const PhiloxRandom::Block b = (*gen)();
    std::array<T, kGroupSize> out;
    for (int i = 0; i < kGroupSize; ++i) {
      Unsigned bits;
      if constexpr (sizeof(T) == 4) {
        bits = b[i];
      } else {
        bits = b[2 * i] | (static_cast<uint64_t>(b[2 * i + 1]) << 32);
      }
      out[i] = static_cast<T>(lo + bits % range);  // wraps as TensorFlow's does
    }
    return out;
  }
  Unsigned lo = 0;
  Unsigned range = 1;
};

// ---- Integers over their whole range ------------------------------------------
// TensorFlow's UniformFullIntDistribution: a word's bits (32-bit types) or
// two words, the first the low half (64-bit types).
template <typename T>
struct UniformFullInt {
  static constexpr int kGroupSize = sizeof(T) == 4 ? 4 : 2;
  static constexpr bool kVariableSamples = false;
  std::array<T, kGroupSize> operator()(PhiloxRandom* gen) const {
    const PhiloxRandom::Block b = (*gen)();
    std::array<T, kGroupSize> out;
    for (int i = 0; i < kGroupSize; ++i) {
      if constexpr (sizeof(T) == 4) {
        out[i] = static_cast<T>(b[i]);
      } else {
        out[i] = static_cast<T>(b[2 * i] |
                                (static_cast<uint64_t>(b[2 * i + 1]) << 32));
      }
    }
    return out;
  }
};

// ---- Normal -----------------------------------------------------------------

template <typename T>
struct Normal {  // float, Half, BFloat16: computed in float
  static constexpr int kGroupSize = 4;
  static constexpr bool kVariableSamples = false;
  std::array<T, kGroupSize> operator()(PhiloxRandom* gen) const {
    const PhiloxRandom::Block b = (*gen)();
    std::array<T, kGroupSize> out;
    for (int i = 0; i < kGroupSize; i += 2) {
      float f[2];
      BoxMullerFloat(b[i], b[i + 1], &f[0], &f[1]);
      out[i] = FromFloat<T>(f[0]);
      out[i + 1] = FromFloat<T>(f[1]);
    }
    return out;
  }
};

template <>
struct Normal<double> {
  static constexpr int kGroupSize = 2;
  static constexpr bool kVariableSamples = false;
  std::array<double, kGroupSize> operator()(PhiloxRandom* gen) const {
    const PhiloxRandom::Block b = (*gen)();
    std::array<double, kGroupSize> out;
    BoxMullerDouble(b[0], b[1], b[2], b[3], &out[0], &out[1]);
    return out;
  }
};

// ---- TruncatedNormal ----------------------------------------------------------

// Blocks reserved per output value by kernels whose distributions use a
// variable number of words (TensorFlow's kReservedSamplesPerOutput).
inline constexpr int kReservedBlocksPerValue = 256;

template <typename T>
struct TruncatedNormal {  // float, Half, BFloat16: computed in float
  static constexpr int kGroupSize = 4;
  static constexpr bool kVariableSamples = true;
  std::array<T, kGroupSize> operator()(SingleSampleAdapter* gen) const {
    std::array<T, kGroupSize> out;
    int n = 0;
    while (true) {
      const uint32_t x0 = (*gen)();
      const uint32_t x1 = (*gen)();
      float f[2];
      BoxMullerFloat(x0, x1, &f[0], &f[1]);
      for (float v : f) {
        if (std::fabs(v) < 2.0f) {
          out[n++] = FromFloat<T>(v);
          if (n == kGroupSize) return out;
        }
      }
    }
  }
};

template <>
struct TruncatedNormal<double> {
  static constexpr int kGroupSize = 2;
  static constexpr bool kVariableSamples = true;
  std::array<double, kGroupSize> operator()(SingleSampleAdapter* gen) const {
    std::array<double, kGroupSize> out;
    int n = 0;
    while (true) {
      const uint32_t x0 = (*gen)();
      const uint32_t x1 = (*gen)();
      const uint32_t x2 = (*gen)();
      const uint32_t x3 = (*gen)();
      double d[2];
      BoxMullerDouble(x0, x1, x2, x3, &d[0], &d[1]);
      for (double v : d) {
        if (std::fabs(v) < 2.0) {
          out[n++] = v;
          if (n == kGroupSize) return out;
        }
      }
    }
  }
};

// ---- Filling an output ----------------------------------------------------------

template <typename Dist>
int64_t NumGroups(int64_t size) {
  return (size + Dist::kGroupSize - 1) / Dist::kGroupSize;
}

// Writes groups [begin_group, end_group) of a `size`-element output from the
// stream starting at `base`. The last group may be partial.
template <typename Dist, typename T>
void FillPhilox(const PhiloxRandom& base, T* data, int64_t size,
                int64_t begin_group, int64_t end_group,
                const Dist& dist = Dist()) {
  constexpr int kGroup = Dist::kGroupSize;
  auto store = [&](int64_t group, const std::array<T, kGroup>& values) {
    const int64_t offset = group * kGroup;
    const int64_t n = std::min<int64_t>(kGroup, size - offset);
    std::copy(values.begin(), values.begin() + n, data + offset);
  };
  if constexpr (Dist::kVariableSamples) {
    constexpr int64_t kSkipPerGroup =
        int64_t{kGroup} * kReservedBlocksPerValue /
        PhiloxRandom::kResultElementCount;
    for (int64_t g = begin_group; g < end_group; ++g) {
      PhiloxRandom gen = base;
      gen.Skip(static_cast<uint64_t>(g * kSkipPerGroup));
      SingleSampleAdapter single(&gen);
      store(g, dist(&single));
    }
  } else {
    PhiloxRandom gen = base;
    gen.Skip(static_cast<uint64_t>(begin_group));
    for (int64_t g = begin_group; g < end_group; ++g) store(g, dist(&gen));
  }
}

}  // namespace philox
}  // namespace weft

#endif  // WEFT_OPS_CPU_RANDOM_DISTRIBUTIONS_H_
