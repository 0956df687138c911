// Device lists for the CLI: parsing `--devices cpu:0,cpu:1` (or gpu:0), and
// sizing and checking the local CPU devices a session gets for a graph.
//
//   absl::StatusOr<std::vector<std::string>> d = ParseDeviceList("cpu:0,cpu:1");
//   // {"/device:CPU:0", "/device:CPU:1"}
//   int n = CpuDevicesRequested(graph);        // 2 for a graph asking for CPU:1
//   WEFT_RETURN_IF_ERROR(CheckCpuRequests(graph, n));
#ifndef WEFT_TOOLS_LOCAL_DEVICES_H_
#define WEFT_TOOLS_LOCAL_DEVICES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/graph.pb.h"

namespace weft {

// A comma-separated list of device specs, each parsed by
// runtime/core/device_name.h (the leading "/" may be left out: "cpu:1",
// "/job:worker/task:1") and returned in canonical form. INVALID_ARGUMENT
// quoting the bad entry, or an entry given twice.
absl::StatusOr<std::vector<std::string>> ParseDeviceList(absl::string_view csv);

// INVALID_ARGUMENT unless every spec names a CPU or GPU of this process (no
// job or job localhost, replica 0, task 0, type CPU or GPU, an id): what
// `weft train` can run on. Whether the GPU exists is the session's business
// (soft placement moves the work to the CPU, and says why with
// --log-device-placement).
absl::Status CheckLocalDevices(const std::vector<std::string>& specs);

// One more than the highest CPU id any node requests (NodeDef.device), at
// least 1: how many CPU devices the graph's requests need.
int CpuDevicesRequested(const tensorflow::GraphDef& graph);

// True if some node requests a GPU (NodeDef.device of type GPU).
bool RequestsGpu(const tensorflow::GraphDef& graph);

// INVALID_ARGUMENT naming the first node whose request names a CPU id
// outside 0..num_cpus-1, so a request soft placement would silently move is
// reported instead.
absl::Status CheckCpuRequests(const tensorflow::GraphDef& graph, int num_cpus);

// "/job:localhost/replica:0/task:0/device:CPU:0" ... CPU:num_cpus-1, the
// names a local session gives its devices.
std::vector<std::string> LocalCpuDeviceNames(int num_cpus);

}  // namespace weft

#endif  // WEFT_TOOLS_LOCAL_DEVICES_H_
