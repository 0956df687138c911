#include "graph/models/imported_model.h"

#include <deque>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/replication.h"
#include "graph/models/cost_split.h"
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
      std::string name(InputNodeName(in));
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
      if (InputNodeName(in) != from) continue;
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
  absl::flat_hash_set<std::string> on_path =
      Ancestors(nodes, loss.node, /*with_control=*/false);
  const bool trains_itself = !options.train_op.empty();
  if (trains_itself) {
    if (!nodes.contains(options.train_op)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the graph has no train op '", options.train_op, "'"));
    }
    // The step's inputs are those the train op needs too.
    for (const std::string& n : Ancestors(nodes, options.train_op, /*with_control=*/true)) {
      on_path.insert(n);
    }
  }
  const absl::flat_hash_set<std::string> initializing =
      init.empty() ? absl::flat_hash_set<std::string>()
                   : Ancestors(nodes, init, /*with_control=*/true);
  // Variables the forward graph assigns itself (outside its initializer).
  absl::flat_hash_set<std::string> assigned;
  for (const tensorflow::NodeDef& n : forward.node()) {
    if (IsAssign(n.op()) && n.input_size() > 0 && !initializing.contains(n.name())) {
      assigned.insert(std::string(InputNodeName(n.input(0))));
    }
  }
  // The read of each variable the loss depends on: what it is trained by.
  absl::flat_hash_map<std::string, Output> reads;
  for (const tensorflow::NodeDef& n : forward.node()) {
    if (!on_path.contains(n.name()) || n.input_size() == 0) continue;
    const std::string var(InputNodeName(n.input(0)));
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
  if (trains_itself) {
    g.variables.clear();  // the graph updates them itself
  } else if (g.variables.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the loss '", options.loss, "' reads no variable of a floating type "
        "that the graph does not assign itself: nothing to train"));
  }
  return g;
}

namespace {

// What both builders do first: the forward initializer "init" renamed
// "init_model" (and, replicated, the forward "loss" renamed "loss_model"),
// the forward graph inspected, the names the training graph adds checked
// free, and the forward pass's side effects (assignments outside the
// initializer that nothing consumes) found.
struct Prepared {
  ImportedModelOptions options;
  ImportedTrainingGraph graph;
  std::vector<Operation> side_effects;
  NodeMap nodes;  // the forward graph's nodes by name (its NodeDefs)
  absl::flat_hash_set<std::string> initializing;  // the initializer's nodes

  // What a training step runs of the forward graph: the loss and the side
  // effects.
  std::vector<std::string> StepRoots() const {
    std::vector<std::string> roots = {graph.loss.node};
    for (const Operation& op : side_effects) roots.push_back(op.node);
    return roots;
  }
};

absl::StatusOr<Prepared> Prepare(tensorflow::GraphDef* forward,
                                 const ImportedModelOptions& options,
                                 bool rename_loss) {
  Prepared p;
  ImportedModelOptions& o = p.options;
  o = options;
  absl::flat_hash_set<std::string> names;
  for (const tensorflow::NodeDef& n : forward->node()) names.insert(n.name());
  // Renames node `from` to `base` (made unique), and every option naming it.
  auto rename = [&](const std::string& from, const std::string& base) {
    std::string to = base;
    for (int i = 1; names.contains(to); ++i) to = absl::StrCat(base, "_", i);
    RenameNode(forward, from, to);
    names.insert(to);
    for (std::string* field : {&o.init, &o.loss, &o.train_op}) {
      if (*field == from || absl::StartsWith(*field, from + ":")) {
        *field = absl::StrCat(to, field->substr(from.size()));
      }
    }
  };
  if ((o.init.empty() || o.init == "init") && names.contains("init")) {
    o.init = "init";
    rename("init", "init_model");
  }
  if (rename_loss && names.contains("loss")) rename("loss", "loss_model");
  if (o.train_op == "train_op") rename("train_op", "train_op_model");
  WEFT_ASSIGN_OR_RETURN(p.graph, InspectForwardGraph(*forward, o));
  const bool loss_is_named_loss = p.graph.loss.node == "loss" && p.graph.loss.index == 0;
  for (const tensorflow::NodeDef& n : forward->node()) {
    if (n.name() == "global_step" || n.name() == "train_op" ||
        (n.name() == "loss" && !loss_is_named_loss)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the graph already has a node '", n.name(), "', a name the training "
          "graph gives its own node: rename it when exporting"));
    }
  }
  for (const tensorflow::NodeDef& n : forward->node()) p.nodes[n.name()] = &n;
  p.initializing = Ancestors(p.nodes, o.init, /*with_control=*/true);
  absl::flat_hash_set<std::string> consumed;
  for (const tensorflow::NodeDef& n : forward->node()) {
    for (const std::string& in : n.input()) consumed.insert(std::string(InputNodeName(in)));
  }
  for (const tensorflow::NodeDef& n : forward->node()) {
    if (IsAssign(n.op()) && !p.initializing.contains(n.name()) &&
        !consumed.contains(n.name())) {
      p.side_effects.push_back(Operation{n.name()});
    }
  }
  return p;
}

