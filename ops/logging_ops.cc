// Assert, as TensorFlow declares it: fails the step with its data when the
// condition is false (tf.debugging.assert_* and dynamic_rnn's sequence
// length check build it). Kernel: ops/cpu/assert_kernel.cc.
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"

namespace weft {

void RegisterLoggingOps(OpRegistry* r) {
  r->Register(OpDefBuilder("Assert")
                  .Input("condition: bool")
                  .Input("data: T")
                  .Attr("T: list(type) >= 1")
                  .Attr("summarize: int = 3")
                  .SetIsStateful(),
              UnknownShape);
}

}  // namespace weft
