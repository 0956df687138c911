// ScalarSummary, with TensorFlow's OpDef: what tf.compat.v1.summary.scalar
// builds, and what TF1's input pipelines (string_input_producer,
// shuffle_batch) add beside their queues. Kernel: ops/cpu/summary_kernels.cc.
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"

namespace weft {

void RegisterSummaryOps(OpRegistry* r) {
  r->Register(OpDefBuilder("ScalarSummary")
                  .Input("tags: string")
                  .Input("values: T")
                  .Output("summary: string")
                  .Attr("T: {float, double, int32, uint8, int16, int8, int64, bfloat16, "
                        "uint16, half, uint32, uint64}"),
              ScalarShape);
}

}  // namespace weft
