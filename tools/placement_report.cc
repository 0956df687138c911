#include "tools/placement_report.h"

#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_def_loader.h"
#include "graph/partition.h"
#include "graph/placer.h"
#include "nlohmann/json.hpp"
#include "tools/json_text.h"
#include "ops/framework/kernel_registry.h"
#include "runtime/core/status.h"
#include "tools/local_devices.h"

namespace weft {

absl::StatusOr<PlacementReport> PlaceForReport(const tensorflow::GraphDef& def,
                                               int num_cpus,
                                               bool soft_placement) {
  PlacementReport report;
  report.num_cpus = num_cpus;
  report.soft_placement = soft_placement;
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph,
                        ConvertGraphDefToGraph(def));
  PlacerOptions options;
  options.devices = LocalCpuDeviceNames(num_cpus);
  options.kernels = &GlobalKernelRegistry();
  options.allow_soft_placement = soft_placement;
  WEFT_RETURN_IF_ERROR(PlaceGraph(options, graph.get()));
  for (const auto& node : def.node()) {
    const Node* n = graph->FindNode(node.name());
    if (n == nullptr) continue;
    report.nodes.push_back(
        NodePlacement{node.name(), n->assigned_device(), SoftPlacementNote(*n)});
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
      r.soft_placement ? ", soft placement; " : ", no soft placement; ",
      r.transfers, " cross-device transfers):\n");
  for (const auto& [device, n] : r.nodes_per_device) {
    absl::StrAppend(&out, "  ", n, "\t", device, "\n");
  }
  absl::StrAppend(&out, "\ndevice of each node:\n");
  for (const NodePlacement& n : r.nodes) {
    absl::StrAppend(&out, "  ", absl::CEscape(n.node), "\t", n.device,
                    n.note.empty() ? "" : "\t(", absl::CEscape(n.note),
                    n.note.empty() ? "" : ")", "\n");
  }
  return out;
}

std::string PlacementReportToJson(const PlacementReport& r) {
  nlohmann::json j;
  j["cpu_devices"] = r.num_cpus;
  j["soft_placement"] = r.soft_placement;
  j["transfers"] = r.transfers;
  j["nodes_per_device"] = r.nodes_per_device;
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodePlacement& n : r.nodes) {
    nlohmann::json entry = {{"node", n.node}, {"device", n.device}};
    if (!n.note.empty()) entry["note"] = n.note;
    nodes.push_back(entry);
  }
  j["nodes"] = nodes;
  return JsonText(j);
}

}  // namespace weft