// The loss's dtype, checked floating; sets g->loss.dtype.
absl::Status TypeLoss(const Scope& root, const std::string& name,
                      ImportedTrainingGraph* g) {
  WEFT_ASSIGN_OR_RETURN(DataTypeVector types,
                        NodeOutputTypes(root, *root.FindNode(g->loss.node)));
  if (g->loss.index >= static_cast<int>(types.size()) ||
      !IsTrainableType(types[g->loss.index])) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the loss '", name, "' is not a tensor of a floating type"));
  }
  g->loss.dtype = types[g->loss.index];
  return absl::OkStatus();
}

// "init": the forward initializer, the step's and the optimizer's slots.
void AddInit(const Scope& root, const Optimizer& optimizer, ImportedTrainingGraph* g) {
  std::vector<Operation> inits = {g->init, g->global_step.initializer};
  for (const Operation& op : optimizer.initializers()) inits.push_back(op);
  g->init = Group(root.WithOpName("init"), inits);
}

}  // namespace

absl::StatusOr<ImportedTrainingGraph> BuildImportedTrainingGraph(
    const Scope& root, tensorflow::GraphDef forward,
    const ImportedModelOptions& options, Optimizer* optimizer) {
  if (optimizer == nullptr) {
    return absl::InvalidArgumentError("BuildImportedTrainingGraph: no optimizer");
  }
  if (!options.train_op.empty() && !options.layer_devices.empty()) {
    return absl::InvalidArgumentError(
        "a graph that trains itself (a train op) is not split over devices yet: "
        "export the forward graph instead");
  }
  WEFT_ASSIGN_OR_RETURN(Prepared p, Prepare(&forward, options, /*rename_loss=*/false));
  ImportedTrainingGraph& g = p.graph;
  const std::vector<std::string>& devices = options.layer_devices;
  if (!devices.empty()) {
    WEFT_ASSIGN_OR_RETURN(CostSplit split, SplitByCost(forward, p.StepRoots(),
                                                       static_cast<int>(devices.size())));
    for (tensorflow::NodeDef& n : *forward.mutable_node()) {
      auto it = split.part.find(n.name());
      if (it != split.part.end()) n.set_device(devices[it->second]);
    }
    g.split_cost = split.cost;
  }
  WEFT_RETURN_IF_ERROR(root.Import(forward));
  WEFT_RETURN_IF_ERROR(TypeLoss(root, options.loss, &g));
  if (g.loss.node != "loss" || g.loss.index != 0) {
    g.loss = Identity(root.WithOpName("loss"), g.loss);
  }
  g.global_step = NewGlobalStep(root, VariableKind::kResource);
  if (!p.options.train_op.empty()) {
    // The graph trains itself: its step, then the step count.
    const Scope after = root.WithControlDependencies({Operation{p.options.train_op}});
    p.side_effects.push_back(AssignAddTo(after.WithOpName("global_step/increment"),
                                         g.global_step, Const(after, int64_t{1})));
    g.train_op = Group(root.WithOpName("train_op"), p.side_effects);
    AddInit(root, *optimizer, &g);
    WEFT_RETURN_IF_ERROR(root.status());
    return g;
  }
  GradientOptions grad_options;
  grad_options.colocate_with_ops = !devices.empty();
  WEFT_ASSIGN_OR_RETURN(std::vector<GradAndVar> grads,
                        optimizer->ComputeGradients(root, g.loss, g.variables, grad_options));
  WEFT_ASSIGN_OR_RETURN(Operation step,
                        optimizer->ApplyGradients(root, grads, &g.global_step));
  p.side_effects.push_back(step);
  g.train_op = Group(root.WithOpName("train_op"), p.side_effects);
  AddInit(root, *optimizer, &g);
  WEFT_RETURN_IF_ERROR(root.status());
  return g;
}

