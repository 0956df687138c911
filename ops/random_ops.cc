// Random ops: RandomUniform, RandomStandardNormal, TruncatedNormal and
// RandomUniformInt. The kernels (ops/cpu/random_kernels.cc) reproduce
// TensorFlow's numbers for the same seed and seed2 attrs.
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

absl::Status RandomShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 1));
  c->set_output(0, c->InputAsShape(0));
  return absl::OkStatus();
}

absl::Status RandomIntShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 0));  // minval
  WEFT_RETURN_IF_ERROR(c->WithRank(2, 0));  // maxval
  return RandomShape(c);
}

}  // namespace

void RegisterRandomOps(OpRegistry* r) {
  for (const char* op :
       {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    r->Register(OpDefBuilder(op)
                    .Input("shape: T")
                    .Output("output: dtype")
                    .Attr("seed: int = 0")
                    .Attr("seed2: int = 0")
                    .Attr("dtype: {half, bfloat16, float, double}")
                    .Attr("T: {int32, int64}")
                    .SetIsStateful(),
                RandomShape);
  }
  r->Register(OpDefBuilder("RandomUniformInt")
                  .Input("shape: T")
                  .Input("minval: Tout")
                  .Input("maxval: Tout")
                  .Output("output: Tout")
                  .Attr("seed: int = 0")
                  .Attr("seed2: int = 0")
                  .Attr("Tout: {int32, int64}")
                  .Attr("T: {int32, int64}")
                  .SetIsStateful(),
              RandomIntShape);
}

}  // namespace weft
