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

}  // namespace weft
