// Reading a GraphDef from a file, binary (.pb) or text (.pbtxt).
//
// The format is detected from the bytes, not the name: bytes that look like
// printable text are parsed as text format first and, if that fails, as
// binary (a binary GraphDef can start with printable bytes); anything else is
// parsed as binary. Errors name the file and, for text, the line and column.
//
// Reads are bounded: a file larger than `max_bytes` is refused with
// RESOURCE_EXHAUSTED before it is read (the CLI's --max-input-bytes raises
// the limit), and so is anything that is not a regular file (a FIFO, a
// device such as /dev/zero, a directory), which has no size to check.
#ifndef WEFT_TOOLS_GRAPH_FILE_H_
#define WEFT_TOOLS_GRAPH_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "proto/graph.pb.h"
#include "tools/input_limits.h"

namespace weft {

absl::StatusOr<std::string> ReadFileToString(
    const std::string& path, int64_t max_bytes = kDefaultMaxInputBytes);

// Parses `bytes` (read from `path`, used in messages) as a GraphDef.
absl::StatusOr<tensorflow::GraphDef> ParseGraphDef(const std::string& bytes,
                                                   const std::string& path);

absl::StatusOr<tensorflow::GraphDef> ReadGraphDefFile(
    const std::string& path, int64_t max_bytes = kDefaultMaxInputBytes);

}  // namespace weft

#endif  // WEFT_TOOLS_GRAPH_FILE_H_
