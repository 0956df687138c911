// _RingAllReduce: Weft's all-reduce across the worker tasks of a group,
// each running its own graph (between-graph data parallelism without
// parameter servers). Every task of `group_tasks` runs one with the same
// `instance` (the training step), the same N and the same shapes; each
// output i is the sum (final_op 'Sum') or mean ('Mean') of input i over the
// tasks. The N inputs are reduced together, as one buffer: a few large
// transfers rather than one per gradient. Kernel: ops/cpu/collective_kernels.cc.
#include "absl/strings/str_cat.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"

namespace weft {
namespace {

absl::Status SameShapesAsInputs(InferenceContext* c) {
  for (int i = 1; i < c->num_inputs() && i - 1 < c->num_outputs(); ++i) {
    c->set_output(i - 1, c->input(i));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterCollectiveOps(OpRegistry* r) {
  r->Register(OpDefBuilder("_RingAllReduce")
                  .Input("instance: int64")
                  .Input("input: N * T")
                  .Output("output: N * T")
                  .Attr("T: {float, double}")
                  .Attr("N: int >= 1")
                  .Attr("group_tasks: list(string) >= 1")
                  .Attr("rank: int >= 0")
                  .Attr("final_op: {'Mean', 'Sum'} = 'Mean'")
                  .Attr("chunk_bytes: int = 1048576")
                  .SetIsStateful(),
              SameShapesAsInputs);
}

}  // namespace weft
