#include "tools/local_devices.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/core/device_name.h"
#include "runtime/core/local_device_mgr.h"

namespace weft {

absl::StatusOr<std::vector<std::string>> ParseDeviceList(absl::string_view csv) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (absl::string_view entry : absl::StrSplit(csv, ',')) {
    if (entry.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--devices '", csv, "' has an empty entry; use e.g. cpu:0,cpu:1"));
    }
    const std::string name = entry[0] == '/' ? std::string(entry)
                                             : absl::StrCat("/", entry);
    absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(name);
    if (!spec.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--devices: '", entry, "' is not a device name (",
          spec.status().message(), "); use e.g. cpu:0 or /job:worker/task:1"));
    }
    std::string canonical = spec->ToString();
    if (!seen.insert(canonical).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--devices names '", canonical, "' twice"));
    }
    out.push_back(std::move(canonical));
  }
  return out;
}

absl::Status CheckLocalDevices(const std::vector<std::string>& specs) {
  for (const std::string& name : specs) {
    absl::StatusOr<DeviceSpec> s = ParseDeviceSpec(name);
    if (!s.ok()) return s.status();
    const bool local = (!s->job || *s->job == "localhost") &&
                       (!s->replica || *s->replica == 0) &&
                       (!s->task || *s->task == 0) && s->type &&
                       (*s->type == "CPU" || *s->type == "GPU") && s->id;
    if (!local) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", name, "' is not a CPU or GPU device of this process: weft "
          "train runs locally on cpu:0, cpu:1, ..., gpu:0, ... ('weft "
          "graphgen' writes graphs for other devices)"));
    }
    if (*s->type == "CPU" && *s->id >= kMaxLocalCpuDevices) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", name, "': a process has at most ", kMaxLocalCpuDevices,
          " CPU devices (cpu:0..cpu:", kMaxLocalCpuDevices - 1, ")"));
    }
  }
  return absl::OkStatus();
}

namespace {
// The CPU id `device` requests, or -1 (none, another type, unparsable).
int RequestedCpu(const std::string& device) {
  if (device.empty()) return -1;
  absl::StatusOr<DeviceSpec> s = ParseDeviceSpec(device);
  if (!s.ok() || !s->id || (s->type && *s->type != "CPU")) return -1;
  return *s->id;
}
}  // namespace

int CpuDevicesRequested(const tensorflow::GraphDef& graph) {
  // In int64: an id may be INT_MAX. Beyond the bound, CheckCpuRequests says
  // which node asks for too much.
  int64_t n = 1;
  for (const auto& node : graph.node()) {
    n = std::max<int64_t>(n, int64_t{RequestedCpu(node.device())} + 1);
  }
  return static_cast<int>(std::min<int64_t>(n, kMaxLocalCpuDevices));
}

bool RequestsGpu(const tensorflow::GraphDef& graph) {
  for (const auto& node : graph.node()) {
    if (node.device().empty()) continue;
    absl::StatusOr<DeviceSpec> s = ParseDeviceSpec(node.device());
    if (s.ok() && s->type && *s->type == "GPU") return true;
  }
  return false;
}

absl::Status CheckCpuRequests(const tensorflow::GraphDef& graph, int num_cpus) {
  for (const auto& node : graph.node()) {
    const int id = RequestedCpu(node.device());
    if (id >= kMaxLocalCpuDevices) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", node.name(), "' requests device '", node.device(),
          "', but a process has at most ", kMaxLocalCpuDevices,
          " CPU devices (CPU:0..CPU:", kMaxLocalCpuDevices - 1, ")"));
    }
    if (id >= num_cpus) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", node.name(), "' requests device '", node.device(),
          "' but the session has ", num_cpus, " CPU device",
          num_cpus == 1 ? "" : "s", " (CPU:0..CPU:", num_cpus - 1,
          "); ask for more with --cpu-devices ", id + 1));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> LocalCpuDeviceNames(int num_cpus) {
  std::vector<std::string> names;
  for (int i = 0; i < num_cpus; ++i) {
    names.push_back(
        absl::StrCat("/job:localhost/replica:0/task:0/device:CPU:", i));
  }
  return names;
}

}  // namespace weft
