// weft inspect: what a GraphDef holds and whether Weft can run it; with
// --placed, where a session would run each node; with --coverage, how many of
// TensorFlow's ops Weft registers.
#include <cstdio>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tools/json_text.h"
#include "runtime/core/local_device_mgr.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/graph_file.h"
#include "tools/graph_summary.h"
#include "tools/local_devices.h"
#include "tools/op_coverage.h"
#include "ops/framework/op_registry.h"
#include "tools/placement_report.h"

namespace weft {
namespace {

constexpr char kUsage[] =
    "usage: weft inspect --graph FILE [--format text|json]\n"
    "                    [--placed [--cpu-devices N] [--no-soft-placement]]\n"
    "                    [--max-input-bytes N]\n"
    "       weft inspect --coverage [--tf-ops FILE [--tf-kernels FILE]\n"
    "                    [--list-missing]]\n"
    "                    [--format text|json]\n"
    "\n"
    "  --graph FILE     GraphDef, binary (.pb) or text (.pbtxt)\n"
    "  --max-input-bytes N  refuse a --graph or --tf-ops file larger than N\n"
    "                   bytes (default 1 GiB)\n"
    "  --format F       text (default) or json\n"
    "  --placed         also place the graph as a session would (soft\n"
    "                   placement, as 'weft run' and 'weft train' do) and show\n"
    "                   each node's device, nodes per device and the number of\n"
    "                   cross-device transfers (json: key \"placement\"); a node\n"
    "                   not on the device it asked for is marked \"(requested\n"
    "                   /cpu:9, soft-placed)\"\n"
    "  --cpu-devices N  the session's CPU devices for --placed (default: as\n"
    "                   many as the graph's device requests need)\n"
    "  --no-soft-placement  with --placed: fail, naming the node and why, when\n"
    "                   a request cannot be met (unknown device, no kernel there,\n"
    "                   conflicting colocation) instead of moving the node\n"
    "  --coverage       print how many ops Weft registers and, with --tf-ops,\n"
    "                   how many of TensorFlow's public ops (names not starting\n"
    "                   with '_') those are\n"
    "  --tf-ops FILE    TensorFlow's op list: one name per line, or an OpList\n"
    "                   (binary or text); see the README for the command that\n"
    "                   writes it from an installed TensorFlow\n"
    "  --tf-kernels FILE  with --tf-ops: TensorFlow's KernelList (binary or\n"
    "                   text; see the README); also print how many of the\n"
    "                   dtype combinations TensorFlow's CPU kernels take, for\n"
    "                   the ops Weft has, Weft's kernels take too (types\n"
    "                   the op's own OpDef refuses are left out: no graph\n"
    "                   can hold them)\n"
    "  --list-missing   with --tf-ops: also list the public ops Weft lacks\n"
    "                   (and, with --tf-kernels, the missing combinations)\n"
    "\n"
    "Prints node counts by op, requested devices, variables with shapes,\n"
    "inputs (placeholders), likely outputs (nodes nothing consumes), every op\n"
    "Weft cannot run with the nodes using it (function bodies included, as\n"
    "function/node), and the first validation error if any. Exits 1 when the\n"
    "graph cannot run in Weft (or, with --placed, cannot be placed), 0\n"
    "otherwise.\n";

int CoverageCommand(const CommandLine& cl, int64_t max_input, bool json) {
  std::optional<std::vector<std::string>> tf_ops;
  if (cl.Has("tf-ops")) {
    absl::StatusOr<std::string> bytes = ReadFileToString(cl.Get("tf-ops"), max_input);
    if (!bytes.ok()) return ReportError(bytes.status());
    absl::StatusOr<std::vector<std::string>> names =
        ParseOpNames(*bytes, cl.Get("tf-ops"));
    if (!names.ok()) return ReportError(names.status());
    tf_ops = *std::move(names);
  }
  OpCoverage coverage =
      ComputeOpCoverage(GlobalOpRegistry(), tf_ops ? &*tf_ops : nullptr);
  if (cl.Has("tf-kernels")) {
    absl::StatusOr<std::string> bytes =
        ReadFileToString(cl.Get("tf-kernels"), max_input);
    if (!bytes.ok()) return ReportError(bytes.status());
    absl::StatusOr<tensorflow::KernelList> list =
        ParseKernelList(*bytes, cl.Get("tf-kernels"));
    if (!list.ok()) return ReportError(list.status());
    coverage.kernels = ComputeKernelCoverage(GlobalOpRegistry(),
                                             GlobalKernelRegistry(), *list);
    coverage.has_kernels = true;
  }
  const bool list_missing = cl.Has("list-missing");
  const std::string text = json ? OpCoverageToJson(coverage, list_missing)
                                : OpCoverageToText(coverage, list_missing);
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

}  // namespace

int InspectCommand(int argc, char** argv) {
  CommandLine cl({{"graph", kValue},
                  {"format", kValue},
                  {"placed", kSwitch},
                  {"cpu-devices", kValue},
                  {"no-soft-placement", kSwitch},
                  {"max-input-bytes", kValue},
                  {"coverage", kSwitch},
                  {"tf-ops", kValue},
                  {"tf-kernels", kValue},
                  {"list-missing", kSwitch},
                  {"help", kSwitch}});
  if (std::optional<int> exit = StartCommand(argc, argv, kUsage, {}, &cl)) {
    return *exit;
  }
  const bool json = cl.Get("format", "text") == "json";
  absl::StatusOr<int64_t> max_input =
      cl.GetByteSize("max-input-bytes", kDefaultMaxInputBytes);
  if (!max_input.ok()) return ReportUsage(max_input.status(), kUsage);
  if (cl.Has("coverage")) {
    for (const char* flag : {"graph", "placed", "cpu-devices", "no-soft-placement"}) {
      if (cl.Has(flag)) {
        return ReportUsage(absl::InvalidArgumentError(absl::StrCat(
                               "--", flag, " does not go with --coverage")),
                           kUsage);
      }
    }
    for (const char* flag : {"list-missing", "tf-kernels"}) {
      if (cl.Has(flag) && !cl.Has("tf-ops")) {
        return ReportUsage(absl::InvalidArgumentError(absl::StrCat(
                               "--", flag, " needs --tf-ops")),
                           kUsage);
      }
    }
    return CoverageCommand(cl, *max_input, json);
  }
  for (const char* flag : {"tf-ops", "tf-kernels", "list-missing"}) {
    if (cl.Has(flag)) {
      return ReportUsage(absl::InvalidArgumentError(
                             absl::StrCat("--", flag, " goes with --coverage")),
                         kUsage);
    }
  }
  if (!cl.Has("graph")) {
    return ReportUsage(absl::InvalidArgumentError("--graph is required"), kUsage);
  }
  int cpus = 0;
  if (cl.Has("cpu-devices")) {
    if (!cl.Has("placed")) {
      return ReportUsage(absl::InvalidArgumentError(
                             "--cpu-devices goes with --placed"),
                         kUsage);
    }
    absl::StatusOr<int64_t> n =
        cl.GetPositiveInt("cpu-devices", 1, kMaxLocalCpuDevices);
    if (!n.ok()) return ReportUsage(n.status(), kUsage);
    cpus = static_cast<int>(*n);
  }
  if (cl.Has("no-soft-placement") && !cl.Has("placed")) {
    return ReportUsage(
        absl::InvalidArgumentError("--no-soft-placement goes with --placed"),
        kUsage);
  }
  absl::StatusOr<tensorflow::GraphDef> graph =
      ReadGraphDefFile(cl.Get("graph"), *max_input);
  if (!graph.ok()) return ReportError(graph.status());
  const GraphSummary summary = SummarizeGraph(*graph);
  const bool runnable = summary.unsupported.empty() && summary.validation == "ok";
  std::string text = json ? GraphSummaryToJson(summary)
                          : GraphSummaryToText(summary);
  absl::Status placement_error;
  if (cl.Has("placed") && summary.validation == "ok") {
    absl::StatusOr<PlacementReport> report =
        PlaceForReport(*graph, cpus > 0 ? cpus : CpuDevicesRequested(*graph),
                       /*soft_placement=*/!cl.Has("no-soft-placement"));
    if (!report.ok()) {
      placement_error = report.status();
    } else if (json) {
      nlohmann::json j = nlohmann::json::parse(text);
      j["placement"] = nlohmann::json::parse(PlacementReportToJson(*report));
      text = JsonText(j) + "\n";
    } else {
      text += PlacementReportToText(*report);
    }
  }
  std::fputs(text.c_str(), stdout);
  if (!placement_error.ok()) return ReportError(placement_error);
  return runnable ? kExitOk : kExitError;
}

}  // namespace weft
