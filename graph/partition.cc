#include "graph/partition.h"

#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/partition_loops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/rendezvous.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using partition_internal::LoopFrames;

void SetString(tensorflow::NodeDef* n, const char* attr, std::string v) {
  (*n->mutable_attr())[attr].set_s(std::move(v));
}

void SetType(tensorflow::NodeDef* n, const char* attr, DataType t) {
  (*n->mutable_attr())[attr].set_type(static_cast<tensorflow::DataType>(t));
}

// A float Const of shape [0]: the token of control transfers and loops.
void MakeDummyConst(tensorflow::NodeDef* n) {
  n->set_op("Const");
  SetType(n, "dtype", DT_FLOAT);
  tensorflow::TensorProto* value = (*n->mutable_attr())["value"].mutable_tensor();
  value->set_dtype(static_cast<tensorflow::DataType>(DT_FLOAT));
  value->mutable_tensor_shape()->add_dim()->set_size(0);
}

class Partitioner {
 public:
  Partitioner(const PartitionOptions& options, const Graph& graph)
      : options_(options), graph_(graph) {
    for (Node* n : graph.nodes()) used_names_.insert(n->name());
  }

  absl::StatusOr<std::map<std::string, tensorflow::GraphDef>> Run() {
    const std::vector<Node*> nodes = graph_.nodes();
    inputs_.resize(graph_.num_node_ids());
    device_.resize(graph_.num_node_ids());
    for (Node* n : nodes) {
      if (n->assigned_device().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("cannot partition the graph: ", NodeLabel(n->def()),
                         " has no assigned device (run the placer first)"));
      }
      inputs_[n->id()].data.resize(n->num_inputs());
      device_[n->id()] = n->assigned_device();
    }
    WEFT_ASSIGN_OR_RETURN(frames_, LoopFrames::Find(graph_));
    if (frames_.has_loops()) {
      WEFT_RETURN_IF_ERROR(
          partition_internal::ColocateLoopPlumbing(graph_, &device_));
    }
    for (Node* n : nodes) {
      for (const Edge* e : n->in_edges()) {
        WEFT_RETURN_IF_ERROR(Connect(*e));
      }
      AddReadControls(inputs_[n->id()]);
    }
    for (Node* n : nodes) {
      const std::string& device = device_[n->id()];
      tensorflow::NodeDef* def = Partition(device)->add_node();
      *def = n->def();
      def->clear_input();
      def->set_device(device);
      const Inputs& in = inputs_[n->id()];
      for (const std::string& s : in.data) def->add_input(s);
      for (const std::string& s : in.control) def->add_input(s);
    }
    for (auto& [device, part] : parts_) {
      *part.mutable_versions() = graph_.versions();
      *part.mutable_library() = graph_.library();
    }
    return std::move(parts_);
  }

 private:
  struct Inputs {
    std::vector<std::string> data;  // by input slot
    std::vector<std::string> control;
    // The _Recvs of reference inputs from other devices, and the node's
    // other inputs in its own partition (node names, no '^').
    std::vector<std::string> ref_recvs;
    std::vector<std::string> read_controls;
  };

  tensorflow::GraphDef* Partition(const std::string& device) {
    return &parts_[device];
  }

  std::string NewName(absl::string_view prefix) {
    for (;;) {
      std::string name = absl::StrCat(prefix, "/_", counter_++);
      if (used_names_.insert(name).second) return name;
    }
  }

  // Whether `e` carries a reference (a ref variable's output): its
  // consumer reads the variable, so the read must wait for the consumer's
  // other inputs (AddReadControls).
  static bool IsRefEdge(const Edge& e) {
    return !e.IsControlEdge() && IsRefType(e.src->output_type(e.src_output));
  }

  absl::Status Connect(const Edge& e) {
    const std::string& src_dev = device_[e.src->id()];
    const std::string& dst_dev = device_[e.dst->id()];
    Inputs& in = inputs_[e.dst->id()];
    const bool ref = IsRefEdge(e);
    if (src_dev == dst_dev) {
      if (e.IsControlEdge()) {
        in.control.push_back(absl::StrCat("^", e.src->name()));
      } else {
        in.data[e.dst_input] =
            e.src_output == 0 ? e.src->name()
                              : absl::StrCat(e.src->name(), ":", e.src_output);
      }
      if (!ref) in.read_controls.push_back(e.src->name());
      return absl::OkStatus();
    }
    WEFT_ASSIGN_OR_RETURN(std::string received,
                          Receive(*e.src, e.src_output, dst_dev, e.id, ref));
    if (e.IsControlEdge()) {
      in.control.push_back(absl::StrCat("^", received));
    } else {
      in.data[e.dst_input] = received;
    }
    if (ref) {
      in.ref_recvs.push_back(received);
    } else {
      in.read_controls.push_back(received);
    }
    return absl::OkStatus();
  }

  // TensorFlow's read control: a value sent across tasks is encoded when the
  // receiving task asks for it, so a _Recv of a reference that a node reads
  // after its other inputs (a read_value() under control_dependencies on an
  // update) must not ask before them. Each such _Recv waits for every other
  // input of its consumer in the consumer's partition.
  void AddReadControls(const Inputs& in) {
    for (const std::string& recv : in.ref_recvs) {
      tensorflow::NodeDef* def = recv_defs_.at(recv);
      for (const std::string& c : in.read_controls) {
        def->add_input(absl::StrCat("^", c));
      }
    }
  }

  // The node in `dst_dev`'s partition that yields output `output` of `src`
  // (kControlSlot: src's completion), adding the transfer once per (tensor,
  // destination device), or once per edge for a reference (`ref`: each
  // read waits for its own consumer's inputs). `edge_id` names it.
  absl::StatusOr<std::string> Receive(const Node& src, int output,
                                      const std::string& dst_dev,
                                      int edge_id, bool ref = false) {
    const auto key = std::make_tuple(src.id(), output, dst_dev);
    auto it = received_.find(key);
    if (!ref && it != received_.end()) return it->second;
    // Inside a while loop the receiving side needs the loop's iterations
    // too: its _Recv hangs off a control loop (see ControlLoop) so it runs
    // once per iteration, in the frame and iteration the _Send runs in.
    std::string pivot;
    const std::string& frame = frames_.OutputFrame(src);
    if (!frame.empty()) {
      WEFT_ASSIGN_OR_RETURN(pivot, ControlLoop(frame, dst_dev));
    }
    std::string name = AddTransfer(src, output, dst_dev, edge_id, pivot);
    if (!ref) received_.emplace(key, name);
    return name;
  }

  // The Merge of the control loop of `frame` on `device`, made on first use:
  // TensorFlow's construction of a loop that follows a loop running on
  // another device, iteration by iteration:
  //   Enter(dummy, frame) -> Merge(Enter, NextIteration) -> Switch(Merge,
  //   LoopCond received from the loop's device) -> NextIteration(Switch:1)
  // The Enter's input is a dummy Const for a top-level loop, the control
  // loop of the parent frame on the same device for a nested one.
  absl::StatusOr<std::string> ControlLoop(const std::string& frame,
                                          const std::string& device) {
    const auto key = std::make_pair(frame, device);
    auto it = control_loops_.find(key);
    if (it != control_loops_.end()) return it->second;
    const LoopFrames::Frame* info = frames_.frame(frame);
    if (info == nullptr || info->loop_cond == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot partition: while loop '", frame,
          "' spans devices but has no LoopCond to steer the other devices"));
    }
    tensorflow::GraphDef* part = Partition(device);
    auto add = [&](const char* op) {
      tensorflow::NodeDef* n = part->add_node();
      n->set_name(NewName(absl::StrCat(frame, "/_cloop")));
      n->set_op(op);
      n->set_device(device);
      if (std::string(op) != "Const") SetType(n, "T", DT_FLOAT);
      return n;
    };
    std::string enter_input;
    if (info->parent.empty()) {
      tensorflow::NodeDef* dummy = add("Const");
      MakeDummyConst(dummy);
      enter_input = dummy->name();
    } else {
      WEFT_ASSIGN_OR_RETURN(enter_input, ControlLoop(info->parent, device));
    }
    tensorflow::NodeDef* enter = add("Enter");
    enter->add_input(enter_input);
    SetString(enter, "frame_name", frame);
    (*enter->mutable_attr())["is_constant"].set_b(false);
    (*enter->mutable_attr())["parallel_iterations"].set_i(
        info->parallel_iterations);
    tensorflow::NodeDef* merge = add("Merge");
    tensorflow::NodeDef* next = add("NextIteration");
    tensorflow::NodeDef* sw = add("Switch");
    merge->add_input(enter->name());
    merge->add_input(next->name());
    (*merge->mutable_attr())["N"].set_i(2);
    next->add_input(absl::StrCat(sw->name(), ":1"));
    const std::string merge_name = merge->name();
    // Registered before the LoopCond's transfer, which hangs off it.
    control_loops_.emplace(key, merge_name);
    const Node& cond = *info->loop_cond;
    std::string pivot = cond.name();
    if (device_[cond.id()] != device) {
      WEFT_ASSIGN_OR_RETURN(pivot, Receive(cond, 0, device, /*edge_id=*/-1));
    }
    // Adding nodes to a GraphDef keeps pointers to earlier ones valid.
    sw->add_input(merge_name);
    sw->add_input(pivot);
    return merge_name;
  }

  // Adds the _Send/_Recv pair for output `output` of `src` (kControlSlot:
  // a control edge, carried by dummies) to `dst_dev`; the _Recv gets a
  // control input on `pivot` if not empty. Returns the node in dst's
  // partition that consumers read.
  std::string AddTransfer(const Node& src, int output,
                          const std::string& dst_dev, int edge_id,
                          const std::string& pivot) {
    const bool control = output == kControlSlot;
    const std::string& src_dev = device_[src.id()];
    tensorflow::GraphDef* src_part = Partition(src_dev);
    tensorflow::GraphDef* dst_part = Partition(dst_dev);
    DataType dtype = DT_FLOAT;
    std::string send_input;
    if (control) {
      tensorflow::NodeDef* dummy = src_part->add_node();
      dummy->set_name(NewName(absl::StrCat(src.name(), "/ctrl")));
      MakeDummyConst(dummy);
      dummy->set_device(src_dev);
      dummy->add_input(absl::StrCat("^", src.name()));
      send_input = dummy->name();
    } else {
      dtype = BaseType(src.output_type(output));
      send_input =
          output == 0 ? src.name() : absl::StrCat(src.name(), ":", output);
    }
    // Edge ids name ordinary transfers as TensorFlow does; a control loop's
    // LoopCond transfer has no edge of its own (edge_id -1).
    const std::string tensor_name =
        edge_id >= 0 ? absl::StrCat("edge_", edge_id, "_", src.name())
                     : absl::StrCat("loopcond_", src.name());
    const int64_t incarnation =
        options_.incarnation
            ? static_cast<int64_t>(options_.incarnation(src_dev))
            : 0;
    auto common = [&](tensorflow::NodeDef* n) {
      n->set_device(n->op() == "_Send" ? src_dev : dst_dev);
      SetString(n, "tensor_name", tensor_name);
      SetString(n, "send_device", src_dev);
      (*n->mutable_attr())["send_device_incarnation"].set_i(incarnation);
      SetString(n, "recv_device", dst_dev);
      (*n->mutable_attr())["client_terminated"].set_b(false);
    };
    tensorflow::NodeDef* send = src_part->add_node();
    send->set_name(NewName(src.name()));
    send->set_op("_Send");
    send->add_input(send_input);
    SetType(send, "T", dtype);
    common(send);
    tensorflow::NodeDef* recv = dst_part->add_node();
    recv->set_name(NewName(src.name()));
    recv->set_op("_Recv");
    SetType(recv, "tensor_type", dtype);
    common(recv);
    if (!pivot.empty()) recv->add_input(absl::StrCat("^", pivot));
    recv_defs_[recv->name()] = recv;
    if (!control) return recv->name();
    tensorflow::NodeDef* identity = dst_part->add_node();
    identity->set_name(NewName(absl::StrCat(src.name(), "/ctrl")));
    identity->set_op("Identity");
    identity->set_device(dst_dev);
    identity->add_input(recv->name());
    SetType(identity, "T", DT_FLOAT);
    return identity->name();
  }

  const PartitionOptions& options_;
  const Graph& graph_;
  std::map<std::string, tensorflow::GraphDef> parts_;
  std::vector<Inputs> inputs_;  // by node id
  absl::flat_hash_map<std::tuple<int, int, std::string>, std::string> received_;
  // Every _Recv added, by name (stable: a GraphDef's nodes never move).
  absl::flat_hash_map<std::string, tensorflow::NodeDef*> recv_defs_;
  std::vector<std::string> device_;  // by node id, after loop colocation
  LoopFrames frames_;
  // (frame, device) -> the Merge of that device's control loop.
  std::map<std::pair<std::string, std::string>, std::string> control_loops_;
  absl::flat_hash_set<std::string> used_names_;
  int counter_ = 0;
};

}  // namespace