absl::StatusOr<ImportedTrainingGraph> BuildImportedReplicatedTrainingGraph(
    const Scope& root, tensorflow::GraphDef forward,
    const ImportedModelOptions& options, Optimizer* optimizer,
    const std::vector<std::string>& tower_devices, const std::string& param_device) {
  if (!options.layer_devices.empty()) {
    return absl::InvalidArgumentError(
        "in-graph towers and layer_devices (model parallelism) cannot be combined");
  }
  if (!options.train_op.empty()) {
    return absl::InvalidArgumentError(
        "a graph that trains itself (a train op) cannot be built in towers: its "
        "gradients are not Weft's to average; export the forward graph instead");
  }
  if (optimizer == nullptr) {
    return absl::InvalidArgumentError(
        "BuildImportedReplicatedTrainingGraph: no optimizer");
  }
  WEFT_ASSIGN_OR_RETURN(Prepared p, Prepare(&forward, options, /*rename_loss=*/true));
  ImportedTrainingGraph& g = p.graph;
  // What a tower copies: the forward computation of the loss and of the
  // side effects, without the variables, inputs and initializer.
  absl::flat_hash_set<std::string> copied;
  for (const std::string& r : p.StepRoots()) {
    for (const std::string& n : Ancestors(p.nodes, r, /*with_control=*/true)) {
      auto it = p.nodes.find(n);
      if (it == p.nodes.end() || p.initializing.contains(n)) continue;
      const std::string& op = it->second->op();
      if (op == "VarHandleOp" || op == "VariableV2" || op == "Variable" ||
          op == "Placeholder") {
        continue;
      }
      copied.insert(n);
    }
  }
  // The original graph (variables, initializer) on the parameter device.
  for (tensorflow::NodeDef& n : *forward.mutable_node()) {
    if (!param_device.empty()) n.set_device(param_device);
  }
  WEFT_RETURN_IF_ERROR(root.Import(forward));
  WEFT_RETURN_IF_ERROR(TypeLoss(root, p.options.loss, &g));
  std::vector<Output> inputs;
  for (const ModelInput& in : g.inputs) {
    inputs.push_back(Output{in.name, 0, in.dtype});
  }
  std::vector<Operation> side_effects;
  TowerFn tower = [&](const Scope& s, int index,
                      const std::vector<Output>& slices) -> absl::StatusOr<TowerOutputs> {
    const std::string prefix = s.name_scope() + "/";
    absl::flat_hash_map<std::string, std::string> input_slice;
    for (size_t i = 0; i < inputs.size(); ++i) {
      input_slice[inputs[i].node] = slices[i].name();
    }
    tensorflow::GraphDef copy;
    for (const tensorflow::NodeDef& n : forward.node()) {
      if (!copied.contains(n.name())) continue;
      tensorflow::NodeDef* c = copy.add_node();
      *c = n;
      c->set_name(prefix + n.name());
      c->set_device(tower_devices[index]);
      for (std::string& in : *c->mutable_input()) {
        const std::string node(InputNodeName(in));
        const bool control = absl::StartsWith(in, "^");
        auto slice = input_slice.find(node);
        if (slice != input_slice.end()) {
          in = control ? absl::StrCat("^", InputNodeName(slice->second)) : slice->second;
        } else if (copied.contains(node)) {
          in = absl::StrCat(control ? "^" : "", prefix, in.substr(control ? 1 : 0));
        }
      }
    }
    WEFT_RETURN_IF_ERROR(s.Import(copy));
    for (const Operation& op : p.side_effects) {
      side_effects.push_back(Operation{prefix + op.node});
    }
    TowerOutputs out;
    out.loss = Output{prefix + g.loss.node, g.loss.index, g.loss.dtype};
    return out;
  };
  g.global_step = NewGlobalStep(root.WithDevice(param_device), VariableKind::kResource);
  ReplicationOptions r;
  r.tower_devices = tower_devices;
  r.param_device = param_device;
  WEFT_ASSIGN_OR_RETURN(ReplicatedStep step,
                        BuildReplicatedStep(root, r, inputs, g.variables, tower,
                                            optimizer, &g.global_step));
  g.loss = Identity(root.WithOpName("loss").WithDevice(param_device), step.loss);
  side_effects.push_back(step.train_op);
  g.train_op = Group(root.WithOpName("train_op"), side_effects);
  AddInit(root.WithDevice(param_device), *optimizer, &g);
  WEFT_RETURN_IF_ERROR(root.status());
  return g;
}

}  // namespace weft
