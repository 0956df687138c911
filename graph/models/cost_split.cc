#include "graph/models/cost_split.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/algorithm.h"
#include "graph/graph.h"
#include "graph/graph_def_loader.h"
#include "graph/shape_check.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

double Elements(const PartialShape& s) {
  if (!s.known_rank()) return 1;
  double n = 1;
  for (int i = 0; i < s.rank(); ++i) n *= s.dim(i) > 0 ? static_cast<double>(s.dim(i)) : 1;
  return n;
}

int64_t DimOr1(const PartialShape& s, int i) {
  if (!s.known_rank() || i < 0 || i >= s.rank() || s.dim(i) <= 0) return 1;
  return s.dim(i);
}

bool BoolAttr(const Node& n, const char* name) {
  auto it = n.def().attr().find(name);
  return it != n.def().attr().end() && it->second.b();
}

bool TakesVariable(const Node& n) {
  for (DataType t : n.input_types()) {
    if (t == DT_RESOURCE || IsRefType(t)) return true;
  }
  return false;
}

bool IsFree(const std::string& op) {
  return op == "VarHandleOp" || op == "VariableV2" || op == "Variable" ||
         op == "Placeholder" || op == "PlaceholderWithDefault" || op == "Const" ||
         op == "NoOp" || op == "Identity";
}

// The estimated cost of `n` (see the header); `in(i)` and `out` are its
// input and first output shapes.
template <typename InShape>
double Cost(const Node& n, const InShape& in, const PartialShape& out) {
  const std::string& op = n.type_string();
  if (IsFree(op) || n.num_outputs() == 0) return 0;
  const double elements = Elements(out);
  if (op == "MatMul") {
    const PartialShape& a = in(0);
    return 2 * elements * DimOr1(a, BoolAttr(n, "transpose_a") ? 0 : 1);
  }
  if (op == "BatchMatMul" || op == "BatchMatMulV2" || op == "BatchMatMulV3") {
    const PartialShape& a = in(0);
    const int r = a.known_rank() ? a.rank() : 2;
    return 2 * elements * DimOr1(a, BoolAttr(n, "adj_x") ? r - 2 : r - 1);
  }
  if (op == "Conv2D" || op == "Conv3D" || op == "DepthwiseConv2dNative" ||
      op == "Conv2DBackpropInput" || op == "Conv3DBackpropInputV2") {
    const PartialShape& f = in(1);
    const int window_dims = op == "DepthwiseConv2dNative" ? 2
                            : f.known_rank()               ? f.rank() - 1
                                                           : 0;
    double window = 1;
    for (int i = 0; i < window_dims; ++i) window *= DimOr1(f, i);
    return 2 * elements * window;
  }
  return elements;
}

}  // namespace

absl::StatusOr<CostSplit> SplitByCost(const tensorflow::GraphDef& graph_def,
                                      const std::vector<std::string>& roots,
                                      int parts) {
  if (parts < 1) {
    return absl::InvalidArgumentError(absl::StrCat("cannot split into ", parts, " parts"));
  }
  GraphConversionOptions convert;
  convert.check_shapes = false;
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph,
                        ConvertGraphDefToGraph(graph_def, GlobalOpRegistry(), convert));
  WEFT_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph));
  WEFT_ASSIGN_OR_RETURN(GraphShapes shapes, CheckShapes(*graph, order));
  // What the roots need.
  absl::flat_hash_map<std::string, Node*> by_name;
  for (Node* n : order) by_name[n->name()] = n;
  absl::flat_hash_set<const Node*> needed;
  std::deque<const Node*> todo;
  for (const std::string& r : roots) {
    auto it = by_name.find(r);
    if (it == by_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat("the graph has no node '", r, "'"));
    }
    if (needed.insert(it->second).second) todo.push_back(it->second);
  }
  while (!todo.empty()) {
    const Node* n = todo.front();
    todo.pop_front();
    for (const Edge* e : n->in_edges()) {
      if (needed.insert(e->src).second) todo.push_back(e->src);
    }
  }
  std::vector<double> cost(graph->num_node_ids(), 0);
  double total = 0;
  for (const Node* n : order) {
    if (!needed.contains(n) || TakesVariable(*n)) continue;
    auto in = [&](int i) -> const PartialShape& {
      static const PartialShape kUnknown;
      const Edge* e = i < n->num_inputs() ? n->input_edge(i) : nullptr;
      if (e == nullptr) return kUnknown;
      const auto& outs = shapes.outputs[e->src->id()];
      return e->src_output < static_cast<int>(outs.size()) ? outs[e->src_output] : kUnknown;
    };
    const auto& outs = shapes.outputs[n->id()];
    cost[n->id()] = Cost(*n, in, outs.empty() ? PartialShape() : outs[0]);
    total += cost[n->id()];
  }
  CostSplit split;
  split.cost.assign(parts, 0);
  std::vector<int> part(graph->num_node_ids(), -1);
  double done = 0;
  for (const Node* n : order) {
    if (!needed.contains(n) || TakesVariable(*n)) continue;
    const double c = cost[n->id()];
    if (c > 0) {
      part[n->id()] = std::min(
          parts - 1, static_cast<int>(std::floor(parts * (done + c / 2) / total)));
      done += c;
      split.cost[part[n->id()]] += c;
      continue;
    }
    // Free nodes go with their data: the latest piece among their inputs.
    for (const Edge* e : n->in_edges()) {
      if (!e->IsControlEdge()) part[n->id()] = std::max(part[n->id()], part[e->src->id()]);
    }
  }
  // Nodes still undecided (variables, inputs, constants and what only they
  // feed) go with the first piece that reads them, through a variable's
  // reads.
  for (const Node* n : order) {
    if (!needed.contains(n) || TakesVariable(*n) || part[n->id()] >= 0) continue;
    int first = parts;
    for (const Edge* e : n->out_edges()) {
      if (e->IsControlEdge()) continue;
      const Node* reader = e->dst;
      if (part[reader->id()] >= 0) first = std::min(first, part[reader->id()]);
      if (!TakesVariable(*reader)) continue;
      for (const Edge* r : reader->out_edges()) {
        if (!r->IsControlEdge() && part[r->dst->id()] >= 0) {
          first = std::min(first, part[r->dst->id()]);
        }
      }
    }
    part[n->id()] = first < parts ? first : 0;
  }
  for (const Node* n : order) {
    if (needed.contains(n) && part[n->id()] >= 0) split.part[n->name()] = part[n->id()];
  }
  return split;
}

}  // namespace weft
