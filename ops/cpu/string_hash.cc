// FarmHash Fingerprint64, MurmurHash64A and SipHash-2-4 (string_hash.h).
// FarmHash: strings up to 64 bytes are mixed by length class (0-16, 17-32,
// 33-64); longer ones run a 56-byte state over 64-byte blocks, then mix the
// last 64 bytes (which may overlap the previous block) into it.
#include "ops/cpu/string_hash.h"

#include <cstring>
#include <utility>

namespace weft {
namespace {

uint64_t Load64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint32_t Load32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint64_t Rot(uint64_t v, int shift) {
  return shift == 0 ? v : (v >> shift) | (v << (64 - shift));
}

constexpr uint64_t kK0 = 0xc3a5c85c97cb3127ULL;
constexpr uint64_t kK1 = 0xb492b66fbe98f273ULL;
constexpr uint64_t kK2 = 0x9ae16a3b2f90404fULL;

uint64_t ShiftMix(uint64_t v) { return v ^ (v >> 47); }

uint64_t Mix16(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = (u ^ v) * mul;
  a ^= a >> 47;
  uint64_t b = (v ^ a) * mul;
  b ^= b >> 47;
  return b * mul;
}

uint64_t Len0To16(const char* s, size_t len) {
  if (len >= 8) {
    const uint64_t mul = kK2 + len * 2;
    const uint64_t a = Load64(s) + kK2;
    const uint64_t b = Load64(s + len - 8);
    const uint64_t c = Rot(b, 37) * mul + a;
    const uint64_t d = (Rot(a, 25) + b) * mul;
    return Mix16(c, d, mul);
  }
  if (len >= 4) {
    const uint64_t mul = kK2 + len * 2;
    const uint64_t a = Load32(s);
    return Mix16(len + (a << 3), Load32(s + len - 4), mul);
  }
  if (len > 0) {
    const uint32_t a = static_cast<uint8_t>(s[0]);
    const uint32_t b = static_cast<uint8_t>(s[len >> 1]);
    const uint32_t c = static_cast<uint8_t>(s[len - 1]);
    const uint32_t y = a + (b << 8);
    const uint32_t z = static_cast<uint32_t>(len) + (c << 2);
    return ShiftMix(y * kK2 ^ z * kK0) * kK2;
  }
  return kK2;
}

uint64_t Len17To32(const char* s, size_t len) {
  const uint64_t mul = kK2 + len * 2;
  const uint64_t a = Load64(s) * kK1;
  const uint64_t b = Load64(s + 8);
  const uint64_t c = Load64(s + len - 8) * mul;
  const uint64_t d = Load64(s + len - 16) * kK2;
  return Mix16(Rot(a + b, 43) + Rot(c, 30) + d, a + Rot(b + kK2, 18) + c, mul);
}

uint64_t Len33To64(const char* s, size_t len) {
  const uint64_t mul = kK2 + len * 2;
  const uint64_t a = Load64(s) * kK2;
  const uint64_t b = Load64(s + 8);
  const uint64_t c = Load64(s + len - 8) * mul;
  const uint64_t d = Load64(s + len - 16) * kK2;
  const uint64_t y = Rot(a + b, 43) + Rot(c, 30) + d;
  const uint64_t z = Mix16(y, a + Rot(b + kK2, 18) + c, mul);
  const uint64_t e = Load64(s + 16) * mul;
  const uint64_t f = Load64(s + 24);
  const uint64_t g = (y + Load64(s + len - 32)) * mul;
  const uint64_t h = (z + Load64(s + len - 24)) * mul;
  return Mix16(Rot(e + f, 43) + Rot(g, 30) + h, e + Rot(f + a, 18) + g, mul);
}

using Pair = std::pair<uint64_t, uint64_t>;

// 32 bytes at s folded into the seeds (a, b).
Pair Weak32(const char* s, uint64_t a, uint64_t b) {
  const uint64_t w = Load64(s), x = Load64(s + 8), y = Load64(s + 16),
                 z = Load64(s + 24);
  a += w;
  b = Rot(b + a + z, 21);
  const uint64_t c = a;
  a += x;
  a += y;
  b += Rot(a, 44);
  return {a + z, b + c};
}

}  // namespace

uint64_t Fingerprint64(absl::string_view str) {
  const char* s = str.data();
  const size_t len = str.size();
  if (len <= 16) return Len0To16(s, len);
  if (len <= 32) return Len17To32(s, len);
  if (len <= 64) return Len33To64(s, len);
  constexpr uint64_t kSeed = 81;
  uint64_t x = kSeed;
  uint64_t y = kSeed * kK1 + 113;
  uint64_t z = ShiftMix(y * kK2 + 113) * kK2;
  Pair v = {0, 0}, w = {0, 0};
  x = x * kK2 + Load64(s);
  const char* end = s + ((len - 1) / 64) * 64;
  const char* last64 = s + len - 64;
  do {
    x = Rot(x + y + v.first + Load64(s + 8), 37) * kK1;
    y = Rot(y + v.second + Load64(s + 48), 42) * kK1;
    x ^= w.second;
    y += v.first + Load64(s + 40);
    z = Rot(z + w.first, 33) * kK1;
    v = Weak32(s, v.second * kK1, x + w.first);
    w = Weak32(s + 32, z + w.second, y + Load64(s + 16));
    std::swap(z, x);
    s += 64;
  } while (s != end);
  const uint64_t mul = kK1 + ((z & 0xff) << 1);
  s = last64;
  w.first += (len - 1) & 63;
  v.first += w.first;
  w.first += v.first;
  x = Rot(x + y + v.first + Load64(s + 8), 37) * mul;
  y = Rot(y + v.second + Load64(s + 48), 42) * mul;
  x ^= w.second * 9;
  y += v.first * 9 + Load64(s + 40);
  z = Rot(z + w.first, 33) * mul;
  v = Weak32(s, v.second * mul, x + w.first);
  w = Weak32(s + 32, z + w.second, y + Load64(s + 16));
  std::swap(z, x);
  return Mix16(Mix16(v.first, w.first, mul) + ShiftMix(y) * kK0 + z,
               Mix16(v.second, w.second, mul) + x, mul);
}

uint64_t LegacyHash64(absl::string_view str) {
  constexpr uint64_t kMul = 0xc6a4a7935bd1e995ULL;
  constexpr uint64_t kSeed = 0xDECAFCAFFEULL;
  const char* p = str.data();
  size_t n = str.size();
  uint64_t h = kSeed ^ (n * kMul);
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t k = Load64(p) * kMul;
    k ^= k >> 47;
    h = (h ^ (k * kMul)) * kMul;
  }
  if (n > 0) {
    for (size_t i = n; i-- > 0;) {
      h ^= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
    }
    h *= kMul;
  }
  h ^= h >> 47;
  h *= kMul;
  h ^= h >> 47;
  return h;
}

