// SessionGraph: the full graph a session holds, as the client gave it and
// as a validated Graph, and how Extend grows it. The local session and the
// master session share it, so both accept and refuse the same extensions.
//
//   WEFT_ASSIGN_OR_RETURN(auto g, SessionGraph::Create(graph_def, ops));
//   WEFT_ASSIGN_OR_RETURN(auto g2, g->Extend(more_nodes, ops));
//
// A SessionGraph never changes once made: Extend returns a new one, so a
// step that started on the old graph keeps running on it while another
// thread extends. Thread safety: const after construction.
#ifndef WEFT_RUNTIME_SESSION_GRAPH_H_
#define WEFT_RUNTIME_SESSION_GRAPH_H_

#include <memory>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "ops/framework/op_registry.h"
#include "proto/graph.pb.h"

namespace weft {

struct SessionGraph {
  tensorflow::GraphDef def;  // as given (defaults not added)
  std::unique_ptr<Graph> graph;

  // The graph validated (graph/graph_def_loader.h); its errors name the
  // node.
  static absl::StatusOr<std::shared_ptr<const SessionGraph>> Create(
      const tensorflow::GraphDef& def, const OpRegistry& ops);

  // This graph plus `extension`'s nodes and the functions it defines that
  // this graph lacks; versions merged as TensorFlow merges them (the larger
  // min_consumer, every bad consumer). INVALID_ARGUMENT naming the node
  // when the extension redefines one (Extend only adds), or when its
  // producer differs from this graph's; the result is validated as a
  // whole, as Create does.
  absl::StatusOr<std::shared_ptr<const SessionGraph>> Extend(
      const tensorflow::GraphDef& extension, const OpRegistry& ops) const;
};

}  // namespace weft

#endif  // WEFT_RUNTIME_SESSION_GRAPH_H_
