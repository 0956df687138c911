#include "graph/colocation.h"

#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace weft {
namespace {

// Union-find over node ids; the root of a set is its smallest id.
class DisjointSets {
 public:
  explicit DisjointSets(int n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int Find(int x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a < b) parent_[b] = a;
    if (b < a) parent_[a] = b;
  }

 private:
  std::vector<int> parent_;
};

}  // namespace

bool PinsConsumer(const Edge& e) {
  if (e.IsControlEdge()) return false;
  const DataType in = e.dst->input_type(e.dst_input);
  return IsRefType(in) || BaseType(in) == DT_RESOURCE;
}

std::vector<std::string> ColocationTargets(const Node& node) {
  std::vector<std::string> out;
  auto it = node.def().attr().find("_class");
  if (it == node.def().attr().end()) return out;
  for (const std::string& s : it->second.list().s()) {
    absl::string_view name = s;
    if (absl::ConsumePrefix(&name, "loc:@")) out.emplace_back(name);
  }
  return out;
}

ColocationGroups::ColocationGroups(const Graph& graph)
    : group_of_(graph.num_node_ids(), -1) {
  DisjointSets sets(graph.num_node_ids());
  const std::vector<Node*> nodes = graph.nodes();
  // A class is a name, not a node: every node is in the class of its own
  // name and in each "loc:@X" it lists, whether or not a node X exists (it
  // may have been pruned), as TensorFlow's placer groups them.
  absl::flat_hash_map<std::string, int> first_of_class;
  auto join = [&](Node* n, const std::string& cls) {
    auto [it, inserted] = first_of_class.emplace(cls, n->id());
    if (!inserted) sets.Union(n->id(), it->second);
  };
  for (Node* n : nodes) {
    join(n, n->name());
    for (const std::string& cls : ColocationTargets(*n)) join(n, cls);
    for (const Edge* e : n->in_edges()) {
      if (PinsConsumer(*e)) sets.Union(e->src->id(), n->id());
    }
  }
  std::vector<int> index_of_root(graph.num_node_ids(), -1);
  for (Node* n : nodes) {
    const int root = sets.Find(n->id());
    if (index_of_root[root] < 0) {
      index_of_root[root] = static_cast<int>(groups_.size());
      groups_.emplace_back();
    }
    group_of_[n->id()] = index_of_root[root];
    groups_[index_of_root[root]].members.push_back(n);
  }
}

}  // namespace weft
