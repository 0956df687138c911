#include "graph/prune.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ops/framework/node_def_util.h"
#include "proto/attr_value.pb.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

struct OutputRef {
  Node* node;
  int index;
};

// Resolves "node[:i]" in `graph`; `what` ("feed", "fetch") labels errors.
absl::StatusOr<OutputRef> ResolveTensor(const Graph& graph,
                                        absl::string_view what,
                                        const std::string& name) {
  absl::StatusOr<TensorId> id = ParseTensorName(name);
  if (!id.ok()) {
    return WithContext(id.status(), absl::StrCat(what, " '", name, "'"));
  }
  if (id->is_control()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " '", name, "': a ", what,
                     " names a tensor (node:output), not "
                     "a control dependency"));
  }
  Node* node = graph.FindNode(id->node);
  if (node == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " '", name, "': node '", id->node, "' does not exist"));
  }
  if (id->index >= node->num_outputs()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " '", name, "': node '", id->node, "' has ", node->num_outputs(),
        " output", node->num_outputs() == 1 ? "" : "s"));
  }
  return OutputRef{node, id->index};
}

// A node name used in neither graph, starting with `base`.
std::string UniqueName(const Graph& a, const Graph& b, std::string base) {
  auto free = [&](const std::string& name) {
    return a.FindNode(name) == nullptr && b.FindNode(name) == nullptr;
  };
  if (free(base)) return base;
  for (int i = 1;; ++i) {
    std::string candidate = absl::StrCat(base, "_", i);
    if (free(candidate)) return candidate;
  }
}

absl::StatusOr<Node*> AddSpecialNode(Graph* graph, const std::string& op,
                                     std::string name, DataType type, int index,
                                     const std::string& input) {
  tensorflow::NodeDef def;
  def.set_name(std::move(name));
  def.set_op(op);
  if (!input.empty()) def.add_input(input);
  (*def.mutable_attr())["T"].set_type(BaseType(type));
  (*def.mutable_attr())["index"].set_i(index);
  return graph->AddNode(std::move(def));
}

