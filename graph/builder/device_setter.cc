#include "graph/builder/device_setter.h"

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/device_name.h"
#include "runtime/core/status.h"
#include "runtime/core/types.h"

namespace weft {
namespace {

// TensorFlow's STANDARD_PS_OPS: what holds state that workers share.
const absl::flat_hash_set<std::string>& PsOps() {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "Variable",          "VariableV2",
      "AutoReloadVariable", "VarHandleOp",
      "MutableHashTable",  "MutableHashTableV2",
      "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2",
      "MutableDenseHashTable",     "MutableDenseHashTableV2"};
  return *ops;
}

// The fields `request` leaves unset, filled from `fill`.
DeviceSpec FillFrom(DeviceSpec request, const DeviceSpec& fill) {
  if (!request.job) request.job = fill.job;
  if (!request.replica) request.replica = fill.replica;
  if (!request.task) request.task = fill.task;
  if (!request.type) request.type = fill.type;
  if (!request.id) request.id = fill.id;
  return request;
}

// The node an input names ("w", "w:0"); empty for a control input.
// The nodes a node's "_class" attr colocates it with.
std::vector<std::string> ColocatedWith(const tensorflow::NodeDef& node) {
  std::vector<std::string> out;
  auto it = node.attr().find("_class");
  if (it == node.attr().end()) return out;
  for (const std::string& s : it->second.list().s()) {
    absl::string_view name = s;
    if (absl::ConsumePrefix(&name, "loc:@")) out.emplace_back(name);
  }
  return out;
}

int64_t VariableBytes(const tensorflow::NodeDef& node) {
  auto dtype = node.attr().find("dtype");
  auto shape = node.attr().find("shape");
  if (dtype == node.attr().end() || shape == node.attr().end()) return 0;
  const tensorflow::TensorShapeProto& s = shape->second.shape();
  if (s.unknown_rank()) return 0;
  int64_t n = 1;
  for (const auto& d : s.dim()) {
    if (d.size() < 0) return 0;  // unknown: no load known
    if (d.size() > 0 && n > (int64_t{1} << 50) / d.size()) return int64_t{1} << 50;
    n *= d.size();
  }
  return n * static_cast<int64_t>(DataTypeSize(BaseType(dtype->second.type())));
}

class Setter {
 public:
  Setter(const ReplicaDeviceSetterOptions& options, tensorflow::GraphDef* graph)
      : options_(options), graph_(graph), load_(options.ps_tasks, 0) {
    for (int i = 0; i < graph->node_size(); ++i) {
      index_[graph->node(i).name()] = i;
    }
  }

  absl::Status Run() {
    WEFT_ASSIGN_OR_RETURN(worker_, ParseDeviceSpec(options_.worker_device));
    // Variables first, in node order (the strategy's order), then the rest,
    // which may follow a variable defined after them.
    for (int i = 0; i < graph_->node_size(); ++i) {
      if (PsOps().contains(graph_->node(i).op())) {
        WEFT_RETURN_IF_ERROR(PlaceVariable(i, 0));
      }
    }
    for (int i = 0; i < graph_->node_size(); ++i) {
      tensorflow::NodeDef* node = graph_->mutable_node(i);
      if (PsOps().contains(node->op())) continue;
      const std::string* variable_device = ColocatedVariableDevice(*node);
      if (variable_device != nullptr) {
        node->set_device(*variable_device);
        continue;
      }
      WEFT_ASSIGN_OR_RETURN(DeviceSpec request, Request(*node));
      node->set_device(FillFrom(request, worker_).ToString());
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<DeviceSpec> Request(const tensorflow::NodeDef& node) const {
    absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(node.device());
    if (!spec.ok()) {
      return WithContext(spec.status(), absl::StrCat("node '", node.name(), "'"));
    }
    return spec;
  }

  // The device of the variable `node` is colocated with or reads, or null.
  const std::string* ColocatedVariableDevice(const tensorflow::NodeDef& node) {
    for (const std::string& peer : ColocatedWith(node)) {
      auto it = placed_.find(peer);
      if (it != placed_.end()) return &it->second;
    }
    for (const std::string& input : node.input()) {
      if (absl::StartsWith(input, "^")) continue;  // only data inputs count
      auto it = placed_.find(InputNodeName(input));
      if (it != placed_.end()) return &it->second;
    }
    return nullptr;
  }

  absl::Status PlaceVariable(int i, int depth) {
    tensorflow::NodeDef* node = graph_->mutable_node(i);
    if (placed_.contains(node->name())) return absl::OkStatus();
    // A slot follows its primary variable.
    for (const std::string& peer : ColocatedWith(*node)) {
      auto it = index_.find(peer);
      if (it == index_.end() || !PsOps().contains(graph_->node(it->second).op()) ||
          depth > 8) {
        continue;
      }
      WEFT_RETURN_IF_ERROR(PlaceVariable(it->second, depth + 1));
      node->set_device(placed_[peer]);
      placed_[node->name()] = node->device();
      return absl::OkStatus();
    }
    WEFT_ASSIGN_OR_RETURN(DeviceSpec request, Request(*node));
    DeviceSpec ps;
    ps.job = options_.ps_job;
    if (!request.job || *request.job == options_.ps_job) {
      if (!request.task) ps.task = Choose(*node);
      request = FillFrom(request, ps);
    } else if (request.job == worker_.job) {
      request = FillFrom(request, worker_);  // a local variable
    }
    node->set_device(request.ToString());
    placed_[node->name()] = node->device();
    return absl::OkStatus();
  }

  int Choose(const tensorflow::NodeDef& node) {
    int task = 0;
    if (options_.strategy == PsStrategy::kRoundRobin) {
      task = next_++ % options_.ps_tasks;
    } else {
      for (int k = 1; k < options_.ps_tasks; ++k) {
        if (load_[k] < load_[task]) task = k;
      }
    }
    load_[task] += VariableBytes(node);
    return task;
  }

  const ReplicaDeviceSetterOptions& options_;
  tensorflow::GraphDef* const graph_;
  DeviceSpec worker_;
  absl::flat_hash_map<std::string, int> index_;
  absl::flat_hash_map<std::string, std::string> placed_;  // variables
  std::vector<int64_t> load_;  // bytes per ps task
  int next_ = 0;
};

}  // namespace

absl::Status ParsePsStrategy(absl::string_view text, PsStrategy* strategy) {
  if (text == "round-robin") {
    *strategy = PsStrategy::kRoundRobin;
  } else if (text == "greedy-bytes") {
    *strategy = PsStrategy::kGreedyBytes;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown ps strategy '", text, "' (round-robin or greedy-bytes)"));
  }
  return absl::OkStatus();
}

absl::Status ApplyReplicaDeviceSetter(const ReplicaDeviceSetterOptions& options,
                                      tensorflow::GraphDef* graph) {
  if (options.ps_tasks < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ReplicaDeviceSetterOptions.ps_tasks is ", options.ps_tasks,
        "; between-graph replication needs at least one ps task"));
  }
  if (options.ps_job.empty()) {
    return absl::InvalidArgumentError("ReplicaDeviceSetterOptions.ps_job is empty");
  }
  return Setter(options, graph).Run();
}

}  // namespace weft
