// A small model library for training demos and tests: an MLP, a small CNN
// and a one-block transformer classifier over [batch, rows * cols] images.
//
//   Scope root = Scope::NewRoot();
//   ModelOptions options;                     // 8x8 images, 10 classes
//   std::unique_ptr<Optimizer> opt = NewAdamOptimizer({});
//   absl::StatusOr<TrainingGraph> g =
//       BuildTrainingGraph(root, ModelKind::kCnn, options, opt.get());
//   // run g->init once, then g->train_op with "images"/"labels" fed
//
// Graphs built by BuildTrainingGraph use these node names, which tools
// (weft train, the TF comparison tests) look up:
//   images     Placeholder float [batch, rows * cols]
//   labels     Placeholder int64 [batch], class ids in [0, num_classes)
//   logits     float [batch, num_classes]
//   loss       mean sparse softmax cross-entropy (scalar)
//   accuracy   fraction of the batch whose argmax is the label (scalar)
//   train_op   one optimizer step (and global_step += 1)
//   init       initializes every variable, the optimizer's included
//   global_step  int64 step counter
//
// Replication builds on the two halves: CreateModelParams once, then
// ModelLogits + LossAndAccuracy per tower on that tower's inputs.
//
// Every initializer is seeded (options.seed, a distinct seed2 per
// variable), so a graph gives the same initial weights in Weft and in
// TensorFlow. Errors are returned (and recorded in the scope).
#ifndef WEFT_GRAPH_MODELS_MODELS_H_
#define WEFT_GRAPH_MODELS_MODELS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/builder/optimizers.h"
#include "graph/builder/scope.h"
#include "graph/builder/variables.h"

namespace weft {

enum class ModelKind { kMlp, kCnn, kTransformer };

// "mlp", "cnn", "transformer"; INVALID_ARGUMENT otherwise.
absl::Status ParseModelKind(absl::string_view text, ModelKind* kind);
const char* ModelKindName(ModelKind kind);

struct ModelOptions {
  int64_t batch = 32;
  int64_t image_rows = 8;  // CNN: height; transformer: sequence length
  int64_t image_cols = 8;  // CNN: width; transformer: features per token
  int64_t num_classes = 10;
  int64_t hidden = 64;  // MLP/CNN dense width; transformer model width
  int64_t heads = 2;    // transformer attention heads (divides hidden)
  int64_t seed = 1;     // initializer seed
  VariableKind variable_kind = VariableKind::kResource;
  // Model parallelism (mlp and cnn): consecutive layers pinned to devices.
  // With D devices and L layers (ModelLayers), layer i and its variables,
  // forward ops and gradients go to layer_devices[i * D / L]; the loss to the
  // last device. D must be at most L. Empty: no device requests.
  std::vector<std::string> layer_devices;
};

// The layers model parallelism splits, in order: mlp hidden1, hidden2,
// output; cnn conv1, conv2, dense, output; transformer: none (empty).
std::vector<std::string> ModelLayers(ModelKind kind);

// Checks sizes (positive, heads divide hidden); INVALID_ARGUMENT naming the
// field otherwise.
absl::Status ValidateModelOptions(const ModelOptions& options);
// As above, and that `kind` can spread over options.layer_devices.
absl::Status ValidateModelOptions(ModelKind kind, const ModelOptions& options);

// A model's variables by short name ("hidden1/w", "conv1/b", ...), in
// creation order in `list`.
struct ModelParams {
  std::vector<TrainableVariable> list;
  std::map<std::string, TrainableVariable> by_name;
};

// The variables of a `kind` model, under the name scope `scope`.
absl::StatusOr<ModelParams> CreateModelParams(const Scope& scope,
                                              ModelKind kind,
                                              const ModelOptions& options);

// The logits [batch, num_classes] for `images` [batch, rows * cols] (float),
// for any batch size (options.batch is only the placeholders' size in
// BuildTrainingGraph).
absl::StatusOr<Output> ModelLogits(const Scope& scope, ModelKind kind,
                                   const ModelOptions& options,
                                   const ModelParams& params,
                                   const Output& images);

struct LossAndAccuracy {
  Output loss;      // mean cross-entropy, named "<scope>/loss"
  Output accuracy;  // named "<scope>/accuracy"
};
LossAndAccuracy AddLossAndAccuracy(const Scope& scope, const Output& logits,
                                   const Output& labels);

struct TrainingGraph {
  Output images, labels, logits, loss, accuracy;
  Operation train_op, init;
  TrainableVariable global_step;
  ModelParams params;
};

// The whole training graph, with the names listed above, in the root scope
// `root`: on one device, or layer by layer over options.layer_devices
// (gradients colocated with their forward ops, TensorFlow's
// colocate_gradients_with_ops).
absl::StatusOr<TrainingGraph> BuildTrainingGraph(const Scope& root,
                                                 ModelKind kind,
                                                 const ModelOptions& options,
                                                 Optimizer* optimizer);

// In-graph replication of BuildTrainingGraph (graph/builder/replication.h):
// variables, global_step, the split of "images"/"labels" and the gradient
// averaging on `param_device`; one tower per entry of `tower_devices`, each
// on options.batch / K examples (INVALID_ARGUMENT unless K divides it).
// The graph has the same node names as BuildTrainingGraph's ("loss" and
// "accuracy" are the whole batch's means, "logits" the towers' concatenated),
// so tools and TensorFlow run it unchanged. options.layer_devices must be
// empty.
absl::StatusOr<TrainingGraph> BuildReplicatedTrainingGraph(
    const Scope& root, ModelKind kind, const ModelOptions& options,
    Optimizer* optimizer, const std::vector<std::string>& tower_devices,
    const std::string& param_device);

}  // namespace weft

#endif  // WEFT_GRAPH_MODELS_MODELS_H_
