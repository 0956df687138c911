// What every fuzz target asserts about a status it gets back: an error is
// fine (the inputs are hostile), but it must be a clean one. INTERNAL and
// UNKNOWN mean Weft lost track of what went wrong, and an empty message tells
// the user nothing; either aborts, so libFuzzer records the input as a crash.
#ifndef WEFT_TESTS_FUZZ_FUZZ_CHECK_H_
#define WEFT_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"

namespace weft::fuzz {

inline void ExpectClean(const absl::Status& s, const char* what) {
  if (s.ok()) return;
  const bool bad_code = s.code() == absl::StatusCode::kInternal ||
                        s.code() == absl::StatusCode::kUnknown;
  if (bad_code || s.message().empty()) {
    std::fprintf(stderr, "fuzz: %s gave an unclean error: %s\n", what,
                 s.ToString().c_str());
    std::abort();
  }
}

// Aborts (a finding) when `condition` is false.
inline void ExpectTrue(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "fuzz: property failed: %s\n", what);
  std::abort();
}

}  // namespace weft::fuzz

#endif  // WEFT_TESTS_FUZZ_FUZZ_CHECK_H_
