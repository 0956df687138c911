// string_utf8.h: decoding to code points (malformed bytes are copied
// through unchanged), mapping with towupper_l/towlower_l in the C.UTF-8
// locale, and re-encoding.
#include "ops/cpu/string_utf8.h"

#include <clocale>
#include <cwctype>
#include <locale.h>

namespace weft {
namespace {

// Decodes the code point at s[*i], advancing *i; -1 (and one byte) when
// the bytes there are not well-formed UTF-8.
int32_t Decode(absl::string_view s, size_t* i) {
  const uint8_t c = s[*i];
  int extra = -1;
  if (c < 0x80) {
    extra = 0;
  } else if ((c >> 5) == 6) {
    extra = 1;
  } else if ((c >> 4) == 14) {
    extra = 2;
  } else if ((c >> 3) == 30) {
    extra = 3;
  }
  if (extra < 0 || *i + extra >= s.size()) {
    ++*i;
    return -1;
  }
  int32_t cp = extra == 0 ? c : c & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    const uint8_t d = s[*i + k];
    if ((d & 0xC0) != 0x80) {
      ++*i;
      return -1;
    }
    cp = (cp << 6) | (d & 0x3F);
  }
  *i += extra + 1;
  return cp;
}

void Encode(int32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

locale_t Utf8Locale() {
  static locale_t loc = [] {
    locale_t l = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
    return l != static_cast<locale_t>(0)
               ? l
               : newlocale(LC_CTYPE_MASK, "C", static_cast<locale_t>(0));
  }();
  return loc;
}

bool IsCased(int32_t cp) {
  return iswupper_l(cp, Utf8Locale()) || iswlower_l(cp, Utf8Locale());
}

template <bool kUpper>
std::string MapCase(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  bool prev_cased = false;
  while (i < s.size()) {
    const size_t start = i;
    const int32_t cp = Decode(s, &i);
    if (cp < 0) {
      out.push_back(s[start]);
      continue;
    }
    if (kUpper && cp == 0xDF) {
      out.append("SS");
    } else if (!kUpper && cp == 0x130) {
      out.append("i\xCC\x87");
    } else if (!kUpper && cp == 0x3A3) {
      // Final sigma: after a cased letter and not before one.
      size_t j = i;
      int32_t next = j < s.size() ? Decode(s, &j) : -1;
      Encode(prev_cased && !(next >= 0 && IsCased(next)) ? 0x3C2 : 0x3C3, &out);
    } else {
      Encode(kUpper ? towupper_l(cp, Utf8Locale()) : towlower_l(cp, Utf8Locale()),
             &out);
    }
    prev_cased = IsCased(cp);
  }
  return out;
}

}  // namespace

int64_t Utf8Length(absl::string_view s) {
  int64_t n = 0;
  for (char c : s) n += IsUtf8Lead(c);
  return n;
}

size_t Utf8Offset(absl::string_view s, int64_t n) {
  size_t i = 0;
  for (int64_t k = 0; k < n && i < s.size(); ++k) {
    ++i;
    while (i < s.size() && !IsUtf8Lead(s[i])) ++i;
  }
  return i;
}

std::string Utf8ToUpper(absl::string_view s) { return MapCase<true>(s); }
std::string Utf8ToLower(absl::string_view s) { return MapCase<false>(s); }

}  // namespace weft
