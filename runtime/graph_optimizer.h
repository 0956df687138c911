// The optimisations a graph gets before its executor is built: constant
// folding (constant_folding.h), then kernel fusion (kernel_fusion.h), on
// each partition placed on a CPU device. ExecutableGraph::Create runs them,
// so `weft run`, a local session and a worker (whoever planned the graph,
// Weft's master or TensorFlow's) all run the same optimised partitions.
//
// TensorFlow's clients choose them with ConfigProto.graph_options, and
// GraphOptimizationsFrom reads the choice as TensorFlow does: constant
// folding is off only when both the classic optimiser (opt_level L0 without
// do_constant_folding) and grappler's (disable_meta_optimizer, or
// rewrite_options.constant_folding OFF) are off; fusion is grappler's
// remapper (off with disable_meta_optimizer or remapping OFF).
//
// Thread safety: OptimizeGraph mutates the graph it is given.
#ifndef WEFT_RUNTIME_GRAPH_OPTIMIZER_H_
#define WEFT_RUNTIME_GRAPH_OPTIMIZER_H_

#include "absl/status/status.h"
#include "graph/graph.h"
#include "ops/framework/kernel_registry.h"
#include "runtime/core/device.h"

namespace tensorflow {
class GraphOptions;
}  // namespace tensorflow

namespace weft {

struct GraphOptimizations {
  bool fold_constants = true;
  bool fuse_kernels = true;
};

GraphOptimizations GraphOptimizationsFrom(const tensorflow::GraphOptions& options);

// Runs the chosen passes if `device` is a CPU device; otherwise leaves the
// graph alone. Errors: only a failed rewrite (a bug), naming the pass.
absl::Status OptimizeGraph(const GraphOptimizations& optimizations, Graph* graph,
                           Device* device, const KernelRegistry& kernels);

}  // namespace weft

#endif  // WEFT_RUNTIME_GRAPH_OPTIMIZER_H_
