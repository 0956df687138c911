// RunPlan: how one Run signature runs on a cluster, the master's half of the
// prepare pipeline. It calls the same stages a local session does
// (runtime/client_graph.h, graph/placer.h, graph/partition.h) over the
// devices of every task, and splits the result per task; each task's
// worker then makes its partition executable (runtime/executable_graph.h).
//
//   ClusterPlacement where;
//   where.devices = ...;               // every task's GetStatus answer
//   where.client_device = "/job:worker/replica:0/task:0/device:CPU:0";
//   WEFT_ASSIGN_OR_RETURN(RunPlan plan, PlanRun(full, signature, where));
//   for (auto& [task, graph_def] : plan.partitions) RegisterGraph(task, ...);
//   // per step: plan.feed_keys[i] carries feed i to plan.client_task;
//   // plan.fetch_keys[j] brings fetch j back from plan.client_task.
//
// Feeds and fetches become client-terminated _Recv and _Send nodes on the
// client device (TensorFlow's convention, so TensorFlow workers run the
// partitions too), keyed by the feed or fetch name: the master hands feeds
// to that task's RunGraph `send` and reads fetches from its `recv`. A
// tensor fetched twice is sent once. Unconstrained nodes go to the client
// device's task, as TensorFlow's master places them.
//
// Thread safety: reads `full`; plain values out.
#ifndef WEFT_DISTRIBUTED_RUN_PLAN_H_
#define WEFT_DISTRIBUTED_RUN_PLAN_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "proto/device_attributes.pb.h"
#include "proto/graph.pb.h"
#include "runtime/client_graph.h"

namespace weft {

struct ClusterPlacement {
  // Every device of every task, as GetStatus reports them (full names,
  // incarnations). The order is the placer's order of preference.
  std::vector<tensorflow::DeviceAttributes> devices;
  // Where feeds enter and fetches leave; one of `devices`.
  std::string client_device;
  bool allow_soft_placement = false;
  const OpRegistry* ops = nullptr;          // null: the global registries
  const KernelRegistry* kernels = nullptr;
};

struct RunPlan {
  // Each task's partition, keyed by task name ("/job:J/replica:R/task:T");
  // every NodeDef names its full device.
  std::map<std::string, tensorflow::GraphDef> partitions;
  std::string client_task;  // the task of the client device
  std::vector<FeedSpec> feeds;         // in signature order
  std::vector<std::string> feed_keys;  // rendezvous key of feed i
  std::vector<std::string> fetch_keys;  // rendezvous key of fetch j
};

// INVALID_ARGUMENT naming the feed, fetch, target or node (unknown names,
// devices no task has, a client device outside `where.devices`).
absl::StatusOr<RunPlan> PlanRun(const Graph& full,
                                const RunSignature& signature,
                                const ClusterPlacement& where);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RUN_PLAN_H_
