// AddGradients: reverse-mode differentiation over the graph, one gradient
// function per node (grad_registry.h), builder while loops as a whole
// (while_grad.cc).
#include "graph/builder/gradients.h"

#include <algorithm>
#include <deque>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/control_flow_info.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/gradients_internal.h"
#include "graph/builder/math_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace grad_internal {
namespace {

using EdgeKey = std::pair<std::string, int>;  // (node, output index)

struct InEdge {
  std::string node;
  int index;
};

// A node as AddGradients sees it: a graph node, or a whole builder loop
// (named "^while:<id>", a name no node can have) from its inputs to its
// Exits, which then take their input from it.
struct ViewNode {
  const tensorflow::NodeDef* def = nullptr;  // null for a loop
  int loop = -1;
  std::vector<InEdge> inputs;  // data inputs
  DataTypeVector out_types;
};

std::string LoopNodeName(int loop) { return absl::StrCat("^while:", loop); }

// The loop `node` is folded into: the outermost builder loop holding it
// that is neither `open_loop` nor encloses it; -1 for none.
int FoldedLoop(const ControlFlowInfo& info, const std::string& node,
               int open_loop) {
  auto it = info.loop_of.find(node);
  if (it == info.loop_of.end()) return -1;
  int folded = -1;
  for (int l = it->second; l >= 0; l = info.loops[l].parent) {
    for (int a = open_loop; a >= 0; a = info.loops[a].parent) {
      if (a == l) return folded;  // the open loop or one around it
    }
    folded = l;
  }
  return folded;
}

bool IsNextIteration(const tensorflow::NodeDef* def) {
  return def != nullptr &&
         (def->op() == "NextIteration" || def->op() == "RefNextIteration");
}

absl::Status BuildView(const Scope& scope, int open_loop,
                       absl::flat_hash_map<std::string, ViewNode>* view) {
  const ControlFlowInfo& info = scope.control_flow();  // records refreshed
  for (const tensorflow::NodeDef& n : scope.graph().node()) {
    const int folded = FoldedLoop(info, n.name(), open_loop);
    if (folded >= 0) {
      const LoopRecord& loop = info.loops[folded];
      auto exit = std::find(loop.exits.begin(), loop.exits.end(), n.name());
      const bool is_exit = n.op() == "Exit" || n.op() == "RefExit";
      if (!is_exit) continue;  // inside the folded loop
      ViewNode& v = (*view)[n.name()];
      v.def = &n;
      WEFT_ASSIGN_OR_RETURN(v.out_types, NodeOutputTypes(scope, n));
      // An Exit the loop's record does not list (its gradient counter's):
      // nothing flows back through it.
      if (exit == loop.exits.end()) continue;
      v.inputs.push_back(InEdge{LoopNodeName(folded),
                                static_cast<int>(exit - loop.exits.begin())});
      ViewNode& l = (*view)[LoopNodeName(folded)];
      if (l.loop < 0) {
        WEFT_RETURN_IF_ERROR(RefreshLoopInputs(scope, folded));
        l.loop = folded;
        for (const auto* list : {&loop.inits, &loop.captures}) {
          for (const Output& o : *list) l.inputs.push_back({o.node, o.index});
        }
        for (const std::string& e : loop.exits) {
          WEFT_ASSIGN_OR_RETURN(DataTypeVector t,
                                NodeOutputTypes(scope, *scope.FindNode(e)));
          l.out_types.push_back(t[0]);
        }
      }
      continue;
    }
    ViewNode& v = (*view)[n.name()];
    v.def = &n;
    WEFT_ASSIGN_OR_RETURN(v.out_types, NodeOutputTypes(scope, n));
    const bool is_merge = n.op() == "Merge" || n.op() == "RefMerge";
    for (const std::string& s : n.input()) {
      WEFT_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(s));
      if (id.is_control()) continue;
      // A loop's back edge: cut, so that the view has no cycles.
      if (is_merge && IsNextIteration(scope.FindNode(id.node))) continue;
      v.inputs.push_back(InEdge{id.node, id.index});
    }
  }
  for (const auto& [name, v] : *view) {
    for (const InEdge& in : v.inputs) {
      auto src = view->find(in.node);
      if (src == view->end() ||
          in.index >= static_cast<int>(src->second.out_types.size())) {
        return absl::UnimplementedError(absl::StrCat(
            "AddGradients: node '", name, "' takes '", in.node, ":", in.index,
            "' from inside a while loop other than through its Exit"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Differentiate(const Scope& scope, const Scope& gscope,
                           const DiffRequest& req,
                           std::vector<Output>* grad_xs) {
  WEFT_RETURN_IF_ERROR(scope.status());
  if (grad_xs == nullptr) {
    return absl::InvalidArgumentError("AddGradients: grad_xs is null");
  }
  const std::vector<Output>&ys = req.ys, &xs = req.xs, &grad_ys = req.grad_ys;
  if (!grad_ys.empty() && grad_ys.size() != ys.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AddGradients: got ", grad_ys.size(), " grad_ys for ", ys.size(),
        " ys"));
  }
  for (const auto* list : {&ys, &xs, &grad_ys}) {
    for (const Output& o : *list) {
      if (!o.valid() || scope.FindNode(o.node) == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            "AddGradients: tensor '", o.name(), "' is not in the graph"));
      }
    }
  }
  absl::flat_hash_map<std::string, ViewNode> view;
  WEFT_RETURN_IF_ERROR(BuildView(scope, req.open_loop, &view));
  for (const auto* list : {&ys, &xs}) {
    for (const Output& o : *list) {
      if (!view.contains(o.node)) {
        return absl::UnimplementedError(absl::StrCat(
            "AddGradients: tensor '", o.name(),
            "' is inside a while loop; differentiate from the loop's inputs "
            "to its outputs"));
      }
    }
  }
  // Every input of a view node is a view node; `at` never inserts (a
  // rehash would move the nodes referenced below).
  auto at = [&view](const std::string& name) -> const ViewNode& {
    return view.find(name)->second;
  };
  absl::flat_hash_map<std::string, std::vector<std::string>> consumers;
  for (const auto& [name, v] : view) {
    for (const InEdge& in : v.inputs) consumers[in.node].push_back(name);
  }
  // Nodes reachable from xs (forward) and reaching ys (backward).
  absl::flat_hash_set<std::string> from_x, to_y;
  std::deque<std::string> queue;
  for (const Output& x : xs) {
    if (from_x.insert(x.node).second) queue.push_back(x.node);
  }
  while (!queue.empty()) {
    std::string n = queue.front();
    queue.pop_front();
    for (const std::string& c : consumers[n]) {
      if (from_x.insert(c).second) queue.push_back(c);
    }
  }
  for (const Output& y : ys) {
    if (to_y.insert(y.node).second) queue.push_back(y.node);
  }
  while (!queue.empty()) {
    std::string n = queue.front();
    queue.pop_front();
    for (const InEdge& in : at(n).inputs) {
      if (to_y.insert(in.node).second) queue.push_back(in.node);
    }
  }
  absl::flat_hash_set<std::string> between;
  for (const std::string& n : from_x) {
    if (to_y.contains(n)) between.insert(n);
  }
  // Pending gradient contributions per node: one per consumer edge inside.
  absl::flat_hash_map<std::string, int> pending;
  for (const std::string& n : between) {
    pending[n];
    for (const InEdge& in : at(n).inputs) {
      if (between.contains(in.node)) ++pending[in.node];
    }
  }
  absl::flat_hash_map<EdgeKey, std::vector<Output>> grads;
  for (size_t i = 0; i < ys.size(); ++i) {
    if (!between.contains(ys[i].node)) continue;
    Output g = grad_ys.empty() ? OnesLike(gscope, ys[i]) : grad_ys[i];
    grads[{ys[i].node, ys[i].index}].push_back(g);
  }
  WEFT_RETURN_IF_ERROR(scope.status());
  // Where the gradient nodes of forward node `node` go.
  auto grad_scope = [&](const std::string& node, absl::string_view suffix) {
    const ViewNode& v = at(node);
    if (v.def == nullptr) return gscope.NewSubScope("while_grad");
    Scope s = gscope.NewSubScope(absl::StrCat(node, suffix));
    if (!req.options.colocate_with_ops) return s;
    return v.def->device().empty() ? s : s.WithDevice(v.def->device());
  };
  auto sum = [&](const std::string& node, int index) -> Output {
    auto it = grads.find(EdgeKey{node, index});
    if (it == grads.end() || it->second.empty()) return Output();
    if (it->second.size() == 1) return it->second[0];
    Output total = AddN(grad_scope(node, "_grad_sum"), it->second);
    it->second = {total};
    return total;
  };
  for (const std::string& n : between) {
    if (pending[n] == 0) queue.push_back(n);
  }
  while (!queue.empty()) {
    std::string name = queue.front();
    queue.pop_front();
    const ViewNode& node = at(name);
    GradInputs in;
    in.node = node.def;
    bool any_grad = false;
    for (size_t k = 0; k < node.out_types.size(); ++k) {
      in.y.push_back(Output{name, static_cast<int>(k), node.out_types[k]});
      in.dy.push_back(sum(name, static_cast<int>(k)));
      any_grad = any_grad || in.dy.back().valid();
    }
    bool any_input_between = false;
    for (const InEdge& i : node.inputs) {
      in.x.push_back(Output{i.node, i.index, at(i.node).out_types[i.index]});
      any_input_between = any_input_between || between.contains(i.node);
    }
    std::vector<Output> dx(node.inputs.size());
    if (any_grad && any_input_between && node.def == nullptr) {
      WEFT_RETURN_IF_ERROR(WhileLoopGrad(scope, grad_scope(name, ""),
                                         node.loop, in.dy, &dx));
    } else if (any_grad && any_input_between) {
      const GradFn* fn = nullptr;
      absl::Status found = GlobalGradRegistry().LookUp(node.def->op(), &fn);
      if (!found.ok()) {
        return absl::NotFoundError(absl::StrCat(
            "no gradient registered for op '", node.def->op(), "' (node '",
            name, "', on the path from xs to ys); add one in "
            "graph/builder/*_grad.cc or stop the path with StopGradient"));
      }
      if (fn != nullptr) {
        WEFT_RETURN_IF_ERROR(WithContext(
            (*fn)(grad_scope(name, "_grad"), in, &dx),
            absl::StrCat("gradient of ", NodeLabel(*node.def))));
        WEFT_RETURN_IF_ERROR(scope.status());
      }
    }
    if (dx.size() != node.inputs.size()) {
      return absl::InternalError(absl::StrCat(
          "gradient of '", name, "' returned ", dx.size(),
          " gradients for ", node.inputs.size(), " inputs"));
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const InEdge& src = node.inputs[i];
      if (!between.contains(src.node)) continue;
      if (dx[i].valid()) grads[{src.node, src.index}].push_back(dx[i]);
      if (--pending[src.node] == 0) queue.push_back(src.node);
    }
  }
  grad_xs->clear();
  for (const Output& x : xs) {
    Output g = sum(x.node, x.index);
    if (!g.valid() && req.zeros_for_unconnected) g = ZerosLike(gscope, x);
    grad_xs->push_back(g);
  }
  return scope.status();
}

}  // namespace grad_internal

absl::Status AddGradients(const Scope& scope, const std::vector<Output>& ys,
                          const std::vector<Output>& xs,
                          const std::vector<Output>& grad_ys,
                          std::vector<Output>* grad_xs) {
  return AddGradients(scope, ys, xs, grad_ys, GradientOptions(), grad_xs);
}

absl::Status AddGradients(const Scope& scope, const std::vector<Output>& ys,
                          const std::vector<Output>& xs,
                          const std::vector<Output>& grad_ys,
                          const GradientOptions& options,
                          std::vector<Output>* grad_xs) {
  absl::Status s = scope.status();
  if (s.ok()) {
    grad_internal::DiffRequest req;
    req.ys = ys;
    req.xs = xs;
    req.grad_ys = grad_ys;
    req.options = options;
    s = grad_internal::Differentiate(scope, scope.NewSubScope("gradients"), req,
                                     grad_xs);
  }
  scope.UpdateStatus(s);
  return s;
}

}  // namespace weft
