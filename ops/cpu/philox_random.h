// Philox4x32-10: the counter-based random number generator of Salmon, Moraes,
// Dror and Shaw, "Parallel Random Numbers: As Easy as 1, 2, 3" (SC 2011).
//
// A 128-bit counter is encrypted with a 64-bit key by ten rounds of
//   (c0, c1, c2, c3) -> (hi(B*c2) ^ c1 ^ k0, lo(B*c2), hi(A*c0) ^ c3 ^ k1, lo(A*c0))
// with the key bumped by the Weyl constants between rounds; each call returns
// four 32-bit words and advances the counter by one. Skip(n) jumps n calls
// ahead in O(1), which is what lets kernels reserve disjoint ranges of one
// stream.
//
// Seeding follows TensorFlow's convention so that the same (seed, seed2)
// attrs give the same numbers: seed fills the key, seed2 the upper 64 bits of
// the counter, and the lower 64 bits of the counter start at zero.
//
//   PhiloxRandom gen(/*seed=*/87654321, /*seed2=*/42);
//   PhiloxRandom::Block b = gen();   // four uint32s
//
// PhiloxRandom is a small value type (copying it forks the stream); it is not
// thread-safe. GuardedPhiloxRandom (random_kernels.cc) adds a mutex.
#ifndef WEFT_OPS_CPU_PHILOX_RANDOM_H_
#define WEFT_OPS_CPU_PHILOX_RANDOM_H_

#include <array>
#include <cstdint>
#include <random>

namespace weft {
namespace philox {

class PhiloxRandom {
 public:
  using Block = std::array<uint32_t, 4>;
  using Key = std::array<uint32_t, 2>;
  static constexpr int kResultElementCount = 4;

  PhiloxRandom() = default;
  PhiloxRandom(uint64_t seed_lo, uint64_t seed_hi) {
    key_[0] = static_cast<uint32_t>(seed_lo);
    key_[1] = static_cast<uint32_t>(seed_lo >> 32);
    counter_[2] = static_cast<uint32_t>(seed_hi);
    counter_[3] = static_cast<uint32_t>(seed_hi >> 32);
  }
  PhiloxRandom(const Block& counter, const Key& key)
      : counter_(counter), key_(key) {}

  const Block& counter() const { return counter_; }
  const Key& key() const { return key_; }

  // Advances the 128-bit counter by `count` (as if operator() ran `count`
  // times).
  void Skip(uint64_t count) {
    const uint32_t count_lo = static_cast<uint32_t>(count);
    uint32_t count_hi = static_cast<uint32_t>(count >> 32);
    counter_[0] += count_lo;
    if (counter_[0] < count_lo) ++count_hi;
    counter_[1] += count_hi;
    if (counter_[1] < count_hi) {
      if (++counter_[2] == 0) ++counter_[3];
    }
  }

  // The next four words.
  Block operator()() {
    Block c = counter_;
    Key k = key_;
    for (int round = 0; round < 10; ++round) {
      c = Round(c, k);
      k[0] += kWeylA;
      k[1] += kWeylB;
    }
    SkipOne();
    return c;
  }

 private:
  static constexpr uint32_t kWeylA = 0x9E3779B9;  // golden ratio
  static constexpr uint32_t kWeylB = 0xBB67AE85;  // sqrt(3) - 1
  static constexpr uint32_t kMulA = 0xD2511F53;
  static constexpr uint32_t kMulB = 0xCD9E8D57;

  static Block Round(const Block& c, const Key& k) {
    const uint64_t p0 = static_cast<uint64_t>(kMulA) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(kMulB) * c[2];
    return Block{static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0],
                 static_cast<uint32_t>(p1),
                 static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1],
                 static_cast<uint32_t>(p0)};
  }

  void SkipOne() {
    if (++counter_[0] == 0 && ++counter_[1] == 0 && ++counter_[2] == 0) {
      ++counter_[3];
    }
  }

  Block counter_{};
  Key key_{};
};

// The generator of TensorFlow's stateless random ops for a two-word seed
// (the int32 or int64 `seed` input, each word widened to 64 bits with its
// sign): the seed, as a counter, is encrypted once under a fixed key; the
// first two words of the result become the key, the last two the upper
// half of the counter, whose lower half starts at zero. Different seeds
// thus give unrelated streams even when they differ in one bit.
inline PhiloxRandom StatelessGenerator(uint64_t seed0, uint64_t seed1) {
  const PhiloxRandom::Block seed{
      static_cast<uint32_t>(seed0), static_cast<uint32_t>(seed0 >> 32),
      static_cast<uint32_t>(seed1), static_cast<uint32_t>(seed1 >> 32)};
  PhiloxRandom scramble(seed, PhiloxRandom::Key{0x3ec8f720u, 0x02461e29u});
  const PhiloxRandom::Block mix = scramble();
  return PhiloxRandom(PhiloxRandom::Block{0, 0, mix[2], mix[3]},
                      PhiloxRandom::Key{mix[0], mix[1]});
}

// The generator of a stateful random op (or queue) with seed attrs (seed,
// seed2), as TensorFlow seeds it; both 0 means "unseeded": a key from the
// system's entropy, different on every call.
inline PhiloxRandom SeededGenerator(int64_t seed, int64_t seed2) {
  if (seed == 0 && seed2 == 0) {
    std::random_device rd;
    std::mt19937_64 mix((static_cast<uint64_t>(rd()) << 32) ^ rd());
    seed = static_cast<int64_t>(mix());
    seed2 = static_cast<int64_t>(mix());
  }
  return PhiloxRandom(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
}

// Hands out a generator's words one at a time (for rejection sampling, which
// consumes a variable number of words per output).
class SingleSampleAdapter {
 public:
  explicit SingleSampleAdapter(PhiloxRandom* gen) : gen_(gen) {}
  uint32_t operator()() {
    if (used_ == PhiloxRandom::kResultElementCount) {
      block_ = (*gen_)();
      used_ = 0;
    }
    return block_[used_++];
  }

 private:
  PhiloxRandom* gen_;
  PhiloxRandom::Block block_{};
  int used_ = PhiloxRandom::kResultElementCount;
};

}  // namespace philox
}  // namespace weft

#endif  // WEFT_OPS_CPU_PHILOX_RANDOM_H_
