#include "runtime/graph_optimizer.h"

#include "proto/config.pb.h"
#include "proto/rewriter_config.pb.h"
#include "runtime/constant_folding.h"
#include "runtime/core/status.h"
#include "runtime/kernel_fusion.h"

namespace weft {

GraphOptimizations GraphOptimizationsFrom(const tensorflow::GraphOptions& options) {
  const tensorflow::OptimizerOptions& classic = options.optimizer_options();
  const tensorflow::RewriterConfig& grappler = options.rewrite_options();
  const bool classic_folds = classic.opt_level() != tensorflow::OptimizerOptions::L0 ||
                             classic.do_constant_folding();
  const bool grappler_on = !grappler.disable_meta_optimizer();
  GraphOptimizations out;
  out.fold_constants = classic_folds ||
                       (grappler_on && grappler.constant_folding() != tensorflow::RewriterConfig::OFF);
  out.fuse_kernels = grappler_on && grappler.remapping() != tensorflow::RewriterConfig::OFF;
  return out;
}

absl::Status OptimizeGraph(const GraphOptimizations& optimizations, Graph* graph,
                           Device* device, const KernelRegistry& kernels) {
  if (device->device_type() != kDeviceTypeCpu) return absl::OkStatus();
  if (optimizations.fold_constants) {
    WEFT_RETURN_IF_ERROR(WithContext(FoldConstants(graph, device, kernels),
                                        "constant folding"));
  }
  if (optimizations.fuse_kernels) {
    WEFT_RETURN_IF_ERROR(WithContext(FuseKernels(graph), "kernel fusion"));
  }
  return absl::OkStatus();
}

}  // namespace weft
