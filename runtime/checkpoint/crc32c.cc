#include "runtime/checkpoint/crc32c.h"

#include <array>
#include <cstring>

namespace weft {
namespace {

constexpr uint32_t kPoly = 0x82f63b78u;  // reflected Castagnoli

std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? kPoly : 0);
    t[i] = c;
  }
  return t;
}

uint32_t SoftwareExtend(uint32_t state, const char* data, size_t n) {
  static const std::array<uint32_t, 256> table = MakeTable();
  for (size_t i = 0; i < n; ++i) {
    state = table[(state ^ static_cast<uint8_t>(data[i])) & 0xff] ^ (state >> 8);
  }
  return state;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t HardwareExtend(uint32_t state,
                                                          const char* data,
                                                          size_t n) {
  uint64_t s = state;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, data, 8);
    s = __builtin_ia32_crc32di(s, word);
    data += 8;
    n -= 8;
  }
  uint32_t s32 = static_cast<uint32_t>(s);
  while (n > 0) {
    s32 = __builtin_ia32_crc32qi(s32, static_cast<uint8_t>(*data));
    ++data;
    --n;
  }
  return s32;
}

bool HasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n) {
  const uint32_t state = crc ^ 0xffffffffu;
#if defined(__x86_64__)
  if (HasSse42()) return HardwareExtend(state, data, n) ^ 0xffffffffu;
#endif
  return SoftwareExtend(state, data, n) ^ 0xffffffffu;
}

}  // namespace weft
