// UTF-8 helpers of the string kernels: character counts and offsets (a
// character starts at every byte that is not 10xxxxxx, as TensorFlow
// counts), and Unicode case mapping (glibc's simple mappings, plus the
// special cases TensorFlow's ICU applies: sharp s uppercases to "SS",
// dotted capital I lowercases to "i" + U+0307, a final capital sigma
// lowercases to U+03C2).
#ifndef WEFT_OPS_CPU_STRING_UTF8_H_
#define WEFT_OPS_CPU_STRING_UTF8_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace weft {

inline bool IsUtf8Lead(char c) {
  return (static_cast<uint8_t>(c) & 0xC0) != 0x80;
}

int64_t Utf8Length(absl::string_view s);

// Byte offset of character `n` (s.size() when n >= the count).
size_t Utf8Offset(absl::string_view s, int64_t n);

std::string Utf8ToUpper(absl::string_view s);
std::string Utf8ToLower(absl::string_view s);

}  // namespace weft

#endif  // WEFT_OPS_CPU_STRING_UTF8_H_
