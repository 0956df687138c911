// Fuzz target: shape functions and validation over structured graphs (one
// to four ops with attrs drawn for their OpDefs and Const inputs; see
// tests/fuzz/random_graph.h), as `weft inspect --placed` checks them.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/random_graph.h"
#include "tools/graph_summary.h"
#include "tools/placement_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const weft::fuzz::RandomGraph g = weft::fuzz::GraphFromBytes(data, size);
  const weft::GraphSummary summary = weft::SummarizeGraph(g.graph);
  (void)weft::GraphSummaryToText(summary);
  if (summary.validation == "ok") {
    absl::StatusOr<weft::PlacementReport> report =
        weft::PlaceForReport(g.graph, /*num_cpus=*/1, /*soft_placement=*/true);
    if (!report.ok()) weft::fuzz::ExpectClean(report.status(), "PlaceForReport");
  }
  return 0;
}
