#include "distributed/training/worker_graph.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/builder/allreduce.h"
#include "graph/builder/device_setter.h"
#include "runtime/core/device_name.h"
#include "runtime/core/status.h"

namespace weft {

std::vector<std::string> AddReadinessChecks(tensorflow::GraphDef* graph) {
  std::vector<std::string> checks;
  const int n = graph->node_size();
  for (int i = 0; i < n; ++i) {
    const tensorflow::NodeDef& var = graph->node(i);
    const bool resource = var.op() == "VarHandleOp";
    if (!resource && var.op() != "VariableV2") continue;
    if (absl::StartsWith(var.device(), kLocalJob)) continue;
    tensorflow::NodeDef check;
    check.set_name(absl::StrCat(kReadyPrefix, var.name()));
    check.set_op(resource ? "VarIsInitializedOp" : "IsVariableInitialized");
    check.add_input(var.name());
    check.set_device(var.device());
    if (!resource) {
      auto it = var.attr().find("dtype");
      if (it != var.attr().end()) (*check.mutable_attr())["dtype"] = it->second;
    }
    checks.push_back(check.name());
    *graph->add_node() = std::move(check);
  }
  return checks;
}

std::string GlobalStepRead(const tensorflow::GraphDef& graph) {
  for (const auto& n : graph.node()) {
    if (n.name() == "global_step/Read" || n.name() == "global_step/read") {
      return n.name();
    }
  }
  return "";
}

namespace {

// The ring (every worker task, in index order) and this worker's rank.
void SetRing(const ClusterSpec& cluster, const TaskId& task, TrainingModel* model) {
  const std::vector<int> all = cluster.TaskIndices("worker");
  for (size_t k = 0; k < all.size(); ++k) {
    model->group_tasks.push_back(absl::StrCat("/job:worker/replica:0/task:", all[k]));
    if (all[k] == task.index) model->rank = static_cast<int>(k);
  }
}

// Ring: the whole model on this worker (hybrid: its layers where they
// are), its saver, and the chief's broadcast.
absl::Status PlaceOnRing(const WorkerContext& w, const std::string& worker_device,
                         WorkerGraph* g) {
  for (tensorflow::NodeDef& n : *g->graph.mutable_node()) {
    if (n.device().empty()) n.set_device(worker_device);
  }
  if (!w.o.checkpoint_dir.empty()) {
    WEFT_ASSIGN_OR_RETURN(g->saver, AddSaver(&g->graph));  // this copy, whole
  }
  AllReduceOptions group;
  group.group_tasks = g->model.group_tasks;
  group.rank = g->model.rank;
  return AddBroadcastFromRankZero(group, &g->graph);
}

// Between-graph: variables over the ps tasks, the rest on this worker, the
// saver, the readiness checks and the workers' step counters.
absl::Status PlaceOverPs(const WorkerContext& w, const std::string& worker_device,
                         WorkerGraph* g) {
  const std::vector<int> ps = w.o.cluster.TaskIndices("ps");
  ReplicaDeviceSetterOptions setter;
  setter.ps_tasks = static_cast<int>(ps.size());
  setter.worker_device = worker_device;
  setter.strategy = w.o.strategy;
  WEFT_RETURN_IF_ERROR(ApplyReplicaDeviceSetter(setter, &g->graph));
  if (!w.o.checkpoint_dir.empty()) {
    WEFT_ASSIGN_OR_RETURN(g->saver, AddSaver(&g->graph, kLocalJob));
  }
  g->ready_checks = AddReadinessChecks(&g->graph);
  const std::vector<int> tasks = w.o.cluster.TaskIndices("worker");
  // Sync: a worker's count moves once its gradients are in (the control
  // inputs of the token dequeue), so a step that times out can tell whose
  // gradients it waited for.
  std::vector<std::string> after;
  if (w.sync) {
    for (const tensorflow::NodeDef& n : g->graph.node()) {
      if (n.name() != "sync_token_q_Dequeue") continue;
      for (const std::string& in : n.input()) {
        if (absl::StartsWith(in, "^")) after.push_back(in);
      }
    }
    if (after.empty()) {
      return absl::InternalError("the sync graph has no 'sync_token_q_Dequeue' "
                                 "waiting for the gradients");
    }
  }
  g->progress = AddWorkerProgress(&g->graph,
                                  *std::max_element(tasks.begin(), tasks.end()) + 1,
                                  absl::StrCat("/job:ps/task:", ps.front()), after);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<WorkerGraph> BuildWorkerGraph(const WorkerContext& w) {
  WorkerGraph g;
  g.model = w.o.model;
  g.model.mode = w.mode;
  g.workers = static_cast<int>(w.o.cluster.TaskIndices("worker").size());
  g.model.total_replicas = g.workers;
  g.model.replicas_to_aggregate = w.o.replicas_to_aggregate;
  g.to_aggregate = w.o.replicas_to_aggregate > 0 ? w.o.replicas_to_aggregate : g.workers;
  if (w.ring) SetRing(w.o.cluster, w.task, &g.model);
  const std::string worker_device = absl::StrCat("/job:worker/task:", w.task.index);
  if (w.o.mode == ReplicationMode::kHybrid) {
    // The layers (a built-in model's) or the pieces (a user's graph split
    // by cost) go to this task's own devices.
    for (std::vector<std::string>* devices :
         {&g.model.options.layer_devices, &g.model.imported.layer_devices}) {
      for (std::string& d : *devices) {
        const DeviceSpec spec = ParseDeviceSpec(d).value_or(DeviceSpec());
        if (spec.type == "CPU" && spec.id) g.cpus = std::max(g.cpus, *spec.id + 1);
        d = worker_device + d;  // "/job:worker/task:I/device:CPU:1"
      }
    }
  }
  WEFT_ASSIGN_OR_RETURN(g.graph, BuildModelGraph(g.model));
  WEFT_RETURN_IF_ERROR(w.ring ? PlaceOnRing(w, worker_device, &g)
                              : PlaceOverPs(w, worker_device, &g));
  g.global_step = GlobalStepRead(g.graph);
  if (g.global_step.empty()) {
    return absl::InternalError("the model graph has no global_step read");
  }
  for (const tensorflow::NodeDef& n : g.graph.node()) {
    g.has_accuracy |= n.name() == "accuracy";
  }
  return g;
}

}  // namespace weft
