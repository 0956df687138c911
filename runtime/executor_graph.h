// ExecutorGraph: the immutable, flattened form of a Graph that the executor
// walks every step. Internal to runtime/executor.cc (and its tests).
//
// Everything a step needs is precomputed here, in flat arrays indexed by a
// dense node index: each node's kernel, where its inputs live in the step's
// input-slot array, its out-edges with the destination's absolute input slot
// and how the destination is activated, and the initial pending counts.
//
//   item = items[i]
//   edges[item.out_edge_start .. + item.num_out_edges]
//     data edges first (grouped by output), then control edges
//
// Destinations are activated one of three ways (OutEdge::Activation):
//   kDirect   the edge is the node's only in-edge: ready at once, no counter;
//   kCounter  several in-edges: an atomic per-step counter holding
//             pending | dead_count << 32, decremented by each arrival;
//   kMerge    a Merge: first live data input wins, under a per-step lock.
//
// Thread safety: immutable after Build(); shared by concurrent steps.
// Ownership: owns the kernels, except those shared through a KernelCache.
#ifndef WEFT_RUNTIME_EXECUTOR_GRAPH_H_
#define WEFT_RUNTIME_EXECUTOR_GRAPH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "runtime/device.h"
#include "runtime/kernel_cache.h"

namespace weft {

// Slots and state indices are offsets into one IterationState's arrays
// (executor.cc). With while loops they will be numbered per frame, each
// iteration of a frame holding arrays sized for that frame's nodes only.
struct NodeItem {
  OpKernel* kernel = nullptr;
  int32_t input_start = 0;  // first slot in the iteration's input array
  int32_t num_inputs = 0;
  int32_t num_outputs = 0;
  int32_t out_edge_start = 0;  // first edge in ExecutorGraph::edges
  int32_t num_out_edges = 0;
  // kCounter nodes: index in the step's counters; kMerge: in its merge states.
  int32_t state_index = -1;
  bool is_merge = false;
  bool is_async = false;
  bool is_expensive = false;
  bool is_transfer = false;       // runs even when dead (Send/Recv)
  bool may_skip_outputs = false;  // Switch, Recv: an unset output is dead
  bool needs_deref = false;       // a plain input is fed from a ref output
  bool allows_uninitialized_input = false;  // from the OpDef
};

struct OutEdge {
  enum Activation : uint8_t { kDirect, kCounter, kMerge };
  int32_t dst = 0;           // node index
  int32_t dst_slot = -1;     // absolute input slot; -1 for a control edge
  int32_t src_output = -1;   // -1 for a control edge
  int32_t state_index = -1;  // the destination's counter or merge state
  Activation activation = kDirect;
  bool move = false;  // last edge reading src_output: may move it
  bool IsControl() const { return src_output < 0; }
};

// The initial state of one Merge for a step.
struct MergeInit {
  int32_t num_data = 0;
  int32_t num_control = 0;
};

class ExecutorGraph {
 public:
  // UNIMPLEMENTED for loop ops, kernel errors naming node, op, device and
  // dtype, INVALID_ARGUMENT for an unconnected data input.
  // Stateful nodes' kernels come from `cache` when it is not null.
  static absl::StatusOr<std::unique_ptr<ExecutorGraph>> Build(
      const Graph& graph, Device* device, const KernelRegistry& kernels,
      KernelCache* cache = nullptr);

  ExecutorGraph(const ExecutorGraph&) = delete;
  ExecutorGraph& operator=(const ExecutorGraph&) = delete;

  int num_nodes() const { return static_cast<int>(items_.size()); }
  const NodeItem& item(int i) const { return items_[i]; }
  const NodeItem* items() const { return items_.data(); }
  const OutEdge* edges() const { return edges_.data(); }
  const std::vector<int32_t>& roots() const { return roots_; }
  int num_input_slots() const { return num_input_slots_; }
  int max_outputs() const { return max_outputs_; }
  // Initial counter values (pending in-edges, no dead ones), by state index.
  const std::vector<int64_t>& counter_init() const { return counter_init_; }
  const std::vector<MergeInit>& merge_init() const { return merge_init_; }
  // For a node with needs_deref: the producer of each input ("w"), for
  // "Attempting to use uninitialized value w".
  const std::string& input_source(int node, int input) const {
    return input_sources_[node][input];
  }

 private:
  ExecutorGraph() = default;

  std::vector<std::unique_ptr<OpKernel>> kernels_;  // those not cached
  std::vector<NodeItem> items_;
  std::vector<OutEdge> edges_;
  std::vector<int32_t> roots_;
  std::vector<int64_t> counter_init_;
  std::vector<MergeInit> merge_init_;
  std::vector<std::vector<std::string>> input_sources_;
  int num_input_slots_ = 0;
  int max_outputs_ = 0;
};

}  // namespace weft

#endif  // WEFT_RUNTIME_EXECUTOR_GRAPH_H_
