// Model parallelism for a graph nobody split by hand: the computation that
// `roots` need, cut into `parts` consecutive pieces (in topological order)
// of about equal estimated cost, so that piece i can run on device i.
//
//   WEFT_ASSIGN_OR_RETURN(CostSplit split, SplitByCost(forward, {"loss"}, 2));
//   // split.part["dense_1/MatMul"] == 1; split.cost[0] ~ split.cost[1]
//
// The cost of a node is an estimate from its static shapes (shape_check.h;
// an unknown dimension counts as 1, so a batch left open weighs every node
// alike): 2*M*N*K multiply-adds for MatMul and BatchMatMul, 2 * output
// elements * window * input depth for the convolutions, the output's
// elements for everything else, nothing for variables, inputs, constants
// and NoOps. A node with no cost goes with the piece its data comes from;
// a variable and a placeholder go with the first piece that reads them.
// Nodes that take a variable's resource or reference (reads, assignments)
// get no piece: they run where their variable lives (colocation.h).
//
// Errors: the graph's own (a cycle, an unknown op, impossible shapes), and
// INVALID_ARGUMENT for a root the graph lacks or parts < 1.
// Thread-compatible; reads the GraphDef only.
#ifndef WEFT_GRAPH_MODELS_COST_SPLIT_H_
#define WEFT_GRAPH_MODELS_COST_SPLIT_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "proto/graph.pb.h"

namespace weft {

struct CostSplit {
  absl::flat_hash_map<std::string, int> part;  // node name -> piece
  std::vector<double> cost;                    // estimated cost of each piece
};

absl::StatusOr<CostSplit> SplitByCost(const tensorflow::GraphDef& graph,
                                      const std::vector<std::string>& roots,
                                      int parts);

}  // namespace weft

#endif  // WEFT_GRAPH_MODELS_COST_SPLIT_H_