uint64_t SipHash24(uint64_t k0, uint64_t k1, absl::string_view str) {
  uint64_t v0 = k0 ^ 0x736f6d6570736575ULL;
  uint64_t v1 = k1 ^ 0x646f72616e646f6dULL;
  uint64_t v2 = k0 ^ 0x6c7967656e657261ULL;
  uint64_t v3 = k1 ^ 0x7465646279746573ULL;
  auto round = [&] {
    v0 += v1; v1 = Rot(v1, 51); v1 ^= v0; v0 = Rot(v0, 32);
    v2 += v3; v3 = Rot(v3, 48); v3 ^= v2;
    v0 += v3; v3 = Rot(v3, 43); v3 ^= v0;
    v2 += v1; v1 = Rot(v1, 47); v1 ^= v2; v2 = Rot(v2, 32);
  };
  const char* p = str.data();
  const size_t n = str.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t m = Load64(p + i);
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
  uint64_t last = static_cast<uint64_t>(n & 0xff) << 56;
  for (size_t j = 0; i + j < n; ++j) {
    last |= static_cast<uint64_t>(static_cast<uint8_t>(p[i + j])) << (8 * j);
  }
  v3 ^= last;
  round();
  round();
  v0 ^= last;
  v2 ^= 0xff;
  for (int r = 0; r < 4; ++r) round();
  return v0 ^ v1 ^ v2 ^ v3;
}

}  // namespace weft
