// Glob patterns as TensorFlow's file systems match them (MatchingFiles,
// MatchingFilesDataset): '*', '?' and '[...]' within one path component,
// a leading '.' matched by wildcards too, results sorted bytewise.
//
// Every pattern goes through the device's file policy first (a pattern
// outside the roots is PERMISSION_DENIED, whatever it would match), and so
// does every match: one that resolves outside the roots (a symbolic link
// pointing out) is left out. Matches are returned as the pattern spelled
// them (glob(3) with GLOB_PERIOD, "." and ".." dropped).
#ifndef WEFT_OPS_DATA_FILE_MATCH_H_
#define WEFT_OPS_DATA_FILE_MATCH_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/core/file_policy.h"

namespace weft {
namespace data {

// Appends the files matching `pattern` to *out, sorted.
absl::Status MatchFiles(const FilePolicy& policy, const std::string& pattern,
                        std::vector<std::string>* out);

}  // namespace data
}  // namespace weft

#endif  // WEFT_OPS_DATA_FILE_MATCH_H_
