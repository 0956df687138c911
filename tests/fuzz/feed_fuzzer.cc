// Fuzz target: the feed parsers of `weft run --feed`: the JSON / nested list
// text form (with the dtype hint a placeholder gives) and .npy files, then
// printing what they produced both ways `weft run` prints fetches.
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/core/types.h"
#include "tests/fuzz/fuzz_check.h"
#include "tools/npy.h"
#include "tools/tensor_text.h"

namespace {

const weft::DataType kHints[] = {
    weft::DT_INVALID, weft::DT_FLOAT, weft::DT_INT32, weft::DT_INT64,
    weft::DT_BOOL,    weft::DT_STRING, weft::DT_DOUBLE, weft::DT_UINT8,
    weft::DT_HALF,    weft::DT_RESOURCE};

// `weft run` lets a feed hold up to --max-input-bytes (1 GiB by default):
// {"shape": [13716658, 7], "values": [0]} is a 384 MB tensor a user may
// ask for, and printing it took the harness 30 s. Inputs here get 1 MiB,
// so each runs in milliseconds and the limit's error path is fuzzed too.
constexpr int64_t kMaxFeedBytes = int64_t{1} << 20;

void Print(const absl::StatusOr<weft::Tensor>& t, const char* what) {
  if (!t.ok()) {
    weft::fuzz::ExpectClean(t.status(), what);
    return;
  }
  (void)weft::TensorToJson(*t);
  (void)weft::TensorToText(*t);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the parser and the hint; the rest is the value.
  const uint8_t selector = data[0];
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  if (selector & 0x80) {
    Print(weft::ParseNpy(rest, "fuzz.npy"), "ParseNpy");
  } else if (rest.empty() || rest[0] != '@') {  // '@' would read a file
    const weft::DataType hint = kHints[selector % (sizeof(kHints) / sizeof(kHints[0]))];
    Print(weft::ParseFeedValue(rest, hint, kMaxFeedBytes), "ParseFeedValue");
  }
  return 0;
}
