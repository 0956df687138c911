// Placement: choosing the device every node of a graph runs on, with
// TensorFlow's rules.
//
//   PlacerOptions options;
//   options.devices = {".../device:CPU:0", ".../device:CPU:1"};
//   options.kernels = &GlobalKernelRegistry();
//   WEFT_RETURN_IF_ERROR(PlaceGraph(options, graph.get()));
//   graph->FindNode("x")->assigned_device();   // a full device name
//
// The rules, applied per colocation group (graph/colocation.h: `_class`
// "loc:@node" and ref/resource consumers of a variable):
//   1. The group's requested device is the merge of its members' requested
//      devices (NodeDef.device, full or partial: "/device:CPU:1", "/job:ps",
//      "/gpu:0"). Two members asking for different values of one field
//      conflict: an error naming both nodes and their requests.
//   2. The group may only go to a device type on which every member has a
//      kernel for its attrs (asked of the KernelRegistry).
//   3. Of the devices matching the request and supported, the one agreeing
//      most with the default device (job, replica, task, type, id in that
//      order of importance) wins; ties go to the earlier device in
//      `devices`. So an unconstrained node lands on the default device and
//      "/device:CPU:1" lands on CPU:1 of the default task.
//   4. If nothing matches: with allow_soft_placement the request's device
//      type and index are dropped (then the rest of it) and a supported
//      device is chosen as in 3; without it the error names the node, its
//      request and why (no such device, or no kernel for the op and dtype on
//      that device type, listing what exists).
// Nodes are visited as TensorFlow's placer visits them (by id, generators
// last); the first member of a group to be visited fixes the group's device,
// using TensorFlow's heuristics when the device they suggest is allowed: a
// generator (no inputs, one output, e.g. Const) joins its consumers when they
// all sit on one device; Shape/Size/Rank, and an unrequested Identity between
// two nodes with equal requests, join their input.
// The result is deterministic: it depends only on the graph, the options
// and node ids.
//
// Every node is (re)placed: assignments already in `graph` are overwritten.
//
// Thread safety: mutates `graph` (each node's assigned device); the caller
// serialises access.
#ifndef WEFT_GRAPH_PLACER_H_
#define WEFT_GRAPH_PLACER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "ops/framework/kernel_registry.h"

namespace weft {

struct PlacerOptions {
  // Full device names to place on, in order of preference (ties in rule 3
  // go to the earlier one). Required.
  std::vector<std::string> devices;
  // Fills what requests leave open; empty means devices[0].
  std::string default_device;
  // Kernel availability (rule 2); null skips the check and accepts every
  // device type.
  const KernelRegistry* kernels = nullptr;
  // ConfigProto.allow_soft_placement.
  bool allow_soft_placement = false;
  // ConfigProto.log_device_placement: if set, called once per node, in id
  // order, with "name (Op): /job:.../device:CPU:1", followed by
  // SoftPlacementNote in parentheses for a node not where it asked to be:
  // "x (Neg): /job:.../device:CPU:0 (requested /cpu:9, soft-placed)".
  std::function<void(absl::string_view line)> log;
};

absl::Status PlaceGraph(const PlacerOptions& options, Graph* graph);

// Places on `devices` (the default first) with soft placement and no kernel
// check: requests are honoured where some device matches them.
// FAILED_PRECONDITION if `devices` is empty.
absl::Status PlaceGraph(const std::vector<std::string>& devices, Graph* graph);

// For a placed node whose assigned device does not satisfy its own request
// (NodeDef.device), "requested /cpu:9, soft-placed": soft placement moved it
// (no such device, no kernel there, or a colocated node's conflicting request
// won). Empty when the request is met or there was none. Without soft
// placement every placed node meets its request, so this is how users see
// what soft placement changed.
std::string SoftPlacementNote(const Node& node);

}  // namespace weft

#endif  // WEFT_GRAPH_PLACER_H_
