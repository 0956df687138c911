#include "distributed/device_filters.h"

#include "runtime/core/status.h"

namespace weft {

absl::StatusOr<std::vector<DeviceSpec>> ParseFilters(
    const std::vector<std::string>& filters, absl::string_view field) {
  std::vector<DeviceSpec> specs;
  for (const std::string& f : filters) {
    absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(f);
    if (!spec.ok()) return WithContext(spec.status(), field);
    specs.push_back(*std::move(spec));
  }
  return specs;
}

DeviceSpec TaskSpec(const TaskId& task) {
  DeviceSpec spec;
  spec.job = task.job;
  spec.replica = 0;
  spec.task = task.index;
  return spec;
}

std::vector<TaskId> SelectTasks(const ClusterSpec& cluster,
                                const std::vector<DeviceSpec>& filters) {
  std::vector<TaskId> tasks;
  for (const TaskId& task : cluster.Tasks()) {
    bool wanted = filters.empty();
    for (const DeviceSpec& f : filters) {
      wanted |= f.IsCompatibleWith(TaskSpec(task));
    }
    if (wanted) tasks.push_back(task);
  }
  return tasks;
}

}  // namespace weft
