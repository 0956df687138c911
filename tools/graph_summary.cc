#include "tools/graph_summary.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph_def_loader.h"
#include "graph/lower_functional_ops.h"
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

// True when some attr of a function body's node is a placeholder ("$T") that
// each call fills in: its kernel can only be looked up per call.
bool HasPlaceholderAttr(const tensorflow::NodeDef& node) {
  for (const auto& [name, value] : node.attr()) {
    if (value.value_case() == tensorflow::AttrValue::kPlaceholder) return true;
  }
  return false;
}

// Why Weft cannot run `node`, naming no node; "" when it can, or when only
// the calls of the function whose body holds it (`in_body`) can tell.
std::string NodeProblem(const tensorflow::NodeDef& node,
                        const tensorflow::OpDef* op_def, bool in_body,
                        const KernelRegistry& kernels) {
  if (op_def == nullptr) return "unknown op";
  if (IsLoweredBeforeRun(node.op())) return "";  // rewritten, never executed
  tensorflow::NodeDef with_defaults = node;
  AddDefaultsToNodeDef(*op_def, &with_defaults);
  const absl::Status k = kernels.FindKernelDef(with_defaults, "CPU").status();
  if (k.ok()) return "";
  if (absl::IsUnimplemented(k)) return "no kernel on any device";
  if (in_body && HasPlaceholderAttr(node)) return "";
  std::string reason = Headline(k);
  const std::string mention = absl::StrCat(" (node '", node.name(), "')");
  if (size_t at = reason.find(mention); at != std::string::npos) {
    reason.erase(at, mention.size());
  }
  return reason;
}

// (op, reason) -> the nodes it stops, as the summary lists them.
using ProblemMap =
    std::map<std::pair<std::string, std::string>, std::vector<std::string>>;

constexpr size_t kMaxListed = 20;
constexpr size_t kMaxNodesNamed = 5;  // per unsupported op, in text

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
    for (const std::string& input : node.input()) {
      consumed.emplace(InputNodeName(input));
    }
  }

  const OpRegistry& ops = GlobalOpRegistry();
  const KernelRegistry& kernels = GlobalKernelRegistry();
  absl::flat_hash_set<std::string> functions;
  for (const auto& fn : graph.library().function()) {
    functions.insert(fn.signature().name());
  }
  // A node whose op is no registered op but a library function is a call.
  auto is_call = [&](const std::string& op) {
    return ops.LookUpOpDef(op) == nullptr && functions.contains(op);
  };
  ProblemMap problems;
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

    if (is_call(op)) continue;
    const tensorflow::OpDef* op_def = ops.LookUpOpDef(op);
    if (std::string why = NodeProblem(node, op_def, /*in_body=*/false, kernels);
        !why.empty()) {
      problems[{op, why}].push_back(node.name());
    }
    if (op_def == nullptr || consumed.contains(node.name())) continue;
    tensorflow::NodeDef with_defaults = node;
    AddDefaultsToNodeDef(*op_def, &with_defaults);
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

  for (const auto& fn : graph.library().function()) {
    for (const auto& node : fn.node_def()) {
      if (is_call(node.op())) continue;
      std::string why = NodeProblem(node, ops.LookUpOpDef(node.op()),
                                    /*in_body=*/true, kernels);
      if (!why.empty()) {
        problems[{node.op(), why}].push_back(
            absl::StrCat(fn.signature().name(), "/", node.name()));
      }
    }
  }
  for (auto& [key, nodes] : problems) {
    s.unsupported.push_back({key.first, key.second, std::move(nodes)});
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
    std::vector<std::string> named;
    for (size_t i = 0; i < p.nodes.size() && i < kMaxNodesNamed; ++i) {
      named.push_back(absl::CEscape(p.nodes[i]));
    }
    if (p.nodes.size() > kMaxNodesNamed) {
      named.push_back(absl::StrCat("... and ", p.nodes.size() - kMaxNodesNamed,
                                   " more"));
    }
    absl::StrAppend(&out, "  ", absl::CEscape(p.op), " (", p.nodes.size(),
                    p.nodes.size() == 1 ? " node: " : " nodes: ",
                    absl::StrJoin(named, ", "), "): ", p.reason, "\n");
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
    std::vector<std::string> named(
        p.nodes.begin(), p.nodes.begin() + std::min(p.nodes.size(), kMaxListed));
    j["unsupported"].push_back({{"op", p.op},
                                {"reason", p.reason},
                                {"num_nodes", p.nodes.size()},
                                {"nodes", named}});
  }
  j["validation"] = s.validation;
  return JsonText(j) + "\n";
}

}  // namespace weft
