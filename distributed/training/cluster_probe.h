// Which tasks of a cluster answer: what a tool says after a step timed out,
// so the message names the task that died instead of "deadline exceeded".
#ifndef WEFT_DISTRIBUTED_TRAINING_CLUSTER_PROBE_H_
#define WEFT_DISTRIBUTED_TRAINING_CLUSTER_PROBE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "distributed/cluster_spec.h"
#include "distributed/rpc/grpc_security.h"

namespace weft {

// Asks each of `tasks` for its status (GetStatus) in parallel, waiting at
// most `timeout` for each; returns "/job:J/task:I (ADDRESS): why" for every
// task that did not answer, in the order of `tasks`. Empty: all answered.
std::vector<std::string> UnansweringTasks(
    const ClusterSpec& cluster, const std::vector<TaskId>& tasks,
    const std::shared_ptr<const Security>& security, absl::Duration timeout);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TRAINING_CLUSTER_PROBE_H_
