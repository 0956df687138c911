// What the control-flow wrappers (control_flow.h) record about each cond and
// while loop they build, so that AddGradients can build the backward cond or
// loop. Internal to graph/builder; kept beside the graph (Scope's shared
// state, Scope::control_flow()), never in the GraphDef, so a graph loaded
// from a file has no records and AddGradients refuses its loops.
//
// Thread safety: as Scope (one building thread per graph).
#ifndef WEFT_GRAPH_BUILDER_CONTROL_FLOW_INFO_H_
#define WEFT_GRAPH_BUILDER_CONTROL_FLOW_INFO_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/builder/control_flow.h"
#include "graph/builder/scope.h"

namespace weft {

struct CondRecord {
  Output pred;  // "cond/pred_id": the predicate every Switch of it tests
};

struct LoopRecord {
  std::string frame_name;
  int parallel_iterations = 10;
  int parent = -1;      // the loop this one is nested in, or -1
  // Per loop variable, in order.
  std::vector<Output> inits;  // the values entering the loop (outside it)
  std::vector<std::string> enters, merges, switches, identities,
      next_iterations, exits;
  std::vector<Output> body_outputs;  // what each NextIteration takes
  Output loop_cond;
  // Outside tensors the cond or body uses, entered as constants, and the
  // Enter node of each.
  std::vector<Output> captures;
  std::vector<std::string> capture_enters;

  // Added by the first gradient through the loop (while_grad.cc): an int32
  // counter, a loop variable of the same frame. `count` (its Exit) is the
  // number of iterations run; pushes of forward values for the backward
  // loop wait for `counter_identity` and the increment waits for them, so
  // they happen once per iteration, in order.
  Output count;
  std::string counter_identity, counter_increment;
  // A ControlTrigger the increment waits for; each push adds itself to its
  // inputs (a trigger: a push in an untaken branch is dead and must not
  // kill the counter).
  std::string push_sync;
};

// A branch of a cond: the cond's index and 1 (true) or 0 (false).
struct BranchId {
  int cond = -1;
  int branch = 0;
};

struct ControlFlowInfo {
  std::vector<CondRecord> conds;
  absl::flat_hash_map<std::string, int> cond_of;  // Switch / Merge -> cond
  // Every node a branch function built -> the innermost branch.
  absl::flat_hash_map<std::string, BranchId> branch_of;
  std::vector<LoopRecord> loops;
  // Every node of a loop (its own and its body's) -> the innermost loop;
  // -1 (or the enclosing loop) for a node a gradient built while a loop
  // was being built, but outside it (a stack, a counter's initial value).
  absl::flat_hash_map<std::string, int> loop_of;
};

// The tensor name for an input: "node" for output 0, else "node:i".
std::string InputName(const Output& o);

// The attrs of an Enter into `frame`.
AttrList EnterAttrs(const std::string& frame, bool is_constant,
                    int parallel_iterations);

// The branch whose runs `t` is live in (a cond's Switch output k: branch
// k; a node a branch built: that branch), or cond -1 for none.
BranchId BranchOf(const ControlFlowInfo& info, const tensorflow::NodeDef& node,
                  const Output& t);

// The output `input` (a NodeDef input string, not a control input) names.
absl::StatusOr<Output> OutputFromInput(const Scope& scope,
                                       absl::string_view input);

// Rewires the nodes a branch or loop function built (graph indexes from
// `begin` to the end): each data input whose source is not `inside` is
// replaced by capture(source); nodes with neither a data input nor a
// control input from inside get a control input on `pivot`. Control inputs from outside are kept, or moved to
// *outside_controls (deduplicated) when that is not null.
absl::Status RewireRegion(
    const Scope& scope, int begin,
    const std::function<bool(const std::string& node)>& inside,
    const std::function<Output(const Output&)>& capture,
    const std::string& pivot, std::vector<std::string>* outside_controls);

// The loop whose frame `node` runs in (an Exit: the frame around its
// loop), or -1 for the root frame.
int FrameOf(const ControlFlowInfo& info, const tensorflow::NodeDef& node);

// Re-reads loop `loop`'s inits and captures from its Enters' inputs: a
// cond built around the loop may have rewired them (to its Switches).
absl::Status RefreshLoopInputs(const Scope& scope, int loop);

// How a loop's body takes a tensor from outside the loop. Returns the
// tensor to use inside, or an invalid Output for the default: a constant
// Enter (`enter` builds one). `pivot` is the body's first Identity, on
// which nodes that must run once per iteration wait.
using LoopCaptureFn = std::function<Output(
    const Output& outside, const Output& pivot,
    const std::function<Output(const Output&)>& enter)>;

// WhileLoop (control_flow.h) with a capture hook (null: the default);
// *loop_id is the new loop's index in control_flow().loops.
absl::Status BuildWhileLoop(const Scope& scope,
                            const std::vector<Output>& loop_vars,
                            const LoopCondFn& cond, const LoopBodyFn& body,
                            absl::string_view frame_name,
                            int parallel_iterations,
                            const LoopCaptureFn& capture, int* loop_id,
                            std::vector<Output>* outputs);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_CONTROL_FLOW_INFO_H_
