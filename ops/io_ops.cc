// Checkpoint ops: SaveV2, RestoreV2 and MergeV2Checkpoints, as TensorFlow
// declares them (the V2 format: runtime/checkpoint/tensor_bundle.h).
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"

namespace weft {

void RegisterIoOps(OpRegistry* r) {
  r->Register(OpDefBuilder("SaveV2")
                  .Input("prefix: string")
                  .Input("tensor_names: string")
                  .Input("shape_and_slices: string")
                  .Input("tensors: dtypes")
                  .Attr("dtypes: list(type) >= 1")
                  .SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("RestoreV2")
                  .Input("prefix: string")
                  .Input("tensor_names: string")
                  .Input("shape_and_slices: string")
                  .Output("tensors: dtypes")
                  .Attr("dtypes: list(type) >= 1")
                  .SetIsStateful(),
              UnknownShape);
  r->Register(OpDefBuilder("MergeV2Checkpoints")
                  .Input("checkpoint_prefixes: string")
                  .Input("destination_prefix: string")
                  .Attr("delete_old_dirs: bool = true")
                  .Attr("allow_missing_files: bool = false")
                  .SetIsStateful(),
              UnknownShape);
}

}  // namespace weft
