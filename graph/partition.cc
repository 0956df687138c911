#include "graph/partition.h"

#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ops/framework/node_def_util.h"

namespace weft {
namespace {

void SetString(tensorflow::NodeDef* n, const char* attr, std::string v) {
  (*n->mutable_attr())[attr].set_s(std::move(v));
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
    for (Node* n : nodes) {
      if (n->assigned_device().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("cannot partition the graph: ", NodeLabel(n->def()),
                         " has no assigned device (run the placer first)"));
      }
      inputs_[n->id()].data.resize(n->num_inputs());
    }
    for (Node* n : nodes) {
      for (const Edge* e : n->in_edges()) Connect(*e);
    }
    for (Node* n : nodes) {
      tensorflow::NodeDef* def = Partition(n->assigned_device())->add_node();
      *def = n->def();
      def->clear_input();
      def->set_device(n->assigned_device());
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

  void Connect(const Edge& e) {
    const std::string& src_dev = e.src->assigned_device();
    const std::string& dst_dev = e.dst->assigned_device();
    Inputs& in = inputs_[e.dst->id()];
    if (src_dev == dst_dev) {
      if (e.IsControlEdge()) {
        in.control.push_back(absl::StrCat("^", e.src->name()));
      } else {
        in.data[e.dst_input] =
            e.src_output == 0 ? e.src->name()
                              : absl::StrCat(e.src->name(), ":", e.src_output);
      }
      return;
    }
    // One transfer per (tensor, destination device); for control edges the
    // "tensor" is the source node's dummy.
    const auto key = std::make_tuple(e.src->id(), e.src_output, dst_dev);
    auto it = received_.find(key);
    if (it == received_.end()) {
      it = received_.emplace(key, AddTransfer(e)).first;
    }
    if (e.IsControlEdge()) {
      in.control.push_back(absl::StrCat("^", it->second));
    } else {
      in.data[e.dst_input] = it->second;
    }
  }

  // Adds the _Send/_Recv pair for `e` (and the dummies of a control edge);
  // returns the node in dst's partition that consumers read.
  std::string AddTransfer(const Edge& e) {
    const std::string& src_dev = e.src->assigned_device();
    const std::string& dst_dev = e.dst->assigned_device();
    tensorflow::GraphDef* src_part = Partition(src_dev);
    tensorflow::GraphDef* dst_part = Partition(dst_dev);
    DataType dtype = DT_FLOAT;
    std::string send_input;
    if (e.IsControlEdge()) {
      tensorflow::NodeDef* dummy = src_part->add_node();
      dummy->set_name(NewName(absl::StrCat(e.src->name(), "/ctrl")));
      dummy->set_op("Const");
      dummy->set_device(src_dev);
      dummy->add_input(absl::StrCat("^", e.src->name()));
      (*dummy->mutable_attr())["dtype"].set_type(
          static_cast<tensorflow::DataType>(DT_FLOAT));
      tensorflow::TensorProto* value =
          (*dummy->mutable_attr())["value"].mutable_tensor();
      value->set_dtype(static_cast<tensorflow::DataType>(DT_FLOAT));
      value->mutable_tensor_shape()->add_dim()->set_size(0);
      send_input = dummy->name();
    } else {
      dtype = BaseType(e.src->output_type(e.src_output));
      send_input = e.src_output == 0
                       ? e.src->name()
                       : absl::StrCat(e.src->name(), ":", e.src_output);
    }
    const std::string tensor_name =
        absl::StrCat("edge_", e.id, "_", e.src->name());
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
    send->set_name(NewName(e.src->name()));
    send->set_op("_Send");
    send->add_input(send_input);
    (*send->mutable_attr())["T"].set_type(
        static_cast<tensorflow::DataType>(dtype));
    common(send);
    tensorflow::NodeDef* recv = dst_part->add_node();
    recv->set_name(NewName(e.src->name()));
    recv->set_op("_Recv");
    (*recv->mutable_attr())["tensor_type"].set_type(
        static_cast<tensorflow::DataType>(dtype));
    common(recv);
    if (!e.IsControlEdge()) return recv->name();
    tensorflow::NodeDef* identity = dst_part->add_node();
    identity->set_name(NewName(absl::StrCat(e.src->name(), "/ctrl")));
    identity->set_op("Identity");
    identity->set_device(dst_dev);
    identity->add_input(recv->name());
    (*identity->mutable_attr())["T"].set_type(
        static_cast<tensorflow::DataType>(DT_FLOAT));
    return identity->name();
  }

  const PartitionOptions& options_;
  const Graph& graph_;
  std::map<std::string, tensorflow::GraphDef> parts_;
  std::vector<Inputs> inputs_;  // by node id
  absl::flat_hash_map<std::tuple<int, int, std::string>, std::string> received_;
  absl::flat_hash_set<std::string> used_names_;
  int counter_ = 0;
};

}  // namespace

absl::StatusOr<std::map<std::string, tensorflow::GraphDef>> PartitionGraph(
    const PartitionOptions& options, const Graph& graph) {
  return Partitioner(options, graph).Run();
}

}  // namespace weft
