#include "graph/models/imported_model.h"

#include <deque>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using NodeMap = absl::flat_hash_map<std::string, const tensorflow::NodeDef*>;

bool IsTrainableType(DataType t) {
  return t == DT_FLOAT || t == DT_DOUBLE || t == DT_HALF || t == DT_BFLOAT16;
}

bool IsAssign(const std::string& op) {
  return op == "AssignVariableOp" || op == "AssignAddVariableOp" ||
         op == "AssignSubVariableOp" || op == "Assign" || op == "AssignAdd" ||
         op == "AssignSub";
}

// The node an input string names ("x", "x:1", "^x").
absl::string_view InputNode(absl::string_view input) {
  if (absl::StartsWith(input, "^")) input.remove_prefix(1);
  return input.substr(0, input.find(':'));
}

// Every node `from` depends on: through data inputs only, or through
// control inputs as well.
absl::flat_hash_set<std::string> Ancestors(const NodeMap& nodes,
                                           const std::string& from,
                                           bool with_control) {
  absl::flat_hash_set<std::string> seen = {from};
  std::deque<std::string> todo = {from};
  while (!todo.empty()) {
    auto it = nodes.find(todo.front());
    todo.pop_front();
    if (it == nodes.end()) continue;
    for (const std::string& in : it->second->input()) {
      if (!with_control && absl::StartsWith(in, "^")) continue;
      std::string name(InputNode(in));
      if (seen.insert(name).second) todo.push_back(std::move(name));
    }
  }
  return seen;
}

const tensorflow::AttrValue* FindAttr(const tensorflow::NodeDef& n,
                                      const char* name) {
  auto it = n.attr().find(name);
  return it == n.attr().end() ? nullptr : &it->second;
}

// Renames node `from` to `to` and every input naming it.
void RenameNode(tensorflow::GraphDef* graph, const std::string& from,
                const std::string& to) {
  for (tensorflow::NodeDef& n : *graph->mutable_node()) {
    if (n.name() == from) n.set_name(to);
    for (std::string& in : *n.mutable_input()) {
      if (InputNode(in) != from) continue;
      const bool control = absl::StartsWith(in, "^");
      const size_t colon = in.find(':');
      in = absl::StrCat(control ? "^" : "", to,
                        colon == std::string::npos ? "" : in.substr(colon));
    }
  }
}

}  // namespace

absl::StatusOr<ImportedTrainingGraph> InspectForwardGraph(
    const tensorflow::GraphDef& forward, const ImportedModelOptions& options) {
  NodeMap nodes;
  for (const tensorflow::NodeDef& n : forward.node()) nodes[n.name()] = &n;
  if (options.loss.empty()) {
    return absl::InvalidArgumentError("no loss tensor named (--loss)");
  }
  WEFT_ASSIGN_OR_RETURN(TensorId loss, ParseTensorName(options.loss));
  if (loss.is_control() || !nodes.contains(loss.node)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the graph has no loss tensor '", options.loss, "'"));
  }
  std::string init = options.init;
  if (init.empty() && nodes.contains("init")) init = "init";
  if (!init.empty() && !nodes.contains(init)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the graph has no initializer node '", init, "'"));
  }
  if (init.empty()) {
    for (const tensorflow::NodeDef& n : forward.node()) {
      if (n.op() == "VarHandleOp" || n.op() == "VariableV2") {
        return absl::InvalidArgumentError(absl::StrCat(
            "the graph's variables (", n.name(), ", ...) have no initializer: "
            "name it with --init (tools/export_keras_graph.py writes one "
            "called 'init')"));
      }
    }
  }
  ImportedTrainingGraph g;
  g.loss = Output{loss.node, loss.index, DT_INVALID};
  g.init = Operation{init};
  const absl::flat_hash_set<std::string> on_path =
      Ancestors(nodes, loss.node, /*with_control=*/false);
  const absl::flat_hash_set<std::string> initializing =
      init.empty() ? absl::flat_hash_set<std::string>()
                   : Ancestors(nodes, init, /*with_control=*/true);
  // Variables the forward graph assigns itself (outside its initializer).
  absl::flat_hash_set<std::string> assigned;
  for (const tensorflow::NodeDef& n : forward.node()) {
    if (IsAssign(n.op()) && n.input_size() > 0 && !initializing.contains(n.name())) {
      assigned.insert(std::string(InputNode(n.input(0))));
    }
  }
  // The read of each variable the loss depends on: what it is trained by.
  absl::flat_hash_map<std::string, Output> reads;
  for (const tensorflow::NodeDef& n : forward.node()) {
    if (!on_path.contains(n.name()) || n.input_size() == 0) continue;
    const std::string var(InputNode(n.input(0)));
    auto it = nodes.find(var);
    if (it == nodes.end()) continue;
    const std::string& var_op = it->second->op();
    const bool resource_read =
        var_op == "VarHandleOp" &&
        (n.op() == "ReadVariableOp" || n.op() == "ResourceGather" ||
         n.op() == "ResourceGatherNd");
    const bool ref_read = (var_op == "VariableV2" || var_op == "Variable") &&
                          n.op() == "Identity";
    if ((resource_read || ref_read) && !reads.contains(var)) {
      reads[var] = Output{n.name(), 0, DT_INVALID};
    }
  }
  for (const tensorflow::NodeDef& n : forward.node()) {
    if (n.op() == "Placeholder" && on_path.contains(n.name())) {
      ModelInput in;
      in.name = n.name();
      if (const auto* t = FindAttr(n, "dtype")) in.dtype = t->type();
      if (const auto* s = FindAttr(n, "shape")) {
        in.known_rank = !s->shape().unknown_rank();
        for (const auto& d : s->shape().dim()) in.shape.push_back(d.size());
      } else {
        in.known_rank = false;
      }
      g.inputs.push_back(std::move(in));
      continue;
    }
    auto read = reads.find(n.name());
    if (read == reads.end() || assigned.contains(n.name())) continue;
    const tensorflow::AttrValue* dtype = FindAttr(n, "dtype");
    const tensorflow::AttrValue* shape = FindAttr(n, "shape");
    if (dtype == nullptr || !IsTrainableType(dtype->type())) continue;
    TrainableVariable v;
    v.name = n.name();
    v.kind = n.op() == "VarHandleOp" ? VariableKind::kResource : VariableKind::kRef;
    v.dtype = dtype->type();
    if (shape == nullptr || shape->shape().unknown_rank()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "variable '", n.name(), "' has no static shape: the optimizer's "
          "slots need one (export the model with its input shapes fixed)"));
    }
    for (const auto& d : shape->shape().dim()) {
      if (d.size() < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "variable '", n.name(), "' has an unknown dimension: the "
            "optimizer's slots need a static shape"));
      }
      v.shape.push_back(d.size());
    }
    v.var = Output{n.name(), 0, v.kind == VariableKind::kResource ? DT_RESOURCE
                                                                  : MakeRefType(v.dtype)};
    v.value = Output{read->second.node, 0, v.dtype};
    v.initializer = g.init;
    g.variables.push_back(std::move(v));
  }
  if (g.variables.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the loss '", options.loss, "' reads no variable of a floating type "
        "that the graph does not assign itself: nothing to train"));
  }
  return g;
}

