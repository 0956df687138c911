// In-graph replication (data parallelism): one graph, one training step,
// K towers that each compute the loss and gradients of their slice of the
// global batch, gradients averaged where the variables live, one update.
//
//   ReplicationOptions r;
//   r.tower_devices = {"/device:CPU:0", "/device:CPU:1"};   // or tasks:
//   r.param_device = "/device:CPU:0";    // {"/job:worker/task:0", ...}
//   // variables built with root.WithDevice(r.param_device)
//   TowerFn tower = [&](const Scope& s, int i, const std::vector<Output>& in)
//       -> absl::StatusOr<TowerOutputs> { ...loss of in[0], in[1]... };
//   absl::StatusOr<ReplicatedStep> step = BuildReplicatedStep(
//       root, r, {images, labels}, vars, tower, optimizer, &global_step);
//   // run step->train_op per step; step->loss is the global batch's loss
//
// Layout (the way TensorFlow's in-graph replication examples build it):
//   split/       on param_device: Split of each batch input along dim 0
//                into K equal slices (INVALID_ARGUMENT if a Placeholder's
//                static batch is not a multiple of K)
//   tower_<i>/   on tower_devices[i]: the tower function's ops and its
//                gradients (tower_<i>/gradients/...); variable reads come
//                from param_device through _Send/_Recv after partitioning
//   average/     on param_device: per variable AddN of the K gradients
//                divided by K; the mean of each tower's loss and metrics;
//                the concatenation of per-example outputs
//   then optimizer->ApplyGradients on param_device (each update goes where
//   its variable lives) and global_step += 1.
// Because every tower's loss is a mean over an equal slice, the averaged
// loss and gradients are those of the whole batch on one device, up to
// float rounding.
//
// Tower devices are any device specs (graph/placer.h matches them): local
// devices of one process or devices of tasks in a cluster; the API is the
// same. Errors name the tower and are also recorded in the scope.
//
// Thread safety: as Scope (one thread builds a graph).
#ifndef WEFT_GRAPH_BUILDER_REPLICATION_H_
#define WEFT_GRAPH_BUILDER_REPLICATION_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/builder/optimizers.h"
#include "graph/builder/scope.h"
#include "graph/builder/variables.h"

namespace weft {

// What one tower builds.
struct TowerOutputs {
  Output loss;                    // scalar mean loss of the tower's slice
  std::vector<Output> metrics;    // scalar means (accuracy), averaged
  std::vector<Output> per_example;  // [slice, ...] (logits), concatenated
};

// Builds tower `index` in `scope` (name scope "tower_<index>", that tower's
// device) from its slice of each batch input, in the order given.
using TowerFn = std::function<absl::StatusOr<TowerOutputs>(
    const Scope& scope, int index, const std::vector<Output>& slices)>;

struct ReplicationOptions {
  // One tower per entry; at least one.
  std::vector<std::string> tower_devices;
  // Where the batch is split and gradients are averaged; the variables
  // should live there too. "" leaves those nodes unrequested.
  std::string param_device;
};

struct ReplicatedStep {
  std::vector<TowerOutputs> towers;
  Output loss;                      // mean of the towers' losses
  std::vector<Output> metrics;      // means, in TowerOutputs order
  std::vector<Output> per_example;  // concatenations, in order
  std::vector<GradAndVar> grads;    // averaged, in `vars` order
  Operation train_op;               // ApplyGradients' op
};

absl::StatusOr<ReplicatedStep> BuildReplicatedStep(
    const Scope& scope, const ReplicationOptions& options,
    const std::vector<Output>& batch_inputs,
    const std::vector<TrainableVariable>& vars, const TowerFn& tower,
    Optimizer* optimizer, const TrainableVariable* global_step);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_REPLICATION_H_
