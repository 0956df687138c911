// Little-endian fixed-width integers and varints, as LevelDB tables and
// checkpoint data files store them. Readers advance a string_view and
// return false on malformed or truncated input. Thread-safe (pure).
#ifndef WEFT_RUNTIME_CHECKPOINT_CODING_H_
#define WEFT_RUNTIME_CHECKPOINT_CODING_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace weft {
namespace coding {

inline void PutFixed(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

inline uint64_t Fixed(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

inline bool GetVarint(absl::string_view* in, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace coding
}  // namespace weft

#endif  // WEFT_RUNTIME_CHECKPOINT_CODING_H_