absl::StatusOr<std::map<std::string, tensorflow::GraphDef>> PartitionGraph(
    const PartitionOptions& options, const Graph& graph) {
  return Partitioner(options, graph).Run();
}

namespace {

// The rendezvous key a _Send or _Recv node uses, at frame and iteration 0:0
// (both ends of a transfer run in the same ones). A missing attr reads as
// empty here; the kernel reports it when it is built.
std::string TransferKey(const tensorflow::NodeDef& n, RendezvousKey* key) {
  int64_t incarnation = 0;
  (void)GetNodeAttr(n, "send_device", &key->src_device);
  (void)GetNodeAttr(n, "send_device_incarnation", &incarnation);
  (void)GetNodeAttr(n, "recv_device", &key->dst_device);
  (void)GetNodeAttr(n, "tensor_name", &key->tensor_name);
  key->src_incarnation = static_cast<uint64_t>(incarnation);
  return key->ToString();
}

}  // namespace

absl::Status CheckTransfersPair(
    const std::map<std::string, tensorflow::GraphDef>& parts,
    const std::function<bool(const std::string& send_device)>& checked) {
  absl::flat_hash_set<std::string> sent;
  for (const auto& [device, def] : parts) {
    for (const tensorflow::NodeDef& n : def.node()) {
      RendezvousKey key;
      if (n.op() == "_Send") sent.insert(TransferKey(n, &key));
    }
  }
  for (const auto& [device, def] : parts) {
    for (const tensorflow::NodeDef& n : def.node()) {
      if (n.op() != "_Recv") continue;
      bool client_terminated = false;
      (void)GetNodeAttr(n, "client_terminated", &client_terminated);
      if (client_terminated) continue;
      RendezvousKey key;
      if (sent.contains(TransferKey(n, &key))) continue;
      if (checked != nullptr && !checked(key.src_device)) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "_Recv node '", n.name(), "' on ", device, " waits for tensor '",
          key.tensor_name, "' from ", key.src_device, " (incarnation ",
          key.src_incarnation, ") to ", key.dst_device,
          ", but no _Send in this step sends it, so the step would wait "
          "forever; check the graph's _Send/_Recv attrs, or fetch or target "
          "the _Send's node too"));
    }
  }
  return absl::OkStatus();
}

}  // namespace weft
