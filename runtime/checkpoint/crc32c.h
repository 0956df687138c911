// CRC32C (Castagnoli), the checksum of TensorFlow's checkpoints, LevelDB
// tables and TFRecord files, and the masking those formats store it with.
//
//   uint32_t c = Crc32c(bytes.data(), bytes.size());
//   c = Crc32cExtend(c, more.data(), more.size());   // == Crc32c of both
//   uint32_t stored = MaskCrc(c);                     // what files hold
//
// Hand-written because no library here has it (Debian's Abseil 20220623
// predates absl/crc; gRPC does not export one): the SSE4.2 crc32
// instruction where the CPU has it (every x86-64 since 2008; about 8 bytes
// per cycle), a table otherwise. Thread-safe (pure functions).
#ifndef WEFT_RUNTIME_CHECKPOINT_CRC32C_H_
#define WEFT_RUNTIME_CHECKPOINT_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace weft {

// The CRC of `crc`'s data followed by data[0, n).
uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n);
inline uint32_t Crc32c(const char* data, size_t n) { return Crc32cExtend(0, data, n); }

// LevelDB's masking: stored CRCs are rotated and offset, so that a CRC over
// data holding CRCs stays a good check.
inline uint32_t MaskCrc(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}
inline uint32_t UnmaskCrc(uint32_t masked) {
  const uint32_t r = masked - 0xa282ead8u;
  return (r >> 17) | (r << 15);
}

}  // namespace weft

#endif  // WEFT_RUNTIME_CHECKPOINT_CRC32C_H_
