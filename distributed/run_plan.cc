#include "distributed/run_plan.h"

#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "distributed/task_name.h"
#include "graph/graph_def_loader.h"
#include "graph/partition.h"
#include "graph/placer.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/rendezvous.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// Makes `node` a client-terminated transfer on the client device.
void MakeClientTransfer(const std::string& op, const std::string& tensor_name,
                        const std::string& client, uint64_t incarnation,
                        tensorflow::NodeDef* node) {
  const tensorflow::AttrValue type = node->attr().at("T");
  node->set_op(op);
  node->set_device(client);
  node->clear_attr();
  auto& attr = *node->mutable_attr();
  attr[op == "_Recv" ? "tensor_type" : "T"] = type;
  attr["tensor_name"].set_s(tensor_name);
  attr["send_device"].set_s(client);
  attr["send_device_incarnation"].set_i(static_cast<int64_t>(incarnation));
  attr["recv_device"].set_s(client);
  attr["client_terminated"].set_b(true);
}

}  // namespace

absl::StatusOr<RunPlan> PlanRun(const Graph& full,
                                const RunSignature& signature,
                                const ClusterPlacement& where) {
  const OpRegistry& ops =
      where.ops != nullptr ? *where.ops : GlobalOpRegistry();
  absl::flat_hash_map<std::string, uint64_t> incarnation;
  PlacerOptions placer;
  for (const tensorflow::DeviceAttributes& d : where.devices) {
    incarnation[d.name()] = d.incarnation();
    placer.devices.push_back(d.name());
  }
  auto client_it = incarnation.find(where.client_device);
  if (client_it == incarnation.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the client device '", where.client_device,
        "' is not a device of any task in the cluster"));
  }
  const std::string& client = where.client_device;
  const uint64_t client_incarnation = client_it->second;

  RunPlan plan;
  WEFT_ASSIGN_OR_RETURN(plan.client_task, TaskOfDevice(client));
  WEFT_ASSIGN_OR_RETURN(ClientGraph client_graph,
                        BuildClientGraph(full, signature));
  plan.feeds = std::move(client_graph.feeds);
  auto key = [&](const std::string& tensor_name) {
    return RendezvousKey{client, client_incarnation, client, tensor_name}
        .ToString();
  };
  for (const std::string& feed : signature.feeds) {
    plan.feed_keys.push_back(key(feed));
  }
  for (const std::string& fetch : signature.fetches) {
    plan.fetch_keys.push_back(key(fetch));
  }

  // The _Arg and _Retval nodes pruning added (their names are new to the
  // full graph) become client-terminated _Recv and _Send nodes.
  tensorflow::GraphDef def;
  client_graph.graph->ToGraphDef(&def);
  tensorflow::GraphDef rewritten;
  *rewritten.mutable_versions() = def.versions();
  *rewritten.mutable_library() = def.library();
  absl::flat_hash_set<std::string> fetched;
  for (tensorflow::NodeDef& node : *def.mutable_node()) {
    const bool added = full.FindNode(node.name()) == nullptr;
    if (added && (node.op() == "_Arg" || node.op() == "_Retval")) {
      const int64_t index = node.attr().at("index").i();
      if (node.op() == "_Arg") {
        MakeClientTransfer("_Recv", signature.feeds[index], client,
                           client_incarnation, &node);
      } else {
        const std::string& name = signature.fetches[index];
        if (!fetched.insert(name).second) continue;  // sent once
        MakeClientTransfer("_Send", name, client, client_incarnation, &node);
      }
    }
    *rewritten.add_node() = std::move(node);
  }
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph,
                        ConvertGraphDefToGraph(rewritten, ops));

  placer.default_device = client;
  placer.kernels = where.kernels != nullptr ? where.kernels
                                            : &GlobalKernelRegistry();
  placer.allow_soft_placement = where.allow_soft_placement;
  WEFT_RETURN_IF_ERROR(PlaceGraph(placer, graph.get()));

  PartitionOptions partition;
  partition.incarnation = [&incarnation](const std::string& device) {
    auto it = incarnation.find(device);
    return it == incarnation.end() ? uint64_t{0} : it->second;
  };
  WEFT_ASSIGN_OR_RETURN(auto parts, PartitionGraph(partition, *graph));
  WEFT_RETURN_IF_ERROR(CheckTransfersPair(parts));
  // One partition per device; a task gets all of its devices' in one graph
  // (its worker splits it per device again).
  for (auto& [device, part] : parts) {
    WEFT_ASSIGN_OR_RETURN(std::string task, TaskOfDevice(device));
    auto [it, added] = plan.partitions.try_emplace(task);
    if (added) {
      it->second = std::move(part);
    } else {
      for (tensorflow::NodeDef& node : *part.mutable_node()) {
        *it->second.add_node() = std::move(node);
      }
    }
  }
  return plan;
}

}  // namespace weft
