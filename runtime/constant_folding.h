// Constant folding: the nodes of a graph whose every input is fixed when the
// graph is built are run once, by the kernels a step would run, and the
// outputs other nodes read become Const nodes. TensorFlow's optimizers do
// the same before a graph runs. In a frozen Keras model it turns each batch
// normalisation's rsqrt(variance + epsilon) * gamma chain into per-channel
// constants, which kernel fusion (kernel_fusion.h) then folds into the
// convolutions in front of them.
//
//   WEFT_RETURN_IF_ERROR(FoldConstants(graph, cpu_device, kernels));
//
// A node is folded when it has at least one input, its op is not stateful,
// calls no function, is not control flow, a transfer, an _Arg/_Retval, a
// placeholder or NoOp, no input or output is a ref, resource or variant, and
// every edge into it (control edges too) comes from a Const or a folded
// node; so nodes inside a while loop's frame, which are tied to the frame
// by a control edge, stay. An output is replaced only where a node outside
// the folded set reads it and when it holds at most `max_constant_bytes`;
// control edges out of a folded node are kept (the node stays and runs as
// before, only its readers move to the constant). Nodes left with no reader
// are removed, except the ones that had none to begin with (targets).
//
// The evaluation runs on the calling thread and one helper thread, on a
// private device of `device`'s kind (a CPU device) that allocates from
// `device`'s allocator within `max_evaluation_bytes` and may open no file:
// a graph a peer registers is folded before any step's deadline applies. If it fails (a CheckNumerics on a NaN constant, a bad
// shape), the graph is left as it was and OK is returned: the step then
// reports the error, naming the node, as it would have without folding.
// Errors: only what rewriting the graph itself reports (a bug).
//
// Thread safety: mutates `graph`; the caller owns it exclusively.
#ifndef WEFT_RUNTIME_CONSTANT_FOLDING_H_
#define WEFT_RUNTIME_CONSTANT_FOLDING_H_

#include <cstdint>

#include "absl/status/status.h"
#include "graph/graph.h"
#include "ops/framework/kernel_registry.h"
#include "runtime/core/device.h"

namespace weft {

struct ConstantFoldingOptions {
  // TensorFlow's limit for a folded constant: larger outputs (a Fill or Tile
  // of a big shape) are cheaper to compute than to keep.
  int64_t max_constant_bytes = 10 << 20;
  // What the evaluation's tensors may hold at once: past it the evaluation
  // fails and nothing is folded.
  int64_t max_evaluation_bytes = 64 << 20;
};

absl::Status FoldConstants(Graph* graph, Device* device,
                           const KernelRegistry& kernels,
                           const ConstantFoldingOptions& options = {});

}  // namespace weft

#endif  // WEFT_RUNTIME_CONSTANT_FOLDING_H_
