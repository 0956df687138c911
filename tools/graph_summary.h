// What a GraphDef contains, in terms a user can act on: the summary behind
// `weft inspect`.
//
//   absl::StatusOr<GraphDef> g = ReadGraphDefFile(path);
//   GraphSummary s = SummarizeGraph(*g);
//   std::cout << GraphSummaryToText(s);
//
// Summarizing never fails: a graph Weft cannot run is still summarized, and
// what stops it is listed (unknown ops, ops without a CPU kernel for their
// dtypes, the first validation error). Every op in the way is listed at once,
// with the nodes that use it, in the top-level graph and in the bodies of the
// library's functions ("function/node"). Calls of library functions and the
// functional ops `weft run` lowers before running (While, If, Case,
// PartitionedCall, SymbolicGradient, ...; graph/lower_functional_ops.h) need
// no kernel and are not listed.
#ifndef WEFT_TOOLS_GRAPH_SUMMARY_H_
#define WEFT_TOOLS_GRAPH_SUMMARY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "proto/graph.pb.h"

namespace weft {

struct GraphSummary {
  struct Variable {
    std::string name, op, dtype, shape;  // shape as "[784,128]"
  };
  struct Input {
    std::string name, op, dtype, shape;  // Placeholder / PlaceholderWithDefault
  };
  // One op Weft cannot run, for one reason, and every node that uses it.
  struct UnsupportedOp {
    std::string op, reason;          // reason names no node
    std::vector<std::string> nodes;  // "node", or "function/node" in a body
  };

  int64_t num_nodes = 0;
  int num_functions = 0;   // in the library (kept, not executed)
  int producer = 0;        // versions.producer
  std::map<std::string, int64_t> op_counts;
  // Requested device string -> node count; "" for nodes with none.
  std::map<std::string, int64_t> devices;
  std::vector<Variable> variables;
  std::vector<Input> inputs;
  // Nodes nothing consumes: with outputs (tensors worth fetching, as
  // "node:0") and without (targets such as train ops and init).
  std::vector<std::string> output_tensors;
  std::vector<std::string> output_targets;
  // Ops Weft cannot run (unknown op, or no CPU kernel for the attrs of some
  // of their nodes), sorted by op then reason.
  std::vector<UnsupportedOp> unsupported;
  // OK, or the first error loading the graph would give (names the node).
  std::string validation = "ok";
};

GraphSummary SummarizeGraph(const tensorflow::GraphDef& graph);

// Human-readable, several short sections.
std::string GraphSummaryToText(const GraphSummary& summary);
// One JSON object with the same fields.
std::string GraphSummaryToJson(const GraphSummary& summary);

}  // namespace weft

#endif  // WEFT_TOOLS_GRAPH_SUMMARY_H_
