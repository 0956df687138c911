// Reading a table's entries out of a text file, as TensorFlow's
// InitializeTableFromTextFile does (lookup_text_file.cc).
#ifndef WEFT_OPS_CPU_LOOKUP_TEXT_FILE_H_
#define WEFT_OPS_CPU_LOOKUP_TEXT_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "runtime/core/file_policy.h"
#include "runtime/core/tensor.h"

namespace weft {

// The op's attrs. An index >= 0 picks a column of the line split at
// `delimiter`; -1 is the line number (+ offset), -2 the whole line.
struct TextFileSpec {
  int64_t key_index = 0;
  int64_t value_index = 0;
  int64_t vocab_size = -1;  // -1: every line
  char delimiter = '\t';
  int64_t offset = 0;
};

// A file larger than this is refused (RESOURCE_EXHAUSTED): the whole file
// is read into memory first.
inline constexpr int64_t kMaxTableFileBytes = int64_t{1} << 30;

struct TextFileEntries {
  Tensor keys;     // [count] of the key dtype
  Tensor values;   // [count] of the value dtype
  int64_t count = 0;
  // TensorFlow's iterator size: vocab_size, or the file's line count.
  int64_t total = 0;
  // How reading ended: OUT_OF_RANGE when it reached the end (or
  // vocab_size lines), else the error of line `count` (naming the file and
  // line in TensorFlow's words).
  absl::Status end;
};

// Checks the indices against the dtypes (TensorFlow's INVALID_ARGUMENT
// messages), resolves `filename` through `policy`, and parses at most
// `max_lines` lines (-1: all) into *out. Errors about the file as a whole
// (policy, missing, too large, bad indices) are returned; errors of a line
// end the entries (out->end).
absl::Status ReadTableTextFile(const FilePolicy& policy,
                               const std::string& filename,
                               const TextFileSpec& spec, DataType key_dtype,
                               DataType value_dtype, int64_t max_lines,
                               TextFileEntries* out);

}  // namespace weft

#endif  // WEFT_OPS_CPU_LOOKUP_TEXT_FILE_H_
