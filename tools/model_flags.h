// The flags `weft graphgen` and `weft train --model` share: which model,
// its sizes, the optimizer, and building the training graph they describe.
#ifndef WEFT_TOOLS_MODEL_FLAGS_H_
#define WEFT_TOOLS_MODEL_FLAGS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/models/imported_model.h"
#include "graph/models/models.h"
#include "proto/graph.pb.h"
#include "tools/command_line.h"

namespace weft {

// Usage text for the flags below (for a command's usage string).
extern const char kModelFlagsUsage[];

// Adds --model, --batch, --optimizer, --lr, --variables, --hidden, --seed,
// --devices, --mode, --param-device.
void AddModelFlags(std::map<std::string, FlagKind>* flags);

struct ModelChoice {
  // A forward graph the user brought (--graph with --loss) and how to train
  // it (graph/models/imported_model.h); null: the built-in `kind`.
  std::shared_ptr<const tensorflow::GraphDef> forward;
  ImportedModelOptions imported;
  std::string source;  // the forward graph's file, for messages
  ModelKind kind = ModelKind::kMlp;
  ModelOptions options;
  std::string optimizer = "sgd";
  float learning_rate = 0.1f;
  // --mode: "single" (default), "in-graph" (one tower per device),
  // "model-parallel" (consecutive layers over the devices) or
  // "between-async" / "between-sync" / "allreduce" (weft train --cluster:
  // the graph is built as "single", sync wrapping the optimizer in a
  // SyncReplicasOptimizer and allreduce in an AllReduceOptimizer, and
  // placed by the replica device setter or, allreduce, all on this worker;
  // graphgen refuses them).
  std::string mode = "single";
  // between-sync: gradients aggregated per step (0: every worker's) of
  // total_replicas workers.
  int replicas_to_aggregate = 0;
  int total_replicas = 1;
  // allreduce and hybrid (weft train --cluster, no ps): the worker tasks
  // of the ring and this one's rank (graph/builder/allreduce.h). hybrid
  // also splits the layers over `devices` (options.layer_devices, which
  // weft train qualifies with its task).
  std::vector<std::string> group_tasks;
  int rank = 0;
  std::vector<std::string> devices;  // canonical specs; empty: no requests
  std::string param_device;          // in-graph: default devices[0]
};

// True for the modes where every worker task builds its own copy of the
// graph: between-async, between-sync, allreduce and hybrid.
bool IsBetweenGraph(const ModelChoice& choice);
// True for the between-graph modes without ps tasks, whose workers average
// their gradients round a ring: allreduce and hybrid.
bool AveragesOverRing(const ModelChoice& choice);

// INVALID_ARGUMENT (a usage error) naming the bad flag. --model is required.
absl::StatusOr<ModelChoice> ParseModelFlags(const CommandLine& cl);

// --graph FILE --loss T [--init NODE]: the user's forward graph `forward`
// (read from `source`) with --optimizer, --lr and --mode single, in-graph
// (--devices, --param-device), model-parallel (--devices: the forward
// computation split by estimated cost), between-async, between-sync or
// allreduce.
// The model-building flags (--model, --hidden, --seed, --variables) and
// the other modes are INVALID_ARGUMENT naming the flag.
absl::StatusOr<ModelChoice> ParseImportedModelFlags(
    const CommandLine& cl, std::shared_ptr<const tensorflow::GraphDef> forward,
    const std::string& source);

// The training graph (models.h names) for `choice`.
absl::StatusOr<tensorflow::GraphDef> BuildModelGraph(const ModelChoice& choice);

// "mlp, batch 32, 64 features, 10 classes, adam (lr 0.01), resource variables"
std::string DescribeModel(const ModelChoice& choice);

}  // namespace weft

#endif  // WEFT_TOOLS_MODEL_FLAGS_H_
