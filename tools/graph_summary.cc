#include "tools/graph_summary.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph_def_loader.h"
#include "nlohmann/json.hpp"
#include "tools/json_text.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/node_def_util.h"
#include "ops/framework/op_registry.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_shape.h"
#include "runtime/core/types.h"

namespace weft {
namespace {

// The node an input string ("a", "a:1", "^a") refers to.
std::string InputNode(const std::string& input) {
  std::string name = input;
  if (!name.empty() && name[0] == '^') name.erase(0, 1);
  const size_t colon = name.find(':');
  if (colon != std::string::npos) name.resize(colon);
  return name;
}

std::string AttrDtype(const tensorflow::NodeDef& node, const char* attr) {
  auto it = node.attr().find(attr);
  if (it == node.attr().end()) return "?";
  return DataTypeNumpyName(static_cast<DataType>(it->second.type()));
}

std::string AttrShape(const tensorflow::NodeDef& node, const char* attr) {
  auto it = node.attr().find(attr);
  if (it == node.attr().end() || !it->second.has_shape()) return "<unknown>";
  return PartialShape::FromProto(it->second.shape()).DebugString();
}

// First line of a status message: kernel-lookup errors list every
// registration after it, which is too much for a summary.
std::string Headline(const absl::Status& status) {
  std::string text = StatusToString(status);
  const size_t newline = text.find('\n');
  if (newline != std::string::npos) text.resize(newline);
  return text;
}

constexpr size_t kMaxListed = 20;

void AppendList(const std::vector<std::string>& items, std::string* out) {
  for (size_t i = 0; i < items.size() && i < kMaxListed; ++i) {
    absl::StrAppend(out, "    ", absl::CEscape(items[i]), "\n");
  }
  if (items.size() > kMaxListed) {
    absl::StrAppend(out, "    ... and ", items.size() - kMaxListed, " more\n");
  }
}

}  // namespace

GraphSummary SummarizeGraph(const tensorflow::GraphDef& graph) {
  GraphSummary s;
  s.num_nodes = graph.node_size();
  s.num_functions = graph.library().function_size();
  s.producer = graph.versions().producer();

  absl::flat_hash_set<std::string> consumed;
  for (const auto& node : graph.node()) {
    for (const std::string& input : node.input()) consumed.insert(InputNode(input));
  }

  const OpRegistry& ops = GlobalOpRegistry();
  const KernelRegistry& kernels = GlobalKernelRegistry();
  for (const auto& node : graph.node()) {
    ++s.op_counts[node.op()];
    ++s.devices[node.device()];
    const std::string& op = node.op();
    if (op == "VariableV2" || op == "Variable" || op == "VarHandleOp") {
      s.variables.push_back({node.name(), op, AttrDtype(node, "dtype"),
                             AttrShape(node, "shape")});
    } else if (op == "Placeholder" || op == "PlaceholderWithDefault") {
      s.inputs.push_back({node.name(), op, AttrDtype(node, "dtype"),
                          AttrShape(node, "shape")});
    }

    const tensorflow::OpDef* op_def = ops.LookUpOpDef(op);
    if (op_def == nullptr) {
      s.unsupported.push_back({node.name(), op, "unknown op"});
      continue;
    }
    tensorflow::NodeDef with_defaults = node;
    AddDefaultsToNodeDef(*op_def, &with_defaults);
    if (absl::Status k = kernels.FindKernelDef(with_defaults, "CPU").status();
        !k.ok()) {
      s.unsupported.push_back({node.name(), op, Headline(k)});
    }
    if (consumed.contains(node.name())) continue;
    DataTypeVector inputs, outputs;
    if (!InOutTypesForNode(with_defaults, *op_def, &inputs, &outputs).ok()) continue;
    if (outputs.empty()) {
      s.output_targets.push_back(node.name());
    } else {
      for (size_t i = 0; i < outputs.size(); ++i) {
        s.output_tensors.push_back(absl::StrCat(node.name(), ":", i));
      }
    }
  }

  // Loading checks edges, dtypes, cycles and static shapes; unknown ops were
  // listed above, so a graph with them reports that first error here too.
  absl::StatusOr<std::unique_ptr<Graph>> loaded = ConvertGraphDefToGraph(graph);
  if (!loaded.ok()) s.validation = Headline(loaded.status());
  return s;
}

std::string GraphSummaryToText(const GraphSummary& s) {
  std::string out = absl::StrCat("graph: ", s.num_nodes, " nodes, ",
                                 s.op_counts.size(), " distinct ops, ",
                                 s.num_functions, " library functions, producer ",
                                 s.producer, "\n");
  std::vector<std::pair<int64_t, std::string>> by_count;
  for (const auto& [op, n] : s.op_counts) by_count.emplace_back(-n, op);
  std::sort(by_count.begin(), by_count.end());
  absl::StrAppend(&out, "\nops (by count):\n");
  for (const auto& [neg, op] : by_count) {
    absl::StrAppend(&out, "  ", -neg, "\t", absl::CEscape(op), "\n");
  }
  absl::StrAppend(&out, "\ndevices requested:\n");
  for (const auto& [device, n] : s.devices) {
    absl::StrAppend(&out, "  ", n, "\t", device.empty() ? "(none)" : absl::CEscape(device), "\n");
  }
  absl::StrAppend(&out, "\nvariables (", s.variables.size(), "):\n");
  for (const auto& v : s.variables) {
    absl::StrAppend(&out, "  ", absl::CEscape(v.name), "\t", v.dtype, v.shape,
                    "\t(", absl::CEscape(v.op), ")\n");
  }
  absl::StrAppend(&out, "\ninputs (", s.inputs.size(), "):\n");
  for (const auto& in : s.inputs) {
    absl::StrAppend(&out, "  ", absl::CEscape(in.name), "\t", in.dtype, in.shape,
                    in.op == "Placeholder" ? "" : "\t(has a default)", "\n");
  }
  absl::StrAppend(&out, "\nlikely outputs (consumed by no node):\n  tensors:\n");
  AppendList(s.output_tensors, &out);
  absl::StrAppend(&out, "  targets:\n");
  AppendList(s.output_targets, &out);
  absl::StrAppend(&out, "\nops Weft cannot run (", s.unsupported.size(), "):\n");
  for (const auto& p : s.unsupported) {
    absl::StrAppend(&out, "  ", absl::CEscape(p.node), " (", absl::CEscape(p.op),
                    "): ", p.reason, "\n");
  }
  absl::StrAppend(&out, "\nvalidation: ", s.validation, "\n");
  return out;
}

std::string GraphSummaryToJson(const GraphSummary& s) {
  nlohmann::json j;
  j["num_nodes"] = s.num_nodes;
  j["num_functions"] = s.num_functions;
  j["producer"] = s.producer;
  j["op_counts"] = s.op_counts;
  j["devices"] = s.devices;
  j["variables"] = nlohmann::json::array();
  for (const auto& v : s.variables) {
    j["variables"].push_back(
        {{"name", v.name}, {"op", v.op}, {"dtype", v.dtype}, {"shape", v.shape}});
  }
  j["inputs"] = nlohmann::json::array();
  for (const auto& in : s.inputs) {
    j["inputs"].push_back(
        {{"name", in.name}, {"op", in.op}, {"dtype", in.dtype}, {"shape", in.shape}});
  }
  j["output_tensors"] = s.output_tensors;
  j["output_targets"] = s.output_targets;
  j["unsupported"] = nlohmann::json::array();
  for (const auto& p : s.unsupported) {
    j["unsupported"].push_back({{"node", p.node}, {"op", p.op}, {"reason", p.reason}});
  }
  j["validation"] = s.validation;
  return JsonText(j) + "\n";
}

}  // namespace weft
