// How much of TensorFlow's op set Weft registers: `weft inspect --coverage`.
//
//   absl::StatusOr<std::vector<std::string>> tf = ReadOpNames(path);
//   OpCoverage c = ComputeOpCoverage(GlobalOpRegistry(), &*tf);
//   std::cout << OpCoverageToText(c, /*list_missing=*/true);
//
// and, for the ops both have, how many of the dtypes TensorFlow's CPU
// kernels take Weft's take too (`--tf-kernels`):
//
//   absl::StatusOr<tensorflow::KernelList> k = ParseKernelList(bytes, path);
//   c.kernels = ComputeKernelCoverage(GlobalOpRegistry(),
//                                     GlobalKernelRegistry(), *k);
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
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "proto/kernel_def.pb.h"

namespace weft {

// TensorFlow's CPU kernels, each expanded into its type combinations
// ("Abs[T=int8]"), for the ops Weft registers; a combination is covered when
// a node with those attrs finds a Weft CPU kernel, or the op is one the
// graph loader lowers into plain nodes (calls, If, While, Case).
struct KernelCoverage {
  int64_t combinations = 0;
  int64_t covered = 0;
  std::vector<std::string> missing;  // "Abs[T=int8]", sorted
  // Missing combinations by the dtypes they name ("complex64" -> 310).
  std::vector<std::pair<std::string, int64_t>> missing_by_dtype;  // most first
};

struct OpCoverage {
  int64_t weft_ops = 0;      // OpDefs registered in Weft, internal ones too
  bool has_tf = false;       // the rest is filled only with TensorFlow's list
  int64_t tf_public_ops = 0;
  int64_t covered = 0;       // public TensorFlow ops Weft registers
  std::vector<std::string> missing;  // the others, sorted
  bool has_kernels = false;  // `kernels` is filled
  KernelCoverage kernels;
};

// The op names in `bytes` (read from `path`, named in errors), deduplicated:
// a binary OpList, a text-format OpList ("op { name: ... }"), or plain lines
// (blank lines and '#' comments skipped). INVALID_ARGUMENT for anything else.
absl::StatusOr<std::vector<std::string>> ParseOpNames(const std::string& bytes,
                                                      const std::string& path);

// `tf_ops` may be null: then only Weft's count is filled.
OpCoverage ComputeOpCoverage(const OpRegistry& ops,
                             const std::vector<std::string>* tf_ops);

// TensorFlow's KernelList, binary or text format (as
// `kernels.get_all_registered_kernels()` gives it); INVALID_ARGUMENT naming
// `path` otherwise.
absl::StatusOr<tensorflow::KernelList> ParseKernelList(const std::string& bytes,
                                                       const std::string& path);

// Kernels with a label, on another device, or of an op Weft lacks are not
// counted; nor are constraints on anything but types.
KernelCoverage ComputeKernelCoverage(const OpRegistry& ops,
                                     const KernelRegistry& kernels,
                                     const tensorflow::KernelList& tf);

// "N ops registered in Weft; M of TensorFlow's T public ops (P%)", then,
// with `list_missing`, the missing public ops one per line; with kernels,
// the dtype coverage, the missing combinations counted by dtype and, with
// `list_missing`, listed.
std::string OpCoverageToText(const OpCoverage& coverage, bool list_missing);
// The same as one JSON object.
std::string OpCoverageToJson(const OpCoverage& coverage, bool list_missing);

}  // namespace weft

#endif  // WEFT_TOOLS_OP_COVERAGE_H_
