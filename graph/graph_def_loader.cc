#include "graph/graph_def_loader.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/algorithm.h"
#include "graph/lower_functional_ops.h"
#include "graph/shape_check.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

bool IsNameChar(char c) {
  return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-' ||
         c == '/' || c == '>';
}

// TensorFlow's node-name rule, with a leading '_' allowed (internal nodes).
absl::Status CheckNodeName(const tensorflow::NodeDef& node, int index) {
  const std::string& name = node.name();
  bool ok = !name.empty() &&
            (absl::ascii_isalnum(name[0]) || name[0] == '.' || name[0] == '_');
  for (char c : name) ok = ok && IsNameChar(c);
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "node ", index, " (op ", absl::CEscape(node.op()), ") has invalid name '",
      absl::CEscape(name),
      "': names use letters, digits and _ . - / >, and start with a letter, "
      "digit, '.' or '_'"));
}

// A non-ref input accepts a ref output of the same base type; a ref input
// needs a ref output.
bool TypesCompatible(DataType produced, DataType expected) {
  if (produced == expected) return true;
  return IsRefType(produced) && !IsRefType(expected) &&
         BaseType(produced) == expected;
}

// Adds the edges of `node` listed in its NodeDef inputs.
absl::Status AddInputEdges(Graph* graph, Node* node) {
  int slot = 0;
  for (const std::string& input : node->def().input()) {
    absl::StatusOr<TensorId> id = ParseTensorName(input);
    if (!id.ok()) {
      return WithContext(id.status(),
                         absl::StrCat("node '", node->name(), "'"));
    }
    Node* src = graph->FindNode(id->node);
    if (id->is_control()) {
      if (src == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("node '", node->name(), "' control input '", input,
                         "' refers to '", id->node, "', which does not exist"));
      }
      graph->AddControlEdge(src, node);
      continue;
    }
    if (src == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", node->name(), "' input ", slot, " refers to '",
                       id->node, "', which does not exist"));
    }
    if (id->index >= src->num_outputs()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", node->name(), "' input ", slot, " refers to '", input,
          "' but ", src->name(), " has ", src->num_outputs(), " output",
          src->num_outputs() == 1 ? "" : "s"));
    }
    const DataType produced = src->output_type(id->index);
    const DataType expected = node->input_type(slot);
    if (!TypesCompatible(produced, expected)) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", node->name(), "' input ", slot, " expects ",
                       DataTypeString(expected), " but '", src->name(), ":",
                       id->index, "' is ", DataTypeString(produced)));
    }
    graph->AddEdge(src, id->index, node, slot);
    ++slot;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckGraphDefVersions(const tensorflow::VersionDef& versions) {
  if (versions.producer() < kGraphDefMinProducer) {
    return absl::InvalidArgumentError(
        absl::StrCat("GraphDef producer version ", versions.producer(),
                     " is below the oldest Weft reads (", kGraphDefMinProducer,
                     "); re-export the graph with a newer TensorFlow"));
  }
  if (versions.min_consumer() > kGraphDefVersion) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GraphDef needs a consumer of version ", versions.min_consumer(),
        " or newer, but Weft reads version ", kGraphDefVersion,
        " (TensorFlow 2.21); the graph was written by a newer TensorFlow "
        "(producer ",
        versions.producer(), ")"));
  }
  for (int bad : versions.bad_consumers()) {
    if (bad == kGraphDefVersion) {
      return absl::InvalidArgumentError(absl::StrCat(
          "GraphDef lists consumer version ", kGraphDefVersion,
          " (this Weft) in bad_consumers: its producer (version ",
          versions.producer(), ") says this reader would misread it"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Graph>> ConvertGraphDefToGraph(
    const tensorflow::GraphDef& graph_def, const OpRegistry& ops,
    const GraphConversionOptions& options) {
  WEFT_RETURN_IF_ERROR(CheckGraphDefVersions(graph_def.versions()));
  if (HasFunctionalOps(graph_def, ops)) {
    WEFT_ASSIGN_OR_RETURN(tensorflow::GraphDef lowered,
                          LowerFunctionalOps(graph_def, ops));
    return ConvertGraphDefToGraph(lowered, ops, options);
  }
  auto graph = std::make_unique<Graph>(&ops);
  graph->set_versions(graph_def.versions());
  *graph->mutable_library() = graph_def.library();

  absl::flat_hash_map<absl::string_view, int> first_index;
  first_index.reserve(graph_def.node_size());
  for (int i = 0; i < graph_def.node_size(); ++i) {
    const tensorflow::NodeDef& def = graph_def.node(i);
    WEFT_RETURN_IF_ERROR(CheckNodeName(def, i));
    auto [it, inserted] = first_index.emplace(def.name(), i);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node name '", def.name(), "' is used by more than one node (nodes ",
          it->second, " and ", i, " of the GraphDef)"));
    }
  }
  for (const tensorflow::NodeDef& def : graph_def.node()) {
    WEFT_RETURN_IF_ERROR(graph->AddNode(def).status());
  }
  for (Node* node : graph->nodes()) {
    WEFT_RETURN_IF_ERROR(AddInputEdges(graph.get(), node));
  }
  WEFT_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph));
  if (options.check_shapes) {
    WEFT_RETURN_IF_ERROR(CheckShapes(*graph, order).status());
  }
  return graph;
}

}  // namespace weft
