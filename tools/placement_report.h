// Where a session would run each node of a GraphDef: the placement behind
// `weft inspect --placed`.
//
//   absl::StatusOr<PlacementReport> r = PlaceForReport(graph, /*num_cpus=*/2);
//   std::cout << PlacementReportToText(*r);
//
// The graph is placed as a local session with `num_cpus` CPU devices and
// soft placement (as `weft run` and `weft train` create it) would place
// it: graph/placer.h over the whole graph, with the kernel registry. It is
// then partitioned (graph/partition.h) to count the _Send/_Recv pairs a
// step running every node would need.
#ifndef WEFT_TOOLS_PLACEMENT_REPORT_H_
#define WEFT_TOOLS_PLACEMENT_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/graph.pb.h"

namespace weft {

struct PlacementReport {
  int num_cpus = 1;
  // (node, assigned full device name), in GraphDef order.
  std::vector<std::pair<std::string, std::string>> nodes;
  std::map<std::string, int64_t> nodes_per_device;
  int64_t transfers = 0;  // _Send/_Recv pairs after partitioning
};

// The placer's error (naming the node, its request and why) if the graph
// cannot be placed; INVALID_ARGUMENT if it does not load.
absl::StatusOr<PlacementReport> PlaceForReport(const tensorflow::GraphDef& graph,
                                               int num_cpus);

// A "placement" section: per-device counts, then one "node<TAB>device" line
// per node.
std::string PlacementReportToText(const PlacementReport& report);
// {"cpu_devices": N, "transfers": T, "nodes_per_device": {...},
//  "nodes": [{"node": "name", "device": "..."}, ...]} (GraphDef order)
std::string PlacementReportToJson(const PlacementReport& report);

}  // namespace weft

#endif  // WEFT_TOOLS_PLACEMENT_REPORT_H_
