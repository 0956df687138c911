// The model a trainer builds: a built-in model (graph/models/models.h) or
// a forward graph the user brought (graph/models/imported_model.h), its
// optimizer, and how the graph is laid out. `weft graphgen` and `weft
// train` fill one from their flags (tools/model_flags.h); the between-graph
// trainer (distributed/training/trainer.h) builds each worker's copy from
// it.
//
// A TrainingModel is a value: copy it freely. The forward graph it may hold
// is shared and never modified.
#ifndef WEFT_DISTRIBUTED_TRAINING_TRAINING_MODEL_H_
#define WEFT_DISTRIBUTED_TRAINING_TRAINING_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/models/imported_model.h"
#include "graph/models/models.h"
#include "proto/graph.pb.h"

namespace weft {

struct TrainingModel {
  // A forward graph the user brought (--graph with --loss) and how to train
  // it (graph/models/imported_model.h); null: the built-in `kind`.
  std::shared_ptr<const tensorflow::GraphDef> forward;
  ImportedModelOptions imported;
  std::string source;  // the forward graph's file, for messages
  ModelKind kind = ModelKind::kMlp;
  ModelOptions options;
  std::string optimizer = "sgd";
  float learning_rate = 0.1f;
  // "single" (default), "in-graph" (one tower per device),
  // "model-parallel" (consecutive layers over the devices) or
  // "between-async" / "between-sync" / "allreduce" / "hybrid" (one worker
  // task's copy: the graph is built as "single", sync wrapping the
  // optimizer in a SyncReplicasOptimizer and allreduce and hybrid in an
  // AllReduceOptimizer; the trainer sets it from its ReplicationMode).
  std::string mode = "single";
  // between-sync: gradients aggregated per step (0: every worker's) of
  // total_replicas workers.
  int replicas_to_aggregate = 0;
  int total_replicas = 1;
  // allreduce and hybrid: the worker tasks of the ring and this one's rank
  // (graph/builder/allreduce.h). hybrid also splits the layers over
  // `devices` (options.layer_devices, which the trainer qualifies with its
  // task).
  std::vector<std::string> group_tasks;
  int rank = 0;
  std::vector<std::string> devices;  // canonical specs; empty: no requests
  std::string param_device;          // in-graph: default devices[0]
};

// True for the modes where every worker task builds its own copy of the
// graph: between-async, between-sync, allreduce and hybrid.
bool IsBetweenGraph(const TrainingModel& model);
// True for the between-graph modes without ps tasks, whose workers average
// their gradients round a ring: allreduce and hybrid.
bool AveragesOverRing(const TrainingModel& model);

// The training graph (models.h names: images, labels, loss, train_op,
// init, global_step) for `model`; errors name the forward graph's file.
absl::StatusOr<tensorflow::GraphDef> BuildModelGraph(const TrainingModel& model);

// "mlp, batch 32, 64 features, 10 classes, adam (lr 0.01), resource variables"
std::string DescribeModel(const TrainingModel& model);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TRAINING_TRAINING_MODEL_H_
