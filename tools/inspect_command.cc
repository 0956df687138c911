// weft inspect: what a GraphDef holds and whether Weft can run it.
#include <cstdio>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/graph_file.h"
#include "tools/graph_summary.h"

namespace weft {
namespace {

constexpr char kUsage[] =
    "usage: weft inspect --graph FILE [--format text|json]\n"
    "\n"
    "  --graph FILE   GraphDef, binary (.pb) or text (.pbtxt)\n"
    "  --format F     text (default) or json\n"
    "\n"
    "Prints node counts by op, requested devices, variables with shapes,\n"
    "inputs (placeholders), likely outputs (nodes nothing consumes), the ops\n"
    "Weft cannot run, and the first validation error if any. Exits 1 when the\n"
    "graph cannot run in Weft, 0 otherwise.\n";

}  // namespace

int InspectCommand(int argc, char** argv) {
  CommandLine cl({{"graph", kValue}, {"format", kValue}, {"help", kSwitch}});
  if (std::optional<int> exit = StartCommand(argc, argv, kUsage, {"graph"}, &cl)) {
    return *exit;
  }
  const std::string format = cl.Get("format", "text");
  absl::StatusOr<tensorflow::GraphDef> graph = ReadGraphDefFile(cl.Get("graph"));
  if (!graph.ok()) return ReportError(graph.status());
  const GraphSummary summary = SummarizeGraph(*graph);
  const std::string text = format == "json" ? GraphSummaryToJson(summary)
                                            : GraphSummaryToText(summary);
  std::fputs(text.c_str(), stdout);
  const bool runnable = summary.unsupported.empty() && summary.validation == "ok";
  return runnable ? kExitOk : kExitError;
}

}  // namespace weft
