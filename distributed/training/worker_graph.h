// One between-graph worker's copy of the model (trainer.h), built and
// placed for the cluster: the replica device setter's placement and the
// readiness checks, or (a ring) the whole model on this worker with the
// chief's broadcast; the saver with a checkpoint dir; the workers' step
// counters (worker_progress.h). Internal to distributed/training; nothing
// here talks to the cluster.
#ifndef WEFT_DISTRIBUTED_TRAINING_WORKER_GRAPH_H_
#define WEFT_DISTRIBUTED_TRAINING_WORKER_GRAPH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distributed/training/training_model.h"
#include "distributed/training/worker_context.h"
#include "distributed/training/worker_progress.h"
#include "graph/builder/saver.h"
#include "proto/graph.pb.h"

namespace weft {

// The prefix of the readiness checks' names.
inline constexpr char kReadyPrefix[] = "weft_ready/";
// Variables placed on the workers' job are local variables (the sync local
// step): each worker initialises its own, and checkpoints leave them out.
inline constexpr char kLocalJob[] = "/job:worker";

// One VarIsInitializedOp / IsVariableInitialized per variable, beside it
// ("weft_ready/<variable>", on its device); the names to fetch. Fetching
// them all tells whether the model is ready. Local variables (on a
// worker: the sync local step) are each worker's own to initialise and
// are left out.
std::vector<std::string> AddReadinessChecks(tensorflow::GraphDef* graph);

// The global step's value: its read node ("global_step/Read" of a
// resource variable, "global_step/read" of a ref one); empty without one.
std::string GlobalStepRead(const tensorflow::GraphDef& graph);

struct WorkerGraph {
  TrainingModel model;  // as built: its mode, replicas, ring set
  tensorflow::GraphDef graph;
  int workers = 0;       // of the cluster
  int to_aggregate = 0;  // sync: gradients per step
  int cpus = 1;          // CPU devices of this task's server
  std::vector<std::string> ready_checks;        // not with a ring
  std::optional<SaverNodes> saver;              // with a checkpoint dir
  std::optional<WorkerProgressNodes> progress;  // not with a ring
  std::string global_step;                      // its read node
  bool has_accuracy = false;
};

// This worker's copy of options.model, placed for the cluster (the
// options must be valid: ValidateTrainerOptions).
absl::StatusOr<WorkerGraph> BuildWorkerGraph(const WorkerContext& w);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TRAINING_WORKER_GRAPH_H_
