// AddGradients' machinery, shared with the while-loop gradient (which
// differentiates one iteration of a loop's body inside the backward loop).
// Internal to graph/builder.
#ifndef WEFT_GRAPH_BUILDER_GRADIENTS_INTERNAL_H_
#define WEFT_GRAPH_BUILDER_GRADIENTS_INTERNAL_H_

#include <vector>

#include "absl/status/status.h"
#include "graph/builder/gradients.h"
#include "graph/builder/scope.h"

namespace weft {
namespace grad_internal {

struct DiffRequest {
  std::vector<Output> ys, xs, grad_ys;
  GradientOptions options;
  // Builder loops are differentiated as a whole (while_grad.cc), seen from
  // outside as one node from their inputs to their Exits; this one (an
  // index into ControlFlowInfo::loops) is open instead: its body's nodes
  // are differentiated one by one.
  int open_loop = -1;
  // ZerosLike(x) for an x no y depends on; else an invalid Output.
  bool zeros_for_unconnected = true;
};

// Adds the gradient nodes of `request` under `gscope` (the "gradients"
// name scope for AddGradients).
absl::Status Differentiate(const Scope& scope, const Scope& gscope,
                           const DiffRequest& request,
                           std::vector<Output>* grad_xs);

// The gradient of builder loop `loop` (an index into
// ControlFlowInfo::loops): given the gradient of each of its Exits (invalid
// for none), builds the backward loop and sets *dx to the gradient of each
// loop input: the loop variables' initial values, then the outside
// tensors the loop captured (invalid where none flows).
absl::Status WhileLoopGrad(const Scope& scope, const Scope& gscope, int loop,
                           const std::vector<Output>& dy,
                           std::vector<Output>* dx);

}  // namespace grad_internal
}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_GRADIENTS_INTERNAL_H_
