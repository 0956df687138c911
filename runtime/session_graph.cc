#include "runtime/session_graph.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/graph_def_loader.h"
#include "runtime/core/status.h"

namespace weft {

absl::StatusOr<std::shared_ptr<const SessionGraph>> SessionGraph::Create(
    const tensorflow::GraphDef& def, const OpRegistry& ops) {
  auto state = std::make_shared<SessionGraph>();
  state->def = def;
  WEFT_ASSIGN_OR_RETURN(state->graph, ConvertGraphDefToGraph(def, ops));
  return std::shared_ptr<const SessionGraph>(std::move(state));
}

absl::StatusOr<std::shared_ptr<const SessionGraph>> SessionGraph::Extend(
    const tensorflow::GraphDef& extension, const OpRegistry& ops) const {
  const tensorflow::VersionDef& have = def.versions();
  const tensorflow::VersionDef& add = extension.versions();
  // As TensorFlow merges them: one producer; the stricter min_consumer (a
  // client raises it when it adds, say, functions); every bad consumer.
  if (extension.has_versions() && def.has_versions() && add.producer() != have.producer()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Can't extend GraphDef at version ", have.producer(), " with graph at version ",
        add.producer(), " (Extend: the extension's producer differs from the session graph's)"));
  }
  auto state = std::make_shared<SessionGraph>();
  state->def = def;
  if (!def.has_versions() && extension.has_versions()) {
    *state->def.mutable_versions() = add;
  } else if (extension.has_versions()) {
    tensorflow::VersionDef* merged = state->def.mutable_versions();
    merged->set_min_consumer(std::max(have.min_consumer(), add.min_consumer()));
    for (int bad : add.bad_consumers()) {
      if (std::find(have.bad_consumers().begin(), have.bad_consumers().end(), bad) ==
          have.bad_consumers().end()) {
        merged->add_bad_consumers(bad);
      }
    }
  }
  for (const tensorflow::NodeDef& node : extension.node()) {
    if (graph->FindNode(node.name()) != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Extend: node '", node.name(),
          "' is already in the session's graph (Extend can only add "
          "nodes)"));
    }
    *state->def.add_node() = node;
  }
  // Clients send the whole library with every extension: keep the
  // functions this graph has, add the new ones.
  for (const tensorflow::FunctionDef& f : extension.library().function()) {
    bool present = false;
    for (const tensorflow::FunctionDef& g : def.library().function()) {
      present |= g.signature().name() == f.signature().name();
    }
    if (!present) *state->def.mutable_library()->add_function() = f;
  }
  for (const auto& g : extension.library().gradient()) {
    bool present = false;
    for (const auto& h : def.library().gradient()) {
      present |= h.function_name() == g.function_name();
    }
    if (!present) *state->def.mutable_library()->add_gradient() = g;
  }
  WEFT_ASSIGN_OR_RETURN(state->graph, ConvertGraphDefToGraph(state->def, ops));
  return std::shared_ptr<const SessionGraph>(std::move(state));
}

}  // namespace weft