uint64_t Key(const Node* node, int index) {
  return (static_cast<uint64_t>(node->id()) << 32) |
         static_cast<uint32_t>(index);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Graph>> PruneGraph(
    const Graph& graph, const std::vector<std::string>& feeds,
    const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  // Resolve names.
  absl::flat_hash_map<uint64_t, int> feed_of;  // (node, output) -> feed index
  std::vector<OutputRef> feed_refs;
  std::vector<bool> placeholder_fed(graph.num_node_ids(), false);
  for (size_t i = 0; i < feeds.size(); ++i) {
    WEFT_ASSIGN_OR_RETURN(OutputRef ref,
                          ResolveTensor(graph, "feed", feeds[i]));
    if (!feed_of.emplace(Key(ref.node, ref.index), static_cast<int>(i))
             .second) {
      return absl::InvalidArgumentError(
          absl::StrCat("feed '", feeds[i], "' is given twice"));
    }
    feed_refs.push_back(ref);
    if (ref.node->IsPlaceholder()) placeholder_fed[ref.node->id()] = true;
  }
  std::vector<OutputRef> fetch_refs;
  for (const std::string& name : fetches) {
    WEFT_ASSIGN_OR_RETURN(OutputRef ref, ResolveTensor(graph, "fetch", name));
    fetch_refs.push_back(ref);
  }
  std::vector<Node*> target_nodes;
  for (const std::string& name : targets) {
    absl::StatusOr<TensorId> id = ParseTensorName(name);
    Node* node = id.ok() ? graph.FindNode(id->node) : nullptr;
    if (node == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("target '", name, "': node '", id.ok() ? id->node : name,
                       "' does not exist"));
    }
    target_nodes.push_back(node);
  }
  if (fetch_refs.empty() && target_nodes.empty()) {
    return absl::InvalidArgumentError(
        "nothing to run: give at least one fetch or target");
  }

  // Reverse reachability, stopping at fed tensors.
  std::vector<bool> keep(graph.num_node_ids(), false);
  std::vector<bool> feed_used(feeds.size(), false);
  std::vector<Node*> stack;
  auto visit = [&](Node* n) {
    if (!keep[n->id()]) {
      keep[n->id()] = true;
      stack.push_back(n);
    }
  };
  for (const OutputRef& ref : fetch_refs) {
    auto it = feed_of.find(Key(ref.node, ref.index));
    if (it != feed_of.end()) {
      feed_used[it->second] = true;
    } else {
      visit(ref.node);
    }
  }
  for (Node* n : target_nodes) visit(n);
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) {
        if (placeholder_fed[e->src->id()]) {
          for (size_t i = 0; i < feed_refs.size(); ++i) {
            if (feed_refs[i].node == e->src) feed_used[i] = true;
          }
          continue;
        }
      } else {
        auto it = feed_of.find(Key(e->src, e->src_output));
        if (it != feed_of.end()) {
          feed_used[it->second] = true;
          continue;
        }
      }
      visit(e->src);
    }
  }

  // Build the pruned graph: kept nodes in id order, then _Arg and _Retval.
  auto out = std::make_unique<Graph>(&graph.op_registry());
  out->set_versions(graph.versions());
  *out->mutable_library() = graph.library();
  std::vector<Node*> copy_of(graph.num_node_ids(), nullptr);
  for (Node* n : graph.nodes()) {
    if (!keep[n->id()]) continue;
    WEFT_ASSIGN_OR_RETURN(Node * copy, out->AddNode(n->def()));
    copy->set_assigned_device(n->assigned_device());
    copy_of[n->id()] = copy;
  }
  std::vector<Node*> arg_of(feeds.size(), nullptr);
  for (size_t i = 0; i < feeds.size(); ++i) {
    if (!feed_used[i]) continue;
    const OutputRef& ref = feed_refs[i];
    WEFT_ASSIGN_OR_RETURN(
        arg_of[i],
        AddSpecialNode(out.get(), "_Arg",
                       UniqueName(graph, *out,
                                  absl::StrCat("_arg_", ref.node->name(), "_",
                                               ref.index, "_", i)),
                       ref.node->output_type(ref.index), static_cast<int>(i),
                       ""));
    arg_of[i]->set_assigned_device(ref.node->assigned_device());
  }
  for (Node* n : graph.nodes()) {
    Node* dst = copy_of[n->id()];
    if (dst == nullptr) continue;
    for (const Edge* e : n->in_edges()) {
      if (e->IsControlEdge()) {
        if (placeholder_fed[e->src->id()]) {
          for (size_t i = 0; i < feed_refs.size(); ++i) {
            if (feed_refs[i].node == e->src)
              out->AddControlEdge(arg_of[i], dst);
          }
        } else {
          out->AddControlEdge(copy_of[e->src->id()], dst);
        }
        continue;
      }
      auto it = feed_of.find(Key(e->src, e->src_output));
      if (it != feed_of.end()) {
        out->AddEdge(arg_of[it->second], 0, dst, e->dst_input);
      } else {
        out->AddEdge(copy_of[e->src->id()], e->src_output, dst, e->dst_input);
      }
    }
  }
  for (size_t i = 0; i < fetch_refs.size(); ++i) {
    const OutputRef& ref = fetch_refs[i];
    auto it = feed_of.find(Key(ref.node, ref.index));
    Node* src =
        it != feed_of.end() ? arg_of[it->second] : copy_of[ref.node->id()];
    const int src_index = it != feed_of.end() ? 0 : ref.index;
    const std::string input = src_index == 0
                                  ? src->name()
                                  : absl::StrCat(src->name(), ":", src_index);
    WEFT_ASSIGN_OR_RETURN(
        Node * retval,
        AddSpecialNode(out.get(), "_Retval",
                       UniqueName(graph, *out,
                                  absl::StrCat("_retval_", ref.node->name(),
                                               "_", ref.index, "_", i)),
                       ref.node->output_type(ref.index), static_cast<int>(i),
                       input));
    retval->set_assigned_device(src->assigned_device());
    out->AddEdge(src, src_index, retval, 0);
  }
  return out;
}

}  // namespace weft
