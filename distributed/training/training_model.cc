#include "distributed/training/training_model.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/builder/allreduce.h"
#include "graph/builder/optimizers.h"
#include "graph/builder/sync_replicas.h"
#include "runtime/core/status.h"

namespace weft {

namespace {

// The optimizer --optimizer and --lr name, wrapped for the mode: sync
// replicas aggregate on the ps, allreduce averages round the ring.
absl::StatusOr<std::unique_ptr<Optimizer>> ModeOptimizer(const TrainingModel& c) {
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> opt,
                        NewOptimizerByName(c.optimizer, c.learning_rate));
  if (c.mode == "between-sync") {
    SyncReplicasOptions sync;
    sync.total_num_replicas = c.total_replicas;
    sync.replicas_to_aggregate =
        c.replicas_to_aggregate > 0 ? c.replicas_to_aggregate : c.total_replicas;
    opt = std::make_unique<SyncReplicasOptimizer>(std::move(opt), sync);
  } else if (AveragesOverRing(c)) {
    AllReduceOptions all;
    all.group_tasks = c.group_tasks;
    all.rank = c.rank;
    opt = std::make_unique<AllReduceOptimizer>(std::move(opt), all);
  }
  return opt;
}

}  // namespace

bool IsBetweenGraph(const TrainingModel& c) {
  return c.mode == "between-async" || c.mode == "between-sync" || AveragesOverRing(c);
}

bool AveragesOverRing(const TrainingModel& c) {
  return c.mode == "allreduce" || c.mode == "hybrid";
}

absl::StatusOr<tensorflow::GraphDef> BuildModelGraph(const TrainingModel& c) {
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> opt, ModeOptimizer(c));
  if (c.forward != nullptr) {
    Scope root = Scope::NewRoot();
    const absl::Status built =
        c.mode == "in-graph"
            ? BuildImportedReplicatedTrainingGraph(root, *c.forward, c.imported, opt.get(),
                                                   c.devices, c.param_device)
                  .status()
            : BuildImportedTrainingGraph(root, *c.forward, c.imported, opt.get()).status();
    WEFT_RETURN_IF_ERROR(WithContext(built, c.source));
    return root.ToGraphDef();
  }
  Scope root = Scope::NewRoot();
  if (c.mode == "in-graph") {
    WEFT_RETURN_IF_ERROR(BuildReplicatedTrainingGraph(root, c.kind, c.options,
                                                      opt.get(), c.devices,
                                                      c.param_device)
                             .status());
  } else {
    // "single" on one named device pins everything there; model-parallel
    // has its layer_devices set.
    const Scope at = c.mode == "single" && !c.devices.empty()
                         ? root.WithDevice(c.devices[0])
                         : root;
    WEFT_RETURN_IF_ERROR(
        BuildTrainingGraph(at, c.kind, c.options, opt.get()).status());
  }
  return root.ToGraphDef();
}

std::string DescribeModel(const TrainingModel& c) {
  if (c.forward != nullptr) {
    return absl::StrCat(
        c.source, " (loss ", c.imported.loss, "), ",
        c.imported.train_op.empty()
            ? absl::StrCat(c.optimizer, " (lr ", c.learning_rate, ")")
            : absl::StrCat("its own train op ", c.imported.train_op),
        c.mode == "in-graph"
            ? absl::StrCat(", in-graph over ", absl::StrJoin(c.devices, ","),
                           " (parameters on ", c.param_device, ")")
        : c.mode == "model-parallel" || c.mode == "hybrid"
            ? absl::StrCat(", split by estimated cost over ", absl::StrJoin(c.devices, ","))
            : "");
  }
  return absl::StrCat(
      ModelKindName(c.kind), ", batch ", c.options.batch, ", ",
      c.options.image_rows * c.options.image_cols, " features, ",
      c.options.num_classes, " classes, ", c.optimizer, " (lr ",
      c.learning_rate, "), ",
      c.options.variable_kind == VariableKind::kRef ? "ref" : "resource",
      " variables",
      c.mode == "in-graph"
          ? absl::StrCat(", in-graph over ", c.devices.size(),
                         " devices (", absl::StrJoin(c.devices, ","),
                         "; parameters on ", c.param_device, ")")
      : c.mode == "model-parallel" || c.mode == "hybrid"
          ? absl::StrCat(", model-parallel over ", c.devices.size(),
                         " devices (", absl::StrJoin(c.devices, ","), ")")
      : c.devices.empty() ? std::string()
                          : absl::StrCat(", on ", c.devices[0]));
}

}  // namespace weft
