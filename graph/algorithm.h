// Graph traversals shared by the loader, the shape checker and the pruner.
//
//   WEFT_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
//
// TensorFlow's while loops are cycles closed by a NextIteration -> Merge
// edge; those "back edges" are ignored here, so a well-formed loop is not a
// cycle. Any other cycle is an error that names its nodes.
#ifndef WEFT_GRAPH_ALGORITHM_H_
#define WEFT_GRAPH_ALGORITHM_H_

#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace weft {

// True for an edge from a NextIteration into a Merge.
bool IsBackEdge(const Edge& edge);

// Every node, each after all its producers (back edges aside). Ties keep id
// order. INVALID_ARGUMENT "graph has a cycle through nodes a -> b -> a" when
// there is a cycle that no back edge breaks.
absl::StatusOr<std::vector<Node*>> TopologicalOrder(const Graph& graph);

}  // namespace weft

#endif  // WEFT_GRAPH_ALGORITHM_H_
