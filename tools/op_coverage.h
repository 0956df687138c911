// How much of TensorFlow's op set Weft registers: `weft inspect --coverage`.
//
//   absl::StatusOr<std::vector<std::string>> tf = ReadOpNames(path);
//   OpCoverage c = ComputeOpCoverage(GlobalOpRegistry(), &*tf);
//   std::cout << OpCoverageToText(c, /*list_missing=*/true);
//
// Weft never links TensorFlow, so TensorFlow's op list comes from a file that
// an installed TensorFlow writes (see the README): one op name per line, or
// an OpList proto, text or binary. Public ops are those whose name does not
// start with '_' (TensorFlow's internal ops do).
#ifndef WEFT_TOOLS_OP_COVERAGE_H_
#define WEFT_TOOLS_OP_COVERAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/framework/op_registry.h"

namespace weft {

struct OpCoverage {
  int64_t weft_ops = 0;      // OpDefs registered in Weft, internal ones too
  bool has_tf = false;       // the rest is filled only with TensorFlow's list
  int64_t tf_public_ops = 0;
  int64_t covered = 0;       // public TensorFlow ops Weft registers
  std::vector<std::string> missing;  // the others, sorted
};

// The op names in `bytes` (read from `path`, named in errors), deduplicated:
// a binary OpList, a text-format OpList ("op { name: ... }"), or plain lines
// (blank lines and '#' comments skipped). INVALID_ARGUMENT for anything else.
absl::StatusOr<std::vector<std::string>> ParseOpNames(const std::string& bytes,
                                                      const std::string& path);

// `tf_ops` may be null: then only Weft's count is filled.
OpCoverage ComputeOpCoverage(const OpRegistry& ops,
                             const std::vector<std::string>* tf_ops);

// "N ops registered in Weft; M of TensorFlow's T public ops (P%)", then,
// with `list_missing`, the missing public ops one per line.
std::string OpCoverageToText(const OpCoverage& coverage, bool list_missing);
// The same as one JSON object.
std::string OpCoverageToJson(const OpCoverage& coverage, bool list_missing);

}  // namespace weft

#endif  // WEFT_TOOLS_OP_COVERAGE_H_
