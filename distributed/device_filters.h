// Device filters (ConfigProto.device_filters, ResetRequest.device_filters)
// as the master applies them: which tasks of a cluster a session or a
// reset reaches. Used by distributed/master.cc and master_cluster.cc.
#ifndef WEFT_DISTRIBUTED_DEVICE_FILTERS_H_
#define WEFT_DISTRIBUTED_DEVICE_FILTERS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distributed/cluster_spec.h"
#include "runtime/core/device_name.h"

namespace weft {

// The filters as device specs; INVALID_ARGUMENT naming `field` and the
// malformed one.
absl::StatusOr<std::vector<DeviceSpec>> ParseFilters(
    const std::vector<std::string>& filters, absl::string_view field);

// "/job:J/replica:0/task:I" of `task`, as a spec filters are matched with.
DeviceSpec TaskSpec(const TaskId& task);

// The cluster's tasks some filter allows (all of them without filters).
std::vector<TaskId> SelectTasks(const ClusterSpec& cluster,
                                const std::vector<DeviceSpec>& filters);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_DEVICE_FILTERS_H_
