// Symbolic gradients (reverse mode) over a graph built with Scope.
//
//   Output loss = ...;                                  // built in `root`
//   std::vector<Output> grads;
//   WEFT_RETURN_IF_ERROR(AddGradients(root, {loss}, {w, b}, {}, &grads));
//   // grads[0] has w's shape and dtype: d(sum of ys)/dw
//
// Only the part of the graph on a data path from an x to a y is
// differentiated. The gradient of each y is `grad_ys[i]` (or ones when
// grad_ys is empty); contributions reaching one tensor from several
// consumers are summed with AddN. Gradient nodes are added under the name
// scope "gradients" of `scope` ("gradients/layer1/MatMul_grad/MatMul"),
// with the scope's device and control dependencies. An x that no y depends
// on gets ZerosLike(x).
//
// With GradientOptions::colocate_with_ops (TensorFlow's
// colocate_gradients_with_ops), the gradient nodes of a forward node that
// requests a device request that device instead of the scope's, so the
// backward pass of a layer pinned to a device runs there too (model
// parallelism); the scope's device still applies to the rest.
//
// Conds and while loops built with control_flow.h are differentiated
// through (a backward cond; a backward loop that runs as many iterations as
// the forward one, with the forward values it needs kept on stacks).
//
// Errors (also recorded in the scope): INVALID_ARGUMENT for invalid or
// mismatched arguments; NOT_FOUND "no gradient registered for op 'Op'
// (node 'name')" when a node on the path has no gradient function
// (grad_registry.h lists how to add one); UNIMPLEMENTED naming the node for
// a cond or loop not built with control_flow.h (one loaded from a GraphDef)
// and for an x or y inside a loop.
#ifndef WEFT_GRAPH_BUILDER_GRADIENTS_H_
#define WEFT_GRAPH_BUILDER_GRADIENTS_H_

#include <vector>

#include "absl/status/status.h"
#include "graph/builder/scope.h"

namespace weft {

absl::Status AddGradients(const Scope& scope, const std::vector<Output>& ys,
                          const std::vector<Output>& xs,
                          const std::vector<Output>& grad_ys,
                          std::vector<Output>* grad_xs);

struct GradientOptions {
  bool colocate_with_ops = false;
};
absl::Status AddGradients(const Scope& scope, const std::vector<Output>& ys,
                          const std::vector<Output>& xs,
                          const std::vector<Output>& grad_ys,
                          const GradientOptions& options,
                          std::vector<Output>* grad_xs);

}  // namespace weft

#endif  // WEFT_GRAPH_BUILDER_GRADIENTS_H_
