// The cluster and this process's task, as every distributed subcommand
// takes them: --cluster SPEC (flag form, JSON, or @FILE holding either) with
// --job and --task, or, with none of those flags, the TF_CONFIG environment
// variable (distributed/cluster_spec.h).
#ifndef WEFT_TOOLS_CLUSTER_FLAGS_H_
#define WEFT_TOOLS_CLUSTER_FLAGS_H_

#include "absl/status/statusor.h"
#include "distributed/cluster_spec.h"
#include "tools/command_line.h"

namespace weft {

struct ClusterAndTask {
  ClusterSpec cluster;
  TaskId task;
};

// INVALID_ARGUMENT naming the flag or the TF_CONFIG field at fault.
absl::StatusOr<ClusterAndTask> ClusterAndTaskFromFlags(const CommandLine& cl);

// The spec of --cluster alone (for commands without a task of their own).
absl::StatusOr<ClusterSpec> ClusterFromFlag(const std::string& value);

}  // namespace weft

#endif  // WEFT_TOOLS_CLUSTER_FLAGS_H_
