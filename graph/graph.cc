#include "graph/graph.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

bool OpIs(const Node& n, absl::string_view a, absl::string_view b) {
  return n.type_string() == a || n.type_string() == b;
}

void EraseFrom(std::vector<const Edge*>* edges, const Edge* e) {
  auto it = std::find(edges->begin(), edges->end(), e);
  if (it != edges->end()) edges->erase(it);
}

}  // namespace

bool Node::IsMerge() const { return OpIs(*this, "Merge", "RefMerge"); }
bool Node::IsSwitch() const {
  return OpIs(*this, "Switch", "RefSwitch") || type_string() == "_SwitchN";
}
bool Node::IsEnter() const { return OpIs(*this, "Enter", "RefEnter"); }
bool Node::IsExit() const { return OpIs(*this, "Exit", "RefExit"); }
bool Node::IsNextIteration() const {
  return OpIs(*this, "NextIteration", "RefNextIteration");
}
bool Node::IsConstant() const { return OpIs(*this, "Const", "HostConst"); }
bool Node::IsPlaceholder() const {
  return OpIs(*this, "Placeholder", "PlaceholderV2");
}
bool Node::IsArg() const { return type_string() == "_Arg"; }
bool Node::IsRetval() const { return type_string() == "_Retval"; }
bool Node::IsTransfer() const {
  return OpIs(*this, "_Send", "_Recv") || OpIs(*this, "_HostSend", "_HostRecv");
}

Graph::Graph(const OpRegistry* ops) : ops_(ops) {}
Graph::~Graph() = default;

absl::StatusOr<Node*> Graph::AddNode(tensorflow::NodeDef def) {
  if (by_name_.contains(def.name())) {
    return absl::AlreadyExistsError(
        absl::StrCat("node name '", def.name(), "' is used more than once"));
  }
  absl::StatusOr<const OpRegistration*> reg = ops_->LookUp(def.op());
  if (!reg.ok()) {
    return absl::UnimplementedError(
        absl::StrCat("op '", def.op(), "' (node '", def.name(),
                     "') is not registered in Weft"));
  }
  const tensorflow::OpDef& op_def = (*reg)->op_def;
  AddDefaultsToNodeDef(op_def, &def);
  WEFT_RETURN_IF_ERROR(ValidateNodeDef(def, op_def));
  auto node = std::unique_ptr<Node>(new Node);
  WEFT_RETURN_IF_ERROR(InOutTypesForNode(def, op_def, &node->input_types_,
                                         &node->output_types_));
  for (DataType t : node->input_types_) {
    if (!DataTypeIsSupported(BaseType(t))) {
      return absl::UnimplementedError(
          absl::StrCat(NodeLabel(def), ": input dtype ", DataTypeString(t),
                       " is not supported by Weft"));
    }
  }
  for (DataType t : node->output_types_) {
    if (!DataTypeIsSupported(BaseType(t))) {
      return absl::UnimplementedError(
          absl::StrCat(NodeLabel(def), ": output dtype ", DataTypeString(t),
                       " is not supported by Weft"));
    }
  }
  node->input_edges_.assign(node->input_types_.size(), nullptr);
  node->id_ = static_cast<int>(nodes_.size());
  node->def_ = std::move(def);
  node->op_def_ = &op_def;
  Node* raw = node.get();
  by_name_.emplace(raw->name(), raw);
  nodes_.push_back(std::move(node));
  ++num_nodes_;
  return raw;
}

const Edge* Graph::AddEdge(Node* src, int src_output, Node* dst,
                           int dst_input) {
  if (src_output < 0 || src_output >= src->num_outputs() || dst_input < 0 ||
      dst_input >= dst->num_inputs() || dst->input_edge(dst_input) != nullptr) {
    return nullptr;
  }
  auto edge = std::make_unique<Edge>();
  edge->id = static_cast<int>(edges_.size());
  edge->src = src;
  edge->src_output = src_output;
  edge->dst = dst;
  edge->dst_input = dst_input;
  const Edge* raw = edge.get();
  src->out_edges_.push_back(raw);
  dst->in_edges_.push_back(raw);
  dst->input_edges_[dst_input] = raw;
  edges_.push_back(std::move(edge));
  ++num_edges_;
  return raw;
}

const Edge* Graph::AddControlEdge(Node* src, Node* dst) {
  // Look for the edge from whichever end has fewer edges (a NoOp gathering
  // 10,000 control inputs must not make loading quadratic).
  if (src->out_edges_.size() <= dst->in_edges_.size()) {
    for (const Edge* e : src->out_edges_) {
      if (e->IsControlEdge() && e->dst == dst) return e;
    }
  } else {
    for (const Edge* e : dst->in_edges_) {
      if (e->IsControlEdge() && e->src == src) return e;
    }
  }
  auto edge = std::make_unique<Edge>();
  edge->id = static_cast<int>(edges_.size());
  edge->src = src;
  edge->src_output = kControlSlot;
  edge->dst = dst;
  edge->dst_input = kControlSlot;
  const Edge* raw = edge.get();
  src->out_edges_.push_back(raw);
  dst->in_edges_.push_back(raw);
  edges_.push_back(std::move(edge));
  ++num_edges_;
  return raw;
}

void Graph::RemoveEdge(const Edge* edge) {
  EraseFrom(&edge->src->out_edges_, edge);
  EraseFrom(&edge->dst->in_edges_, edge);
  if (!edge->IsControlEdge())
    edge->dst->input_edges_[edge->dst_input] = nullptr;
  edges_[edge->id].reset();
  --num_edges_;
}

void Graph::RemoveNode(Node* node) {
  // Copies: RemoveEdge edits the lists.
  const std::vector<const Edge*> in = node->in_edges_;
  const std::vector<const Edge*> out = node->out_edges_;
  for (const Edge* e : in) RemoveEdge(e);
  for (const Edge* e : out) RemoveEdge(e);
  by_name_.erase(node->name());
  nodes_[node->id_].reset();
  --num_nodes_;
}

Node* Graph::FindNode(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(num_nodes_);
  for (const auto& n : nodes_) {
    if (n != nullptr) out.push_back(n.get());
  }
  return out;
}

void Graph::ToGraphDef(tensorflow::GraphDef* out) const {
  out->Clear();
  *out->mutable_versions() = versions_;
  *out->mutable_library() = library_;
  std::vector<const Edge*> data;
  for (const auto& n : nodes_) {
    if (n == nullptr) continue;
    tensorflow::NodeDef* def = out->add_node();
    *def = n->def_;
    if (!n->assigned_device_.empty()) def->set_device(n->assigned_device_);
    def->clear_input();
    data.assign(n->num_inputs(), nullptr);
    for (const Edge* e : n->in_edges_) {
      if (!e->IsControlEdge()) data[e->dst_input] = e;
    }
    for (const Edge* e : data) {
      if (e == nullptr) continue;  // unfed input: a graph under construction
      def->add_input(e->src_output == 0
                         ? e->src->name()
                         : absl::StrCat(e->src->name(), ":", e->src_output));
    }
    for (const Edge* e : n->in_edges_) {
      if (e->IsControlEdge()) def->add_input(absl::StrCat("^", e->src->name()));
    }
  }
}

}  // namespace weft
