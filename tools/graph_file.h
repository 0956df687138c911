// Reading a GraphDef from a file, binary (.pb) or text (.pbtxt).
//
// The format is detected from the bytes, not the name: text format is plain
// printable text; anything else is parsed as binary. Errors name the file and,
// for text, the line and column.
#ifndef WEFT_TOOLS_GRAPH_FILE_H_
#define WEFT_TOOLS_GRAPH_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/graph.pb.h"

namespace weft {

absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// Parses `bytes` (read from `path`, used in messages) as a GraphDef.
absl::StatusOr<tensorflow::GraphDef> ParseGraphDef(const std::string& bytes,
                                                   const std::string& path);

absl::StatusOr<tensorflow::GraphDef> ReadGraphDefFile(const std::string& path);

}  // namespace weft

#endif  // WEFT_TOOLS_GRAPH_FILE_H_
