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
// While loops (TensorFlow's frames). Every node belongs to one static frame:
// the root frame (index 0) or the body of a while loop, found by walking the
// graph from its roots: an Enter's outputs are in the child frame named by its
// `frame_name` attr, an Exit's in the parent of its own frame, every other
// node's in its producer's frame. Input slots and state indices are numbered
// per frame, so one iteration of a frame holds arrays sized for that frame's
// nodes only (FrameInfo). A graph without loops has only the root frame and
// its numbering is the same as before frames existed.
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
#include "runtime/core/device.h"
#include "runtime/kernel_cache.h"

namespace weft {

// Slots and state indices are offsets into the arrays of one iteration of
// the node's frame (IterationState in executor.cc).
struct NodeItem {
  // How a node moves values between frames and iterations.
  enum LoopKind : uint8_t {
    kNone,           // outputs stay in the node's own iteration
    kEnter,          // into iteration 0 of a child frame (every iteration
                     // when is_constant_enter)
    kExit,           // to the parent frame's iteration
    kNextIteration,  // to the next iteration of the same frame
  };
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
  // Runs even when dead: Send/Recv (which forward deadness) and
  // ControlTrigger (whose outputs are live even then, as in TensorFlow).
  bool runs_when_dead = false;
  bool may_skip_outputs = false;  // Switch, Recv: an unset output is dead
  bool needs_deref = false;       // a plain input is fed from a ref output
  bool allows_uninitialized_input = false;  // from the OpDef
  LoopKind loop_kind = kNone;
  bool is_constant_enter = false;  // Enter with is_constant: a loop invariant
  int32_t frame = 0;               // static frame (index into frames())
  int32_t child_frame = -1;        // Enter: the frame it enters
  int32_t exit_index = -1;         // Exit: index in its frame's exits
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
  // Data inputs from NextIteration (a loop's back edges). They only arrive
  // in iterations after the first, and the others only in the first, so a
  // loop Merge is dead once the inputs that can reach it this iteration are.
  int32_t num_back = 0;
};

// One static frame: the root (index 0, parent -1) or a while-loop body.
struct FrameInfo {
  std::string name;  // the Enters' frame_name; empty for the root
  int32_t parent = -1;
  // Most iterations of one frame instance that may be live at once (>= 1).
  int64_t parallel_iterations = 1;
  int32_t num_enters = 0;      // Enter nodes feeding this frame
  std::vector<int32_t> exits;  // Exit nodes in this frame
  int32_t num_input_slots = 0;
  // Initial counter values (pending in-edges, no dead ones), by state index.
  std::vector<int64_t> counter_init;
  std::vector<MergeInit> merge_init;
};

class ExecutorGraph {
 public:
  // Kernel errors naming node, op, device and dtype; INVALID_ARGUMENT for an
  // unconnected data input or a malformed loop (an Exit outside any loop, a
  // node reached from two different frames).
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
  int max_outputs() const { return max_outputs_; }
  // frames()[0] is the root frame; more only if the graph has while loops.
  const std::vector<FrameInfo>& frames() const { return frames_; }
  const FrameInfo& root_frame() const { return frames_[0]; }
  bool has_loops() const { return frames_.size() > 1; }
  // Some node keeps resources in the step's container (StackV2), which the
  // executor must drop when the step ends.
  bool uses_step_container() const { return uses_step_container_; }
  // For a node with needs_deref: the producer of each input ("w"), for
  // "Attempting to use uninitialized value w".
  const std::string& input_source(int node, int input) const {
    return input_sources_[node][input];
  }

 private:
  ExecutorGraph() = default;
  // Sets every node's frame (NodeItem::frame, child_frame) and creates the
  // FrameInfos, without their slot numbering.
  absl::Status AssignFrames(const std::vector<Node*>& nodes,
                            const std::vector<int32_t>& index_of);

  std::vector<std::unique_ptr<OpKernel>> kernels_;  // those not cached
  std::vector<NodeItem> items_;
  std::vector<OutEdge> edges_;
  std::vector<int32_t> roots_;
  std::vector<FrameInfo> frames_;
  std::vector<std::vector<std::string>> input_sources_;
  int max_outputs_ = 0;
  bool uses_step_container_ = false;
};

}  // namespace weft

#endif  // WEFT_RUNTIME_EXECUTOR_GRAPH_H_
