// Fuzz target: a GraphDef file as `weft inspect` reads it. The bytes are
// parsed (binary, or text when they look like text), validated as a session
// would (ops, attrs, edges, dtypes, static shapes), summarised in text and
// JSON, and placed over two CPU devices.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_check.h"
#include "tools/graph_file.h"
#include "tools/graph_summary.h"
#include "tools/placement_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tensorflow::GraphDef> graph =
      weft::ParseGraphDef(bytes, "fuzz.pb");
  if (!graph.ok()) {
    weft::fuzz::ExpectClean(graph.status(), "ParseGraphDef");
    return 0;
  }
  const weft::GraphSummary summary = weft::SummarizeGraph(*graph);
  (void)weft::GraphSummaryToText(summary);
  (void)weft::GraphSummaryToJson(summary);
  if (summary.validation == "ok") {
    absl::StatusOr<weft::PlacementReport> report =
        weft::PlaceForReport(*graph, /*num_cpus=*/2, /*soft_placement=*/true);
    if (report.ok()) {
      (void)weft::PlacementReportToText(*report);
    } else {
      weft::fuzz::ExpectClean(report.status(), "PlaceForReport");
    }
  }
  return 0;
}