absl::StatusOr<ImportedTrainingGraph> BuildImportedTrainingGraph(
    const Scope& root, tensorflow::GraphDef forward,
    const ImportedModelOptions& options, Optimizer* optimizer) {
  if (optimizer == nullptr) {
    return absl::InvalidArgumentError("BuildImportedTrainingGraph: no optimizer");
  }
  ImportedModelOptions o = options;
  if (o.init.empty() || o.init == "init") {
    bool has_init = false;
    std::string renamed = "init_model";
    absl::flat_hash_set<std::string> names;
    for (const tensorflow::NodeDef& n : forward.node()) {
      names.insert(n.name());
      has_init |= n.name() == "init";
    }
    for (int i = 1; names.contains(renamed); ++i) renamed = absl::StrCat("init_model_", i);
    if (has_init) {
      RenameNode(&forward, "init", renamed);
      if (o.loss == "init" || absl::StartsWith(o.loss, "init:")) {
        o.loss = absl::StrCat(renamed, o.loss.substr(4));
      }
      o.init = renamed;
    }
  }
  WEFT_ASSIGN_OR_RETURN(ImportedTrainingGraph g, InspectForwardGraph(forward, o));
  const bool loss_is_named_loss = g.loss.node == "loss" && g.loss.index == 0;
  for (const tensorflow::NodeDef& n : forward.node()) {
    if (n.name() == "global_step" || n.name() == "train_op" ||
        (n.name() == "loss" && !loss_is_named_loss)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the graph already has a node '", n.name(), "', a name the training "
          "graph gives its own node: rename it when exporting"));
    }
  }
  // Side effects the forward pass has (batch norm's moving averages): they
  // run with every step.
  std::vector<Operation> side_effects;
  {
    NodeMap nodes;
    for (const tensorflow::NodeDef& n : forward.node()) nodes[n.name()] = &n;
    const absl::flat_hash_set<std::string> initializing =
        Ancestors(nodes, o.init, /*with_control=*/true);
    absl::flat_hash_set<std::string> consumed;
    for (const tensorflow::NodeDef& n : forward.node()) {
      for (const std::string& in : n.input()) consumed.insert(std::string(InputNode(in)));
    }
    for (const tensorflow::NodeDef& n : forward.node()) {
      if (IsAssign(n.op()) && !initializing.contains(n.name()) &&
          !consumed.contains(n.name())) {
        side_effects.push_back(Operation{n.name()});
      }
    }
  }
  WEFT_RETURN_IF_ERROR(root.Import(forward));
  WEFT_ASSIGN_OR_RETURN(DataTypeVector loss_types,
                        NodeOutputTypes(root, *root.FindNode(g.loss.node)));
  if (g.loss.index >= static_cast<int>(loss_types.size()) ||
      !IsTrainableType(loss_types[g.loss.index])) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the loss '", options.loss, "' is not a tensor of a floating type"));
  }
  g.loss.dtype = loss_types[g.loss.index];
  if (!loss_is_named_loss) g.loss = Identity(root.WithOpName("loss"), g.loss);
  g.global_step = NewGlobalStep(root, VariableKind::kResource);
  WEFT_ASSIGN_OR_RETURN(std::vector<GradAndVar> grads,
                        optimizer->ComputeGradients(root, g.loss, g.variables));
  WEFT_ASSIGN_OR_RETURN(Operation step,
                        optimizer->ApplyGradients(root, grads, &g.global_step));
  side_effects.push_back(step);
  g.train_op = Group(root.WithOpName("train_op"), side_effects);
  std::vector<Operation> inits = {g.init, g.global_step.initializer};
  for (const Operation& op : optimizer->initializers()) inits.push_back(op);
  g.init = Group(root.WithOpName("init"), inits);
  WEFT_RETURN_IF_ERROR(root.status());
  return g;
}

}  // namespace weft
