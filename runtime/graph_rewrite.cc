#include "runtime/graph_rewrite.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "proto/node_def.pb.h"
#include "runtime/core/tensor_proto.h"

namespace weft {

std::string UniqueNodeName(const Graph& graph, absl::string_view base) {
  std::string name(base);
  for (int i = 1; graph.FindNode(name) != nullptr; ++i) {
    name = absl::StrCat(base, "_", i);
  }
  return name;
}

void SetInputsFromEdges(const Node& node, tensorflow::NodeDef* def) {
  def->clear_input();
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Edge* e = node.input_edge(i);
    if (e == nullptr) {
      def->add_input("");
    } else if (e->src_output == 0) {
      def->add_input(e->src->name());
    } else {
      def->add_input(absl::StrCat(e->src->name(), ":", e->src_output));
    }
  }
  for (const Edge* e : node.in_edges()) {
    if (e->IsControlEdge()) def->add_input(absl::StrCat("^", e->src->name()));
  }
}

absl::StatusOr<Node*> AddConstNode(Graph* graph, absl::string_view name,
                                   const Tensor& value, const Node& like) {
  tensorflow::NodeDef def;
  def.set_name(UniqueNodeName(*graph, name));
  def.set_op("Const");
  def.set_device(like.requested_device());
  (*def.mutable_attr())["dtype"].set_type(value.dtype());
  TensorToProto(value, (*def.mutable_attr())["value"].mutable_tensor());
  absl::StatusOr<Node*> node = graph->AddNode(std::move(def));
  if (node.ok()) (*node)->set_assigned_device(like.assigned_device());
  return node;
}

void RemoveUnread(Graph* graph, const std::vector<int>& candidates) {
  absl::flat_hash_set<int> removable(candidates.begin(), candidates.end());
  std::vector<int> work(candidates.begin(), candidates.end());
  while (!work.empty()) {
    const int id = work.back();
    work.pop_back();
    Node* n = graph->FindNodeId(id);
    if (n == nullptr || !removable.contains(id) || !n->out_edges().empty()) continue;
    for (const Edge* e : n->in_edges()) {
      if (removable.contains(e->src->id())) work.push_back(e->src->id());
    }
    removable.erase(id);
    graph->RemoveNode(n);
  }
}

}  // namespace weft
