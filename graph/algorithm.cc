#include "graph/algorithm.h"

#include <deque>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace weft {
namespace {

// Walks backwards from `start` through nodes still holding unmet inputs
// until one repeats: that loop is a cycle. Returns its names in edge order,
// first name repeated at the end ("a -> b -> a").
std::string DescribeCycle(const std::vector<int>& pending, Node* start) {
  absl::flat_hash_map<Node*, int> position;
  std::vector<Node*> path;
  Node* cur = start;
  while (!position.contains(cur)) {
    position[cur] = static_cast<int>(path.size());
    path.push_back(cur);
    Node* pred = nullptr;
    for (const Edge* e : cur->in_edges()) {
      if (!IsBackEdge(*e) && pending[e->src->id()] > 0) {
        pred = e->src;
        break;
      }
    }
    if (pred == nullptr) return "";  // cannot happen while pending > 0
    cur = pred;
  }
  // path[position[cur]..] walked backwards from cur back to cur's successor.
  std::vector<Node*> cycle;
  for (int i = static_cast<int>(path.size()) - 1; i >= position[cur]; --i) {
    cycle.push_back(path[i]);
  }
  // Start at the node defined first, so the message is stable.
  size_t first = 0;
  for (size_t i = 1; i < cycle.size(); ++i) {
    if (cycle[i]->id() < cycle[first]->id()) first = i;
  }
  std::vector<std::string> names;
  for (size_t i = 0; i <= cycle.size(); ++i) {
    names.push_back(cycle[(first + i) % cycle.size()]->name());
  }
  return absl::StrJoin(names, " -> ");
}

}  // namespace

bool IsBackEdge(const Edge& edge) {
  return edge.src->IsNextIteration() && edge.dst->IsMerge();
}

absl::StatusOr<std::vector<Node*>> TopologicalOrder(const Graph& graph) {
  std::vector<int> pending(graph.num_node_ids(), 0);
  std::deque<Node*> ready;
  std::vector<Node*> order;
  order.reserve(graph.num_nodes());
  for (Node* n : graph.nodes()) {
    int count = 0;
    for (const Edge* e : n->in_edges()) count += IsBackEdge(*e) ? 0 : 1;
    pending[n->id()] = count;
    if (count == 0) ready.push_back(n);
  }
  while (!ready.empty()) {
    Node* n = ready.front();
    ready.pop_front();
    order.push_back(n);
    for (const Edge* e : n->out_edges()) {
      if (IsBackEdge(*e)) continue;
      if (--pending[e->dst->id()] == 0) ready.push_back(e->dst);
    }
  }
  if (static_cast<int>(order.size()) == graph.num_nodes()) return order;
  for (Node* n : graph.nodes()) {
    if (pending[n->id()] > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "graph has a cycle through nodes ", DescribeCycle(pending, n),
          " (only a NextIteration -> Merge edge may close a "
          "loop)"));
    }
  }
  return order;  // unreachable
}

}  // namespace weft
