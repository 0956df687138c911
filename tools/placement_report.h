// Where a session would run each node of a GraphDef: the placement behind
// `weft inspect --placed`.
//
//   absl::StatusOr<PlacementReport> r =
//       PlaceForReport(graph, /*num_cpus=*/2, /*soft_placement=*/true);
//   std::cout << PlacementReportToText(*r);
//
// The graph is placed as a local session with `num_cpus` CPU devices would
// place it (with soft placement, as `weft run` and `weft train` create it
// by default): graph/placer.h over the whole graph, with the kernel
// registry. Nodes soft placement moved away from their request are marked
// ("requested /cpu:9, soft-placed"). The graph is then partitioned
// (graph/partition.h) to count the _Send/_Recv pairs a step running every
// node would need.
#ifndef WEFT_TOOLS_PLACEMENT_REPORT_H_
#define WEFT_TOOLS_PLACEMENT_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/graph.pb.h"

namespace weft {

struct NodePlacement {
  std::string node;
  std::string device;  // the assigned full device name
  std::string note;    // graph/placer.h SoftPlacementNote; empty if none
};

struct PlacementReport {
  int num_cpus = 1;
  bool soft_placement = true;
  std::vector<NodePlacement> nodes;  // in GraphDef order
  std::map<std::string, int64_t> nodes_per_device;
  int64_t transfers = 0;  // _Send/_Recv pairs after partitioning
};

// The placer's error (naming the node, its request and why) if the graph
// cannot be placed (without soft placement: also any request no device
// meets); INVALID_ARGUMENT if it does not load.
absl::StatusOr<PlacementReport> PlaceForReport(const tensorflow::GraphDef& graph,
                                               int num_cpus,
                                               bool soft_placement);

// A "placement" section: per-device counts, then one "node<TAB>device" line
// per node, with "<TAB>(requested ..., soft-placed)" where one applies.
std::string PlacementReportToText(const PlacementReport& report);
// {"cpu_devices": N, "soft_placement": B, "transfers": T,
//  "nodes_per_device": {...}, "nodes": [{"node": "name", "device": "..."},
//  ...]} (GraphDef order; a soft-placed node also has "note": "requested
//  /cpu:9, soft-placed")
std::string PlacementReportToJson(const PlacementReport& report);

}  // namespace weft

#endif  // WEFT_TOOLS_PLACEMENT_REPORT_H_
