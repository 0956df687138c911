#include "graph/builder/gradients.h"

#include <algorithm>
#include <deque>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/math_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/status.h"

namespace weft {

void GradRegistry::Register(const std::string& op, GradFn fn) {
  fns_[op] = std::move(fn);
}

void GradRegistry::RegisterNoGradient(const std::string& op) {
  fns_[op] = nullptr;
}

absl::Status GradRegistry::LookUp(const std::string& op,
                                  const GradFn** fn) const {
  auto it = fns_.find(op);
  if (it == fns_.end()) {
    return absl::NotFoundError(absl::StrCat("no gradient registered for op '",
                                            op, "'"));
  }
  *fn = it->second ? &it->second : nullptr;
  return absl::OkStatus();
}

std::vector<std::string> GradRegistry::OpNames() const {
  std::vector<std::string> names;
  for (const auto& [name, fn] : fns_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

const GradRegistry& GlobalGradRegistry() {
  static const GradRegistry* registry = [] {
    auto* r = new GradRegistry;
    RegisterArrayGrads(r);
    RegisterIndexGrads(r);
    RegisterMathGrads(r);
    RegisterMatMulGrads(r);
    RegisterReductionGrads(r);
    RegisterNnGrads(r);
    RegisterConvGrads(r);
    RegisterGradGrads(r);
    return r;
  }();
  return *registry;
}

namespace {

using EdgeKey = std::pair<std::string, int>;  // (node, output index)

struct InEdge {
  std::string node;
  int index;
};

absl::Status Differentiate(const Scope& scope, const std::vector<Output>& ys,
                           const std::vector<Output>& xs,
                           const std::vector<Output>& grad_ys,
                           const GradientOptions& options,
                           std::vector<Output>* grad_xs) {
  WEFT_RETURN_IF_ERROR(scope.status());
  if (grad_xs == nullptr) {
    return absl::InvalidArgumentError("AddGradients: grad_xs is null");
  }
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
  const tensorflow::GraphDef& graph = scope.graph();
  // Data inputs of every node, and consumers of every node.
  absl::flat_hash_map<std::string, std::vector<InEdge>> inputs;
  absl::flat_hash_map<std::string, std::vector<std::string>> consumers;
  for (const tensorflow::NodeDef& n : graph.node()) {
    auto& ins = inputs[n.name()];
    for (const std::string& s : n.input()) {
      WEFT_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(s));
      if (id.is_control()) continue;
      ins.push_back(InEdge{id.node, id.index});
      consumers[id.node].push_back(n.name());
    }
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
    for (const InEdge& in : inputs[n]) {
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
    for (const InEdge& in : inputs[n]) {
      if (between.contains(in.node)) ++pending[in.node];
    }
  }
  Scope gscope = scope.NewSubScope("gradients");
  absl::flat_hash_map<EdgeKey, std::vector<Output>> grads;
  for (size_t i = 0; i < ys.size(); ++i) {
    if (!between.contains(ys[i].node)) continue;
    Output g = grad_ys.empty() ? OnesLike(gscope, ys[i]) : grad_ys[i];
    grads[{ys[i].node, ys[i].index}].push_back(g);
  }
  WEFT_RETURN_IF_ERROR(scope.status());
  // Where the gradient nodes of forward node `node` go.
  auto grad_scope = [&](const std::string& node, absl::string_view suffix) {
    Scope s = gscope.NewSubScope(absl::StrCat(node, suffix));
    if (!options.colocate_with_ops) return s;
    const tensorflow::NodeDef* def = scope.FindNode(node);
    return def == nullptr || def->device().empty() ? s
                                                   : s.WithDevice(def->device());
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
    const tensorflow::NodeDef* node = scope.FindNode(name);
    WEFT_ASSIGN_OR_RETURN(DataTypeVector out_types,
                          NodeOutputTypes(scope, *node));
    GradInputs in;
    in.node = node;
    bool any_grad = false;
    for (size_t k = 0; k < out_types.size(); ++k) {
      in.y.push_back(Output{name, static_cast<int>(k), out_types[k]});
      in.dy.push_back(sum(name, static_cast<int>(k)));
      any_grad = any_grad || in.dy.back().valid();
    }
    const std::vector<InEdge>& node_inputs = inputs[name];
    bool any_input_between = false;
    for (const InEdge& i : node_inputs) {
      const tensorflow::NodeDef* src = scope.FindNode(i.node);
      WEFT_ASSIGN_OR_RETURN(DataTypeVector src_types,
                            NodeOutputTypes(scope, *src));
      in.x.push_back(Output{i.node, i.index, src_types[i.index]});
      any_input_between = any_input_between || between.contains(i.node);
    }
    std::vector<Output> dx(node_inputs.size());
    if (any_grad && any_input_between) {
      const GradFn* fn = nullptr;
      absl::Status found = GlobalGradRegistry().LookUp(node->op(), &fn);
      if (!found.ok()) {
        return absl::NotFoundError(absl::StrCat(
            "no gradient registered for op '", node->op(), "' (node '", name,
            "', on the path from xs to ys); add one in graph/builder/*_grad.cc"
            " or stop the path with StopGradient"));
      }
      if (fn != nullptr) {
        WEFT_RETURN_IF_ERROR(WithContext(
            (*fn)(grad_scope(name, "_grad"), in, &dx),
            absl::StrCat("gradient of ", NodeLabel(*node))));
        WEFT_RETURN_IF_ERROR(scope.status());
        if (dx.size() != node_inputs.size()) {
          return absl::InternalError(absl::StrCat(
              "gradient of ", NodeLabel(*node), " returned ", dx.size(),
              " gradients for ", node_inputs.size(), " inputs"));
        }
      }
    }
    for (size_t i = 0; i < node_inputs.size(); ++i) {
      const InEdge& src = node_inputs[i];
      if (!between.contains(src.node)) continue;
      if (dx[i].valid()) grads[{src.node, src.index}].push_back(dx[i]);
      if (--pending[src.node] == 0) queue.push_back(src.node);
    }
  }
  grad_xs->clear();
  for (const Output& x : xs) {
    Output g = sum(x.node, x.index);
    if (!g.valid()) g = ZerosLike(gscope, x);
    grad_xs->push_back(g);
  }
  return scope.status();
}

}  // namespace

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
  absl::Status s = Differentiate(scope, ys, xs, grad_ys, options, grad_xs);
  scope.UpdateStatus(s);
  return s;
}

}  // namespace weft
