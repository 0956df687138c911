// Turning a TensorFlow GraphDef into a checked Graph.
//
//   absl::StatusOr<std::unique_ptr<Graph>> g =
//       ConvertGraphDefToGraph(graph_def);          // GlobalOpRegistry()
//   if (!g.ok()) { print g.status(); }               // names node and field
//
// Everything a GraphDef can get wrong is reported here, before anything
// runs, with the node (and input slot or attr) named:
//   - versions:       producer below kGraphDefMinProducer, min_consumer above
//                     kGraphDefVersion, or kGraphDefVersion in bad_consumers;
//   - names:          empty, malformed, or used twice;
//   - ops and attrs:  unknown op (UNIMPLEMENTED), missing or mistyped attrs,
//                     disallowed dtypes, wrong number of inputs;
//   - edges:          inputs naming absent nodes or outputs, dtype clashes
//                     ("node 'b' input 1 expects float but 'a:0' is int32");
//                     a ref output may feed a plain input of its base type;
//   - cycles:         except loops closed by NextIteration -> Merge;
//   - static shapes:  every op's shape function, in topological order, with
//                     Const values visible (graph/shape_check.h).
// Function calls and functional control flow (TensorFlow 2.x's
// PartitionedCall, If, While, Case, ...) are first lowered into plain nodes
// (graph/lower_functional_ops.h); the library is kept and written back by
// ToGraphDef().
//
// Thread safety: the functions are thread-safe (they share nothing).
#ifndef WEFT_GRAPH_GRAPH_DEF_LOADER_H_
#define WEFT_GRAPH_GRAPH_DEF_LOADER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "ops/framework/op_registry.h"
#include "proto/graph.pb.h"
#include "proto/versions.pb.h"

namespace weft {

// The GraphDef version Weft writes and reads, that of TensorFlow 2.21.
inline constexpr int kGraphDefVersion = 2474;
// The oldest producer Weft reads.
inline constexpr int kGraphDefMinProducer = 0;

struct GraphConversionOptions {
  // Run every op's shape function to find impossible shapes at load.
  bool check_shapes = true;
};

// INVALID_ARGUMENT when a graph with these versions cannot be read.
absl::Status CheckGraphDefVersions(const tensorflow::VersionDef& versions);

// Builds a Graph from `graph_def` against `ops` (which must outlive it).
absl::StatusOr<std::unique_ptr<Graph>> ConvertGraphDefToGraph(
    const tensorflow::GraphDef& graph_def,
    const OpRegistry& ops = GlobalOpRegistry(),
    const GraphConversionOptions& options = {});

}  // namespace weft

#endif  // WEFT_GRAPH_GRAPH_DEF_LOADER_H_
