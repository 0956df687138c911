// Conditionals and while loops in a built graph, as TensorFlow's v1
// tf.compat.v1.cond and tf.compat.v1.while_loop build them (Switch/Merge,
// Enter/Merge/LoopCond/Switch/NextIteration/Exit), so the GraphDef runs the
// same in Weft and in TensorFlow, and AddGradients (gradients.h)
// differentiates through them.
//
//   // y = pred ? tanh(x) * 2 : x * x
//   std::vector<Output> y = Cond(
//       scope, pred, {x},
//       [](const Scope& s, const std::vector<Output>& in) {
//         return std::vector<Output>{Mul(s, Tanh(s, in[0]), Const(s, 2.f))};
//       },
//       [](const Scope& s, const std::vector<Output>& in) {
//         return std::vector<Output>{Mul(s, in[0], in[0])};
//       });
//
//   // (i, p) = (0, 1); while (i < n) (i, p) = (i + 1, p * x); p is x^n.
//   std::vector<Output> out = WhileLoop(
//       scope, {Const(scope, 0), OnesLike(scope, x)},
//       [&](const Scope& s, const std::vector<Output>& v) {
//         return Less(s, v[0], n);                 // n: from outside
//       },
//       [&](const Scope& s, const std::vector<Output>& v) {
//         return std::vector<Output>{AddV2(s, v[0], Const(s, 1)),
//                                    Mul(s, v[1], x)};
//       });
//
// Branch, cond and body functions build on the tensors they are given and
// may also use any tensor from outside: the wrapper rewires such uses
// afterwards, as TensorFlow does (a Switch on the predicate into a branch;
// a constant Enter into a loop's frame), and gives nodes without data
// inputs (constants) a control input that keeps them in the branch or
// iteration. Both branches must return the same number of tensors with
// the same dtypes; a body returns one tensor per loop variable, each of
// its variable's dtype (and, for gradients, shape).
//
// Names: a cond's nodes are under the name scope "cond" ("cond/Switch",
// "cond/switch_t", "cond/pred_id", the branches' nodes, "cond/Merge"), a
// loop's under "while" ("while/Enter", "while/Merge", "while/LoopCond",
// "while/Switch", "while/Identity", "while/NextIteration", "while/Exit"),
// made unique as all names are. A loop's frame is `frame_name`, or its
// name scope when that is empty.
//
// Errors (an invalid predicate, mismatched branch outputs, a body returning
// the wrong number or dtypes of tensors, or an error inside a function)
// are recorded in the scope as every builder error is, and the wrapper
// returns an empty vector.
//
// Gradients: AddGradients differentiates through conds and loops, nested
// in each other in any way (a loop's forward values are kept on stacks for
// its backward loop; see while_grad.cc), with respect to tensors outside
// them; a tensor inside a loop cannot be an x or a y (UNIMPLEMENTED). Only
// float loop variables and captured tensors get gradients.
//
// Thread safety: as Scope. What AddGradients needs to know about each cond
// and loop is kept with the graph under construction, not in the GraphDef:
// a GraphDef written out and loaded again runs, but is not differentiable
// through its conds and loops (UNIMPLEMENTED naming the node).
#ifndef WEFT_GRAPH_BUILDER_CONTROL_FLOW_H_
#define WEFT_GRAPH_BUILDER_CONTROL_FLOW_H_

#include <functional>
#include <vector>

#include "absl/strings/string_view.h"
#include "graph/builder/scope.h"

namespace weft {

// Builds one branch of a Cond from the branch's view of the inputs.
using BranchFn = std::function<std::vector<Output>(
    const Scope& scope, const std::vector<Output>& inputs)>;

// pred (a bool scalar) ? true_fn(inputs) : false_fn(inputs). Only the taken
// branch runs; the other's nodes are dead for the step.
std::vector<Output> Cond(const Scope& scope, const Output& pred,
                         const std::vector<Output>& inputs,
                         const BranchFn& true_fn, const BranchFn& false_fn);

struct WhileOptions {
  // How many iterations may run at once (Enter's parallel_iterations).
  int parallel_iterations = 10;
};

// A loop's condition (a bool scalar) and body (the next values of the
// loop variables), from the loop variables' values in the iteration.
using LoopCondFn =
    std::function<Output(const Scope& scope, const std::vector<Output>& vars)>;
using LoopBodyFn = std::function<std::vector<Output>(
    const Scope& scope, const std::vector<Output>& vars)>;

// while (cond(vars)) vars = body(vars); returns the final vars.
std::vector<Output> WhileLoop(const Scope& scope,
                              const std::vector<Output>& loop_vars,
                              const LoopCondFn& cond, const LoopBodyFn& body,
                              absl::string_view frame_name = "",
                              const WhileOptions& options = WhileOptions());

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_CONTROL_FLOW_H_
