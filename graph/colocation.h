// Colocation groups: sets of nodes that must run on the same device.
//
// Two nodes share a group when
//   - one names the other in its `_class` attr ("loc:@other"), as
//     tf.colocate_with writes it, or both name the same class: as in
//     TensorFlow, "loc:@gone" groups its members even when no node `gone`
//     is in the graph (e.g. it was pruned away);
//   - one consumes the other's output through a ref input (Assign on a
//     VariableV2) or a DT_RESOURCE edge (ReadVariableOp on a VarHandleOp):
//     the consumer must run where the variable lives, as in TensorFlow.
// Membership is transitive.
//
//   ColocationGroups groups(graph);
//   for (const ColocationGroup& g : groups.groups()) ... g.members ...
//
// Groups and their members are in node-id order, so everything built on
// them is deterministic. Immutable after construction; the Graph must
// outlive it.
#ifndef WEFT_GRAPH_COLOCATION_H_
#define WEFT_GRAPH_COLOCATION_H_

#include <string>
#include <vector>

#include "graph/graph.h"

namespace weft {

struct ColocationGroup {
  std::vector<Node*> members;  // by increasing id; never empty
};

class ColocationGroups {
 public:
  explicit ColocationGroups(const Graph& graph);

  const std::vector<ColocationGroup>& groups() const { return groups_; }
  // Index into groups() of the group holding the node with this id.
  int group_of(int node_id) const { return group_of_[node_id]; }

 private:
  std::vector<ColocationGroup> groups_;
  std::vector<int> group_of_;
};

// Whether `e` ties its consumer to the producer's device: a data edge into
// a ref or DT_RESOURCE input (a variable's consumer).
bool PinsConsumer(const Edge& e);

// The colocation classes (node names) listed in a node's `_class` attr
// ("loc:@a" -> "a").
std::vector<std::string> ColocationTargets(const Node& node);

}  // namespace weft

#endif  // WEFT_GRAPH_COLOCATION_H_
