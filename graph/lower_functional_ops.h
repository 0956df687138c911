// Lowering the function calls and functional control flow that TensorFlow
// 2.x graphs carry into plain nodes the executor, placer and partitioner
// already understand.
//
//   if (HasFunctionalOps(graph_def, ops)) {
//     WEFT_ASSIGN_OR_RETURN(tensorflow::GraphDef plain,
//                           LowerFunctionalOps(graph_def, ops));
//   }
//
// What is rewritten (each node keeps its name, so feeds and fetches that name
// it still work: its outputs become an IdentityN, or a NoOp when it has none):
//   - calls: PartitionedCall, StatefulPartitionedCall (the `f` attr), a node
//     whose op is a library function, SymbolicGradient of a function whose
//     gradient the library names. The body is inlined (graph/function_inliner.h)
//     under the call's name; its control outputs gate the call's outputs, so
//     fetching any result runs every side effect the function orders.
//   - If, StatelessIf: a Switch per input, both branches inlined behind
//     pivots, a Merge per output. A non-bool condition goes through ToBool.
//   - Case, StatelessCase: the same with _SwitchN (an out-of-range index runs
//     the last branch, as TensorFlow's Case does).
//   - While, StatelessWhile: an Enter/Merge/Switch/Exit/NextIteration frame
//     per loop named after the node, `parallel_iterations` kept, the cond and
//     body inlined inside the frame. Each iteration's NextIteration waits for
//     the body's control outputs, so side effects keep their order.
// Lowering is what TensorFlow itself does before running a graph; it is done
// whatever `_lower_using_switch_merge` says (the results are the same).
// Nested calls are lowered in turn. Bounds: calls nest at most
// kMaxFunctionNesting deep (a recursive function is an error naming it) and
// lowering adds at most kMaxLoweredNodes nodes.
//
// Thread safety: the functions share nothing and are thread-safe.
#ifndef WEFT_GRAPH_LOWER_FUNCTIONAL_OPS_H_
#define WEFT_GRAPH_LOWER_FUNCTIONAL_OPS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ops/framework/op_registry.h"
#include "proto/graph.pb.h"

namespace weft {

inline constexpr int kMaxFunctionNesting = 64;
inline constexpr int kMaxLoweredNodes = 1 << 20;

// True for the ops LowerFunctionalOps always rewrites (calls, If, Case,
// While and their stateless forms, SymbolicGradient). They have no kernel:
// no node of theirs reaches an executor.
bool IsLoweredBeforeRun(absl::string_view op);

// True when `graph_def` has a node that LowerFunctionalOps would rewrite.
bool HasFunctionalOps(const tensorflow::GraphDef& graph_def,
                      const OpRegistry& ops);

// The graph with every call and functional control-flow node lowered; the
// library is kept. Errors are INVALID_ARGUMENT naming the node and function
// (RESOURCE_EXHAUSTED past kMaxLoweredNodes, UNIMPLEMENTED for a
// SymbolicGradient without a gradient function).
absl::StatusOr<tensorflow::GraphDef> LowerFunctionalOps(
    const tensorflow::GraphDef& graph_def, const OpRegistry& ops);

}  // namespace weft

#endif  // WEFT_GRAPH_LOWER_FUNCTIONAL_OPS_H_
