// Small graph edits the optimisation passes (constant_folding.h,
// kernel_fusion.h) share.
//
// Thread safety: each mutates the graph it is given; the caller owns it
// exclusively.
#ifndef WEFT_RUNTIME_GRAPH_REWRITE_H_
#define WEFT_RUNTIME_GRAPH_REWRITE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "proto/node_def.pb.h"
#include "runtime/core/tensor.h"

namespace weft {

// A name no node of `graph` has: `base`, or `base` with "_1", "_2", ...
std::string UniqueNodeName(const Graph& graph, absl::string_view base);

// Sets def->input from the edges into `node` (data inputs in slot order,
// "src" or "src:k", then "^src"), as Graph::AddNode's validation counts
// them.
void SetInputsFromEdges(const Node& node, tensorflow::NodeDef* def);

// A new Const node holding `value`, named after `name` (made unique), with
// the requested and assigned device of `like`.
absl::StatusOr<Node*> AddConstNode(Graph* graph, absl::string_view name,
                                   const Tensor& value, const Node& like);

// Removes the nodes (by id) of `candidates` that no edge leaves any more,
// then the candidates that only they read from, and so on. A candidate must
// be a node that had readers before the pass (a target, read by nobody, is
// never one); ids of nodes already removed are skipped.
void RemoveUnread(Graph* graph, const std::vector<int>& candidates);

}  // namespace weft

#endif  // WEFT_RUNTIME_GRAPH_REWRITE_H_
