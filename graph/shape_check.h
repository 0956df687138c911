// Static shape checking: runs each op's shape function over a Graph.
//
//   WEFT_ASSIGN_OR_RETURN(GraphShapes shapes, CheckShapes(graph));
//   shapes.outputs[node->id()][0]   // what is known of node's output 0
//
// Nodes are visited in topological order; small Const values are handed to
// shape functions as constant inputs (so Reshape's `shape` or a reduction's
// axes are seen). Unknown dims and ranks are fine; a shape function's
// INVALID_ARGUMENT means the graph can never run, and is returned naming the
// node and its input shapes:
//   "node 'mm' (MatMul): ... (input shapes: [2,3], [4,5])".
// Inputs over a loop's back edge (NextIteration -> Merge) count as unknown.
//
// Thread safety: reads the graph only; safe to call concurrently.
#ifndef WEFT_GRAPH_SHAPE_CHECK_H_
#define WEFT_GRAPH_SHAPE_CHECK_H_

#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "runtime/core/tensor_shape.h"

namespace weft {

struct GraphShapes {
  // Indexed by node id, then output slot; empty for removed ids.
  std::vector<std::vector<PartialShape>> outputs;
};

absl::StatusOr<GraphShapes> CheckShapes(const Graph& graph);
// With a topological order already at hand (from TopologicalOrder()).
absl::StatusOr<GraphShapes> CheckShapes(const Graph& graph,
                                        const std::vector<Node*>& order);

}  // namespace weft

#endif  // WEFT_GRAPH_SHAPE_CHECK_H_
