#include "runtime/executor_graph.h"

#include <algorithm>
#include <deque>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {

namespace {

// Stateful nodes whose kernels a session shares between its executors.
// _Arg/_Retval (stateful only so they are never pruned or folded) and
// transfers are per executor.
bool IsShared(const Node& node) {
  return node.op_def().is_stateful() && !node.IsArg() && !node.IsRetval() &&
         !node.IsTransfer();
}

}  // namespace

absl::Status ExecutorGraph::AssignFrames(const std::vector<Node*>& nodes,
                                         const std::vector<int32_t>& index_of) {
  const int n = static_cast<int>(nodes.size());
  frames_.assign(1, FrameInfo());
  std::map<std::pair<int32_t, std::string>, int32_t> child_of;
  std::vector<int32_t> frame_of(n, -1);
  std::deque<int32_t> queue;
  for (int32_t r : roots_) {
    frame_of[r] = 0;
    queue.push_back(r);
  }
  while (!queue.empty()) {
    const int32_t i = queue.front();
    queue.pop_front();
    const Node& node = *nodes[i];
    NodeItem& item = items_[i];
    const int32_t f = frame_of[i];
    item.frame = f;
    int32_t out_frame = f;
    if (item.loop_kind == NodeItem::kEnter) {
      std::string name;
      WEFT_RETURN_IF_ERROR(GetNodeAttr(node.def(), "frame_name", &name));
      int64_t parallel = 10;
      WEFT_RETURN_IF_ERROR(
          GetNodeAttr(node.def(), "parallel_iterations", &parallel));
      auto [it, added] = child_of.emplace(
          std::make_pair(f, name), static_cast<int32_t>(frames_.size()));
      if (added) {
        FrameInfo info;
        info.name = name;
        info.parent = f;
        info.parallel_iterations = std::max<int64_t>(parallel, 1);
        frames_.push_back(std::move(info));
      }
      out_frame = item.child_frame = it->second;
      ++frames_[out_frame].num_enters;
    } else if (item.loop_kind == NodeItem::kExit) {
      if (f == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(NodeLabel(node.def()),
                         ": Exit is not inside a while loop (no Enter leads "
                         "to it)"));
      }
      out_frame = frames_[f].parent;
      item.exit_index = static_cast<int32_t>(frames_[f].exits.size());
      frames_[f].exits.push_back(i);
    }
    for (const Edge* e : node.out_edges()) {
      const int32_t dst = index_of[e->dst->id()];
      if (frame_of[dst] < 0) {
        frame_of[dst] = out_frame;
        queue.push_back(dst);
      } else if (frame_of[dst] != out_frame) {
        return absl::InvalidArgumentError(absl::StrCat(
            NodeLabel(nodes[dst]->def()), ": reached from two frames ('",
            frames_[frame_of[dst]].name, "' and '", frames_[out_frame].name,
            "', via ", node.name(),
            "); a while loop's nodes must be entered through its Enters"));
      }
    }
  }
  // Checked once every frame is known, so that a node reached from two
  // frames is reported as that rather than as its symptom here.
  for (int32_t i = 0; i < n; ++i) {
    if (frame_of[i] == 0 && items_[i].loop_kind == NodeItem::kNextIteration) {
      return absl::InvalidArgumentError(absl::StrCat(
          NodeLabel(nodes[i]->def()),
          ": NextIteration is not inside a while loop (no Enter leads to "
          "it)"));
    }
  }
  // Nodes not reachable from a root never run; leave them in the root frame.
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ExecutorGraph>> ExecutorGraph::Build(
    const Graph& graph, Device* device, const KernelRegistry& kernels,
    KernelCache* cache) {
  auto eg = std::unique_ptr<ExecutorGraph>(new ExecutorGraph);
  const std::vector<Node*> nodes = graph.nodes();
  const int n = static_cast<int>(nodes.size());
  std::vector<int32_t> index_of(graph.num_node_ids(), -1);
  for (int i = 0; i < n; ++i) index_of[nodes[i]->id()] = i;

  eg->kernels_.reserve(n);
  eg->items_.resize(n);
  for (int i = 0; i < n; ++i) {
    const Node& node = *nodes[i];
    auto create = [&]() -> absl::StatusOr<std::unique_ptr<OpKernel>> {
      absl::StatusOr<std::unique_ptr<OpKernel>> kernel =
          kernels.CreateKernel(node.def(), node.op_def(), device);
      if (!kernel.ok()) {
        return absl::Status(kernel.status().code(),
                            absl::StrCat(kernel.status().message(), " [device ",
                                         device->name(), "]"));
      }
      return kernel;
    };
    NodeItem& item = eg->items_[i];
    if (cache != nullptr && IsShared(node)) {
      WEFT_ASSIGN_OR_RETURN(
          item.kernel,
          cache->FindOrCreate(absl::StrCat(node.name(), "@", device->name()),
                              create));
    } else {
      WEFT_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, create());
      item.kernel = kernel.get();
      eg->kernels_.push_back(std::move(kernel));
    }
    item.num_inputs = node.num_inputs();
    item.num_outputs = node.num_outputs();
    item.is_merge = node.IsMerge();
    item.is_async = item.kernel->IsAsync();
    item.is_expensive = item.kernel->IsExpensive();
    item.runs_when_dead =
        node.IsTransfer() || node.type_string() == "ControlTrigger";
    if (node.type_string() == "StackV2") eg->uses_step_container_ = true;
    item.may_skip_outputs = node.IsSwitch() || node.IsTransfer();
    if (node.IsEnter()) {
      item.loop_kind = NodeItem::kEnter;
      WEFT_RETURN_IF_ERROR(
          GetNodeAttr(node.def(), "is_constant", &item.is_constant_enter));
    } else if (node.IsExit()) {
      item.loop_kind = NodeItem::kExit;
    } else if (node.IsNextIteration()) {
      item.loop_kind = NodeItem::kNextIteration;
    }
    eg->max_outputs_ = std::max(eg->max_outputs_, item.num_outputs);

    int in_edges = 0;
    int data_edges = 0;
    for (const Edge* e : node.in_edges()) {
      ++in_edges;
      if (e->IsControlEdge()) continue;
      ++data_edges;
      if (IsRefType(e->src->output_type(e->src_output)) &&
          !IsRefType(node.input_type(e->dst_input))) {
        item.needs_deref = true;
      }
    }
    if (item.needs_deref) {
      item.allows_uninitialized_input =
          node.op_def().allows_uninitialized_input();
      eg->input_sources_.resize(n);
      auto& sources = eg->input_sources_[i];
      sources.resize(item.num_inputs);
      for (const Edge* e : node.in_edges()) {
        if (!e->IsControlEdge()) sources[e->dst_input] = e->src->name();
      }
    }
    if (data_edges != item.num_inputs) {
      for (int k = 0; k < item.num_inputs; ++k) {
        if (node.input_edge(k) == nullptr) {
          return absl::InvalidArgumentError(absl::StrCat(
              NodeLabel(node.def()), ": input ", k, " is not connected"));
        }
      }
    }
    if (in_edges == 0) eg->roots_.push_back(i);
  }
  WEFT_RETURN_IF_ERROR(eg->AssignFrames(nodes, index_of));

  // Slots and pending state, numbered per frame.
  for (int i = 0; i < n; ++i) {
    const Node& node = *nodes[i];
    NodeItem& item = eg->items_[i];
    FrameInfo& frame = eg->frames_[item.frame];
    item.input_start = frame.num_input_slots;
    frame.num_input_slots += item.num_inputs;
    int in_edges = 0;
    MergeInit merge;
    for (const Edge* e : node.in_edges()) {
      ++in_edges;
      if (e->IsControlEdge()) {
        ++merge.num_control;
        continue;
      }
      ++merge.num_data;
      if (e->src->IsNextIteration()) ++merge.num_back;
    }
    if (item.is_merge) {
      item.state_index = static_cast<int32_t>(frame.merge_init.size());
      frame.merge_init.push_back(merge);
    } else if (in_edges > 1) {
      item.state_index = static_cast<int32_t>(frame.counter_init.size());
      frame.counter_init.push_back(in_edges);
    }
  }

  // Out-edges: data edges grouped by output (so the last reader of each
  // output can move it), then control edges.
  std::vector<const Edge*> out;
  for (int i = 0; i < n; ++i) {
    const Node& node = *nodes[i];
    NodeItem& item = eg->items_[i];
    out.assign(node.out_edges().begin(), node.out_edges().end());
    std::stable_sort(out.begin(), out.end(), [](const Edge* a, const Edge* b) {
      const int sa = a->IsControlEdge() ? INT32_MAX : a->src_output;
      const int sb = b->IsControlEdge() ? INT32_MAX : b->src_output;
      return sa < sb;
    });
    item.out_edge_start = static_cast<int32_t>(eg->edges_.size());
    item.num_out_edges = static_cast<int32_t>(out.size());
    for (size_t k = 0; k < out.size(); ++k) {
      const Edge* e = out[k];
      const int32_t dst = index_of[e->dst->id()];
      const NodeItem& dst_item = eg->items_[dst];
      OutEdge oe;
      oe.dst = dst;
      oe.state_index = dst_item.state_index;
      if (dst_item.is_merge) {
        oe.activation = OutEdge::kMerge;
      } else if (dst_item.state_index >= 0) {
        oe.activation = OutEdge::kCounter;
      } else {
        oe.activation = OutEdge::kDirect;
      }
      if (!e->IsControlEdge()) {
        oe.src_output = e->src_output;
        oe.dst_slot = dst_item.input_start + e->dst_input;
        oe.move = k + 1 == out.size() || out[k + 1]->IsControlEdge() ||
                  out[k + 1]->src_output != e->src_output;
      }
      eg->edges_.push_back(oe);
    }
  }
  return eg;
}

}  // namespace weft
