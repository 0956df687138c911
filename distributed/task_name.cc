#include "distributed/task_name.h"

#include "absl/strings/str_cat.h"
#include "runtime/core/device_name.h"
#include "runtime/core/status.h"

namespace weft {

std::string TaskName(absl::string_view job, int replica, int task) {
  return absl::StrCat("/job:", job, "/replica:", replica, "/task:", task);
}

absl::StatusOr<std::string> TaskOfDevice(absl::string_view device) {
  WEFT_ASSIGN_OR_RETURN(DeviceSpec spec, ParseDeviceSpec(device));
  if (!spec.job || !spec.replica || !spec.task) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device '", device, "' does not name its job, replica and task"));
  }
  return TaskName(*spec.job, *spec.replica, *spec.task);
}

absl::StatusOr<std::string> DeviceAsTask(absl::string_view device,
                                         absl::string_view task) {
  absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(device);
  if (!spec.ok() || !spec->IsFull()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", device, "' is not a full device name (/job:J/replica:R/task:T/device:TYPE:N)"));
  }
  WEFT_ASSIGN_OR_RETURN(DeviceSpec owner, ParseDeviceSpec(task));
  if (!owner.job || !owner.replica || !owner.task || owner.type) {
    return absl::InvalidArgumentError(absl::StrCat("'", task, "' is not a task name"));
  }
  spec->job = owner.job;
  spec->replica = owner.replica;
  spec->task = owner.task;
  return spec->ToString();
}

}  // namespace weft
