#include "graph/partition_loops.h"

#include <deque>

#include "absl/strings/str_cat.h"
#include "graph/algorithm.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace partition_internal {

absl::StatusOr<LoopFrames> LoopFrames::Find(const Graph& graph) {
  LoopFrames f;
  f.node_frame_.assign(graph.num_node_ids(), "");
  f.enter_parent_.assign(graph.num_node_ids(), "");
  // Frames follow data and control edges from the roots; the first path to
  // reach a node decides (the loader has checked the loops are well formed).
  std::vector<bool> seen(graph.num_node_ids(), false);
  std::deque<const Node*> queue;
  for (const Node* n : graph.nodes()) {
    if (n->in_edges().empty()) {
      seen[n->id()] = true;
      queue.push_back(n);
    }
  }
  auto visit = [&](const Node* n, const std::string& from) -> absl::Status {
    if (n->IsEnter()) {
      std::string name;
      WEFT_RETURN_IF_ERROR(GetNodeAttr(n->def(), "frame_name", &name));
      int64_t parallel = 10;
      (void)GetNodeAttr(n->def(), "parallel_iterations", &parallel);
      f.enter_parent_[n->id()] = from;
      f.node_frame_[n->id()] = name;
      auto [it, added] = f.frames_.try_emplace(name);
      if (added) {
        it->second.parent = from;
        it->second.parallel_iterations = parallel;
      }
    } else {
      f.node_frame_[n->id()] = from;
    }
    return absl::OkStatus();
  };
  for (const Node* n : queue) WEFT_RETURN_IF_ERROR(visit(n, ""));
  while (!queue.empty()) {
    const Node* n = queue.front();
    queue.pop_front();
    if (n->IsExit() && f.node_frame_[n->id()].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot partition: ", NodeLabel(n->def()),
          " is an Exit outside any while loop"));
    }
    const std::string out = f.OutputFrame(*n);
    for (const Edge* e : n->out_edges()) {
      if (seen[e->dst->id()]) continue;
      seen[e->dst->id()] = true;
      WEFT_RETURN_IF_ERROR(visit(e->dst, out));
      queue.push_back(e->dst);
    }
  }
  for (const Node* n : graph.nodes()) {
    if (n->type_string() == "LoopCond") {
      auto it = f.frames_.find(f.node_frame_[n->id()]);
      if (it != f.frames_.end()) it->second.loop_cond = n;
    }
  }
  return f;
}

const std::string& LoopFrames::OutputFrame(const Node& node) const {
  if (!node.IsExit()) return node_frame_[node.id()];
  const Frame* f = frame(node_frame_[node.id()]);
  static const std::string* const kRoot = new std::string;
  return f == nullptr ? *kRoot : f->parent;
}

const std::string& LoopFrames::InputFrame(const Node& node) const {
  return node.IsEnter() ? enter_parent_[node.id()] : node_frame_[node.id()];
}

const LoopFrames::Frame* LoopFrames::frame(const std::string& name) const {
  auto it = frames_.find(name);
  return it == frames_.end() ? nullptr : &it->second;
}

absl::Status ColocateLoopPlumbing(const Graph& graph,
                                  std::vector<std::string>* device) {
  WEFT_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
  for (const Node* n : order) {
    if (n->IsSwitch() || n->IsExit()) {
      const Edge* in = n->input_edge(0);
      if (in != nullptr) (*device)[n->id()] = (*device)[in->src->id()];
    } else if ((n->IsEnter() && !IsRefType(n->input_type(0))) ||
               n->IsNextIteration()) {
      for (const Edge* e : n->out_edges()) {
        if (e->IsControlEdge()) continue;
        (*device)[n->id()] = (*device)[e->dst->id()];
        break;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace partition_internal
}  // namespace weft
