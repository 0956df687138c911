#include "tools/placement_report.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "graph/graph_def_loader.h"
#include "graph/partition.h"
#include "graph/placer.h"
#include "nlohmann/json.hpp"
#include "ops/framework/kernel_registry.h"
#include "runtime/status.h"
#include "tools/local_devices.h"

namespace weft {

absl::StatusOr<PlacementReport> PlaceForReport(const tensorflow::GraphDef& def,
                                               int num_cpus) {
  PlacementReport report;
  report.num_cpus = num_cpus;
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph,
                        ConvertGraphDefToGraph(def));
  PlacerOptions options;
  options.devices = LocalCpuDeviceNames(num_cpus);
  options.kernels = &GlobalKernelRegistry();
  options.allow_soft_placement = true;
  WEFT_RETURN_IF_ERROR(PlaceGraph(options, graph.get()));
  for (const auto& node : def.node()) {
    const Node* n = graph->FindNode(node.name());
    if (n == nullptr) continue;
    report.nodes.emplace_back(node.name(), n->assigned_device());
    ++report.nodes_per_device[n->assigned_device()];
  }
  WEFT_ASSIGN_OR_RETURN(auto parts, PartitionGraph(PartitionOptions(), *graph));
  for (const auto& [device, part] : parts) {
    for (const auto& node : part.node()) {
      if (node.op() == "_Send") ++report.transfers;
    }
  }
  return report;
}

std::string PlacementReportToText(const PlacementReport& r) {
  std::string out = absl::StrCat(
      "\nplacement (", r.num_cpus, " CPU device", r.num_cpus == 1 ? "" : "s",
      ", soft placement; ", r.transfers, " cross-device transfers):\n");
  for (const auto& [device, n] : r.nodes_per_device) {
    absl::StrAppend(&out, "  ", n, "\t", device, "\n");
  }
  absl::StrAppend(&out, "\ndevice of each node:\n");
  for (const auto& [node, device] : r.nodes) {
    absl::StrAppend(&out, "  ", node, "\t", device, "\n");
  }
  return out;
}

std::string PlacementReportToJson(const PlacementReport& r) {
  nlohmann::json j;
  j["cpu_devices"] = r.num_cpus;
  j["transfers"] = r.transfers;
  j["nodes_per_device"] = r.nodes_per_device;
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& [node, device] : r.nodes) {
    nodes.push_back({{"node", node}, {"device", device}});
  }
  j["nodes"] = nodes;
  return j.dump(2);
}

}  // namespace weft
