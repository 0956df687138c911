// Training a model the user brings: a forward graph that TensorFlow wrote
// (inputs as Placeholders, variables as VarHandleOp or VariableV2 with an
// initializer op, a loss tensor) becomes a training graph with the node
// names every `weft train` mode runs (models.h):
//
//   absl::StatusOr<tensorflow::GraphDef> fwd = ...;   // tools/export_keras_graph.py
//   ImportedModelOptions o;
//   o.loss = "loss";
//   std::unique_ptr<Optimizer> opt = NewAdamOptimizer({});
//   Scope root = Scope::NewRoot();
//   absl::StatusOr<ImportedTrainingGraph> g =
//       BuildImportedTrainingGraph(root, *fwd, o, opt.get());
//   // run "init" once, then "train_op" with g->inputs fed, fetching "loss"
//
// What is trained: every variable of a floating dtype that the loss reads
// (a ReadVariableOp, ResourceGather or ref read on the loss's data path)
// and that the forward graph does not assign itself outside its
// initializer (batch norm's moving statistics are assigned, so they are
// not trained; their assignments run with every step, as in the
// tf.function TensorFlow traced). A non-scalar loss is summed, as
// TensorFlow's minimize does.
//
// Names: the training graph adds "loss" (an Identity of the loss unless the
// loss already is "loss:0"), "global_step", "train_op" and "init" (the
// forward graph's initializer, the optimizer's slots and the step). A
// forward initializer called "init" is renamed "init_model", a train op
// (options.train_op) called "train_op" "train_op_model"; a forward node
// already called "global_step" or "train_op", or "loss" that is not the
// loss, is INVALID_ARGUMENT naming it.
//
// Errors are values naming the node: no such loss, a loss of no floating
// dtype, variables without an initializer, no variable to train, a
// variable of unknown shape, or an op on the loss's path without a
// gradient (gradients.h). The scope may hold a partial graph after an
// error. Thread-compatible, like Scope.
#ifndef WEFT_GRAPH_MODELS_IMPORTED_MODEL_H_
#define WEFT_GRAPH_MODELS_IMPORTED_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/builder/optimizers.h"
#include "graph/builder/scope.h"
#include "graph/builder/variables.h"
#include "proto/graph.pb.h"

namespace weft {

struct ImportedModelOptions {
  std::string loss;  // "node" or "node:index"
  // The forward graph's initializer; empty: "init" where the graph has one.
  std::string init;
  // Model parallelism (BuildImportedTrainingGraph): the forward computation
  // cut into consecutive pieces of about equal estimated cost, piece i on
  // layer_devices[i] (cost_split.h), each variable with the piece that
  // reads it first, and the gradients with their forward ops. Empty: no
  // device requests.
  std::vector<std::string> layer_devices;
  // A graph that trains itself (a traced train step, its optimizer inside):
  // the op that runs one step. Then nothing is differentiated: "train_op"
  // runs it and increments global_step, and no variable needs to be
  // trainable. Empty: a forward graph.
  std::string train_op;
};

// A Placeholder the loss depends on: what a step must feed.
struct ModelInput {
  std::string name;
  DataType dtype = DT_INVALID;
  std::vector<int64_t> shape;  // -1 for an unknown dimension
  bool known_rank = true;
};

struct ImportedTrainingGraph {
  std::vector<ModelInput> inputs;            // in graph order
  std::vector<TrainableVariable> variables;  // trained, in graph order
  Output loss;                               // "loss:0"
  Operation train_op, init;
  TrainableVariable global_step;
  // With layer_devices: the estimated cost of each device's piece.
  std::vector<double> split_cost;
};

// The inputs and trainable variables of `forward` for `options.loss`,
// without building anything (what `weft inspect` and the checks use).
absl::StatusOr<ImportedTrainingGraph> InspectForwardGraph(
    const tensorflow::GraphDef& forward, const ImportedModelOptions& options);

// Imports `forward` into `root` (scope.h Import) and adds gradients, the
// optimizer's updates, "global_step", "train_op" and "init".
absl::StatusOr<ImportedTrainingGraph> BuildImportedTrainingGraph(
    const Scope& root, tensorflow::GraphDef forward,
    const ImportedModelOptions& options, Optimizer* optimizer);

// In-graph replication of BuildImportedTrainingGraph (graph/builder/
// replication.h): the variables, their initializer, the split of every
// input along its first dimension, the gradient averaging and the update
// on `param_device`; one copy of the forward computation per entry of
// `tower_devices` ("tower_<i>/<node>"), reading the shared variables, on
// its slice of the global batch (INVALID_ARGUMENT unless the static batch
// splits evenly). "loss" is the mean of the towers' losses, the whole
// batch's; each tower's assignments (batch norm's moving averages) run
// every step. A forward node called "loss" is renamed "loss_model".
absl::StatusOr<ImportedTrainingGraph> BuildImportedReplicatedTrainingGraph(
    const Scope& root, tensorflow::GraphDef forward,
    const ImportedModelOptions& options, Optimizer* optimizer,
    const std::vector<std::string>& tower_devices, const std::string& param_device);

}  // namespace weft

#endif  // WEFT_GRAPH_MODELS_IMPORTED_MODEL_H_
