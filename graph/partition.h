// Partitioning: splitting a placed Graph into one GraphDef per device, with
// _Send/_Recv pairs on every edge that crosses devices (TensorFlow's
// graph_partition).
//
//   PartitionOptions options;
//   options.incarnation = [&](const std::string& d) { return inc_of[d]; };
//   WEFT_ASSIGN_OR_RETURN(auto parts, PartitionGraph(options, *graph));
//   for (auto& [device, graph_def] : parts) ...   // one executor per device
//
// What it writes:
//   - every node goes to the partition of its assigned device, its NodeDef's
//     `device` set to that full name;
//   - a data edge src:i -> dst crossing devices becomes
//       src:i -> _Send   (in src's partition)
//       _Recv -> dst     (in dst's partition)
//     with TensorFlow's attrs: T / tensor_type (the edge's non-ref dtype),
//     tensor_name "edge_<edge id>_<src name>", send_device,
//     send_device_incarnation, recv_device, client_terminated=false. One
//     transfer per (tensor, destination device): several consumers on one
//     device share a _Recv;
//   - except for a reference (a ref variable's output read on another
//     device): each such edge gets its own _Recv, which waits for every
//     other input of its consumer (TensorFlow's read control). A tensor
//     crossing tasks is encoded when the receiver asks for it, and a ref
//     variable is updated in place, so a read ordered after an update
//     (read_value() under control_dependencies) sees the update;
//   - a control edge src -> dst crossing devices becomes
//       ^src -> dummy Const (float, shape [0]) -> _Send   (src's partition)
//       _Recv -> Identity -> ^dst                        (dst's partition)
//     so dst still waits for src, and deadness (an untaken Switch branch)
//     crosses too;
//   - while loops (TensorFlow's AddControlFlow): loop plumbing first moves
//     next to the data it steers (a Switch to its data input's device, an
//     Exit to its input's, a NextIteration and a non-ref Enter to their first
//     consumer's), so a loop variable's back edge stays on one device. Then
//     every device that receives a value produced inside a loop's frame
//     gets a control loop for that frame:
//       Const (or the parent frame's control loop) -> Enter -> Merge ->
//       Switch(Merge, the LoopCond, received) -> NextIteration -> Merge
//     and each _Recv of the frame there gets a control input on its Merge,
//     so it runs once per iteration, in the frame and iteration its _Send
//     runs in (the rendezvous key ends in frame_id:iter_id). A loop that
//     spans devices without a LoopCond is INVALID_ARGUMENT;
//   - new nodes are named "<prefix>/_<n>" (as a local TensorFlow session
//     does; control loops "<frame>/_cloop/_<n>"), unique in the graph.
// Every partition gets the graph's versions and function library.
//
// No deadlock by construction: a _Send never waits and a _Recv is
// asynchronous, so no executor blocks on another; the partitions together
// have exactly the dependencies of the original DAG.
//
// Thread safety: reads `graph` only.
#ifndef WEFT_GRAPH_PARTITION_H_
#define WEFT_GRAPH_PARTITION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "proto/graph.pb.h"

namespace weft {

struct PartitionOptions {
  // The incarnation of a device (DeviceAttributes.incarnation), written as
  // send_device_incarnation; null writes 0.
  std::function<uint64_t(const std::string& device)> incarnation;
};

// Partitions keyed by full device name. INVALID_ARGUMENT naming the node if
// some node has no assigned device.
absl::StatusOr<std::map<std::string, tensorflow::GraphDef>> PartitionGraph(
    const PartitionOptions& options, const Graph& graph);

// OK if every _Recv in `parts` that is not client-terminated has a _Send
// among them with the same tensor_name, send_device,
// send_device_incarnation and recv_device, i.e. the transfers of a step that
// runs all of `parts` pair up. PartitionGraph's output always does; a graph
// that already held _Send/_Recv nodes (written by a user, or a _Send pruned
// away) may not, and its _Recv would wait forever: INVALID_ARGUMENT naming
// the _Recv, the tensor and both devices. With `checked`, only the _Recvs
// whose send_device it accepts are checked (a worker's partitions also
// receive from other tasks, which its step rendezvous serves).
absl::Status CheckTransfersPair(
    const std::map<std::string, tensorflow::GraphDef>& parts,
    const std::function<bool(const std::string& send_device)>& checked =
        nullptr);

}  // namespace weft

#endif  // WEFT_GRAPH_PARTITION_H_
