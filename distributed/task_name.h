// Task names: "/job:J/replica:R/task:T", the prefix of every device a task
// owns, and how the master and the workers address a task.
#ifndef WEFT_DISTRIBUTED_TASK_NAME_H_
#define WEFT_DISTRIBUTED_TASK_NAME_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace weft {

// "/job:J/replica:R/task:T".
std::string TaskName(absl::string_view job, int replica, int task);

// The task that owns a full device name
// ("/job:ps/replica:0/task:1/device:CPU:0" -> "/job:ps/replica:0/task:1").
// INVALID_ARGUMENT quoting the name when it lacks a job, replica or task.
absl::StatusOr<std::string> TaskOfDevice(absl::string_view device);

// A full device name a task reported, renamed to belong to `task`
// ("/job:J/replica:R/task:T"): a task started under one name serves a
// session whose cluster calls it another (ClusterSpec propagation), and
// GetStatus answers with the first. ("/job:localhost/replica:0/task:0/
// device:CPU:0", "/job:worker/replica:0/task:1") -> "/job:worker/replica:0/
// task:1/device:CPU:0". INVALID_ARGUMENT when `device` is not a full device
// name or `task` not a task name.
absl::StatusOr<std::string> DeviceAsTask(absl::string_view device,
                                         absl::string_view task);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TASK_NAME_H_
