#include "runtime/executable_graph.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/graph_def_loader.h"
#include "graph/partition.h"
#include "runtime/core/device_name.h"
#include "runtime/multi_device_step.h"
#include "runtime/core/status.h"

namespace weft {

absl::StatusOr<std::unique_ptr<ExecutableGraph>> ExecutableGraph::Create(
    const ExecutableOptions& options, std::unique_ptr<Graph> placed) {
  auto exec =
      std::unique_ptr<ExecutableGraph>(new ExecutableGraph(options.inter_op_pool));
  // Devices by exact name: DeviceMgr::Lookup also accepts a short name
  // ("CPU:0"), which would take another task's device for one of ours.
  absl::flat_hash_map<std::string, Device*> by_name;
  for (Device* d : options.devices->devices()) {
    if (options.task_name.empty()) {
      by_name.emplace(d->name(), d);
      continue;
    }
    WEFT_ASSIGN_OR_RETURN(DeviceSpec spec, ParseDeviceSpec(d->name()));
    by_name.emplace(absl::StrCat(options.task_name, "/device:", spec.type.value_or(""),
                                 ":", spec.id.value_or(0)),
                    d);
  }
  ExecutorOptions exec_options;
  exec_options.kernels = options.kernels;
  exec_options.inter_op_pool = options.inter_op_pool;
  exec_options.kernel_cache = options.kernel_cache;
  exec_options.functions = options.functions;
  auto add_part = [&](std::unique_ptr<Graph> g,
                      const std::string& device) -> absl::Status {
    exec_options.device = by_name.at(device);
    exec_options.resource_mgr =
        options.resources ? options.resources(exec_options.device) : nullptr;
    WEFT_RETURN_IF_ERROR(OptimizeGraph(options.optimizations, g.get(),
                                       exec_options.device, *options.kernels));
    Part part;
    WEFT_ASSIGN_OR_RETURN(part.executor, Executor::Create(exec_options, *g));
    part.graph = std::move(g);
    exec->executors_.push_back(part.executor.get());
    exec->parts_.push_back(std::move(part));
    return absl::OkStatus();
  };
  const std::vector<Node*> nodes = placed->nodes();
  for (const Node* n : nodes) {
    if (by_name.contains(n->assigned_device())) continue;
    std::vector<std::string> names;
    for (const auto& [name, d] : by_name) names.push_back(name);
    std::sort(names.begin(), names.end());
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", n->name(), "' (", n->type_string(), ") is assigned to '",
        n->assigned_device(), "', a device this process does not have; its "
        "devices are: ", absl::StrJoin(names, ", ")));
  }
  const bool one_device =
      std::all_of(nodes.begin(), nodes.end(), [&](const Node* n) {
        return n->assigned_device() == nodes.front()->assigned_device();
      });
  if (one_device) {
    std::string device;
    if (!nodes.empty()) {
      device = nodes.front()->assigned_device();
    } else {
      for (const auto& [name, d] : by_name) {
        if (d == options.devices->default_device()) device = name;
      }
    }
    WEFT_RETURN_IF_ERROR(add_part(std::move(placed), device));
    return exec;
  }
  PartitionOptions partition;
  partition.incarnation = [&by_name](const std::string& name) -> uint64_t {
    return by_name.at(name)->attributes().incarnation();
  };
  WEFT_ASSIGN_OR_RETURN(auto parts, PartitionGraph(partition, *placed));
  if (options.receives_from_other_tasks) {
    WEFT_RETURN_IF_ERROR(CheckTransfersPair(
        parts, [&by_name](const std::string& send_device) {
          return by_name.contains(send_device);
        }));
  } else {
    WEFT_RETURN_IF_ERROR(CheckTransfersPair(parts));
  }
  for (auto& [device, def] : parts) {
    WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g,
                          ConvertGraphDefToGraph(def, *options.ops));
    for (Node* n : g->nodes()) n->set_assigned_device(device);
    WEFT_RETURN_IF_ERROR(add_part(std::move(g), device));
  }
  return exec;
}

void ExecutableGraph::RunAsync(const Executor::StepArgs& args,
                               Executor::DoneCallback done) const {
  if (executors_.size() == 1) {
    executors_.front()->RunAsync(args, std::move(done));
  } else {
    RunMultiDeviceStep(executors_, args, pool_, std::move(done));
  }
}

}  // namespace weft
