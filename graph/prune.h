// Pruning a graph down to what one Run needs.
//
//   WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Graph> step,
//       PruneGraph(full, /*feeds=*/{"x:0"}, /*fetches=*/{"y:0", "y:0"},
//                  /*targets=*/{"init"}));
//
// The result keeps only the nodes the fetches and targets depend on (through
// data and control edges), stopping at fed tensors. Each fed tensor becomes
// an `_Arg` node (attrs T, index = its position in `feeds`) whose output
// replaces every use of the tensor; when a Placeholder is fed, its outgoing
// control edges move to the `_Arg` as well, so the Placeholder itself is not
// needed. Each fetch becomes a `_Retval` node (attrs T, index = its position
// in `fetches`) reading the fetched tensor (or its `_Arg`, if it is also
// fed). A tensor may be fetched more than once. Feeds that nothing needs get
// no `_Arg`.
//
// Names: "x" and "x:0" are the same tensor; targets are node names.
// Errors (INVALID_ARGUMENT) name the list and entry: "fetch 'y:1': node 'y'
// has 1 output", "feed 'q:0': node 'q' does not exist", "feed 'x:0' is
// given twice". The `_Arg`/`_Retval` ops must be in the graph's registry.
//
// Thread safety: reads `graph` only; safe to call concurrently.
#ifndef WEFT_GRAPH_PRUNE_H_
#define WEFT_GRAPH_PRUNE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace weft {

absl::StatusOr<std::unique_ptr<Graph>> PruneGraph(
    const Graph& graph, const std::vector<std::string>& feeds,
    const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets);

}  // namespace weft

#endif  // WEFT_GRAPH_PRUNE_H_
