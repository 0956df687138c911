// The file-system steps the checkpoint writer, the checkpoint directory
// and the event writer share: errors from errno that name the file,
// mkdir -p, and whole-file writes that are atomic (a temporary name, then a
// rename, so a reader sees the old file or the new one, never part of one).
// Thread-safe (no shared state but a per-thread random source).
#ifndef WEFT_RUNTIME_CHECKPOINT_FILE_UTIL_H_
#define WEFT_RUNTIME_CHECKPOINT_FILE_UTIL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace weft {

// "<path>.tempstate<random>", TensorFlow's temporary name.
std::string TempName(const std::string& path);

// The current errno as a status naming `path`: NOT_FOUND, RESOURCE_EXHAUSTED
// (disk full, quota) or FAILED_PRECONDITION; "<what> <path>: <strerror>".
absl::Status FileError(absl::string_view what, const std::string& path);

// mkdir -p `dir`; and of the directory `path` is in.
absl::Status CreateDirectories(const std::string& dir);
absl::Status CreateParentDirectories(const std::string& path);

// Writes `bytes` to TempName(path) and renames it to `path`; on failure the
// temporary file is removed and `path` is as it was.
absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes);

}  // namespace weft

#endif  // WEFT_RUNTIME_CHECKPOINT_FILE_UTIL_H_
