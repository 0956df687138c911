// Between-graph replication's placement: TensorFlow's
// `tf.compat.v1.train.replica_device_setter`, applied to a built graph.
//
//   ReplicaDeviceSetterOptions o;
//   o.ps_tasks = 2;
//   o.worker_device = "/job:worker/task:1";
//   o.strategy = PsStrategy::kGreedyBytes;
//   WEFT_RETURN_IF_ERROR(ApplyReplicaDeviceSetter(o, &graph_def));
//
// What each node requests afterwards (its NodeDef.device):
//   - A variable (VariableV2, VarHandleOp, ... the ops TensorFlow's setter
//     sends to ps) goes to "/job:<ps_job>/task:<k>", k chosen by the
//     strategy in node order: round-robin (TensorFlow's default), or the
//     ps task with the fewest variable bytes so far (TensorFlow's
//     GreedyLoadBalancingStrategy with its byte-size load function).
//   - A node colocated with a variable (an optimizer's slots, "_class"
//     "loc:@w") or consuming a variable's handle or reference directly (its
//     reads, assignments and updates) gets that variable's device, as
//     TensorFlow's `colocate_with` gives it at graph construction.
//   - Every other node goes to worker_device.
// As in TensorFlow, a request the graph already makes wins field by field:
// "/device:CPU:0" becomes worker_device + "/device:CPU:0", and a variable
// already pinned to another job (or to a ps task) keeps its request. A
// variable pinned to the worker's own job ("/job:worker": a local variable,
// such as SyncReplicasOptimizer's local step) gets worker_device.
//
// Errors (INVALID_ARGUMENT): ps_tasks < 1, a malformed worker_device, or a
// node's malformed device (naming the node). A failed call may leave some
// nodes' devices changed.
//
// Thread safety: mutates the GraphDef; the caller serialises access.
#ifndef WEFT_GRAPH_BUILDER_DEVICE_SETTER_H_
#define WEFT_GRAPH_BUILDER_DEVICE_SETTER_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/graph.pb.h"

namespace weft {

enum class PsStrategy { kRoundRobin, kGreedyBytes };

// "round-robin" / "greedy-bytes"; INVALID_ARGUMENT otherwise.
absl::Status ParsePsStrategy(absl::string_view text, PsStrategy* strategy);

struct ReplicaDeviceSetterOptions {
  int ps_tasks = 1;
  std::string ps_job = "ps";
  std::string worker_device = "/job:worker";
  PsStrategy strategy = PsStrategy::kRoundRobin;
};

absl::Status ApplyReplicaDeviceSetter(const ReplicaDeviceSetterOptions& options,
                                      tensorflow::GraphDef* graph);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_DEVICE_SETTER_H_
