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

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TASK_NAME_H_
