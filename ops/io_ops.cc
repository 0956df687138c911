// Checkpoint ops: SaveV2, RestoreV2 and MergeV2Checkpoints, as TensorFlow
// declares them (the V2 format: runtime/checkpoint/tensor_bundle.h), and
// the string ops TensorFlow's sharded Saver builds its file names with:
// ShardedFilename, StringJoin, StaticRegexFullMatch.
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
  r->Register(OpDefBuilder("ShardedFilename")
                  .Input("basename: string")
                  .Input("shard: int32")
                  .Input("num_shards: int32")
                  .Output("filename: string"),
              ScalarShape);
  r->Register(OpDefBuilder("StringJoin")
                  .Input("inputs: N * string")
                  .Output("output: string")
                  .Attr("N: int >= 0")
                  .Attr("separator: string = ''"),
              UnknownShape);
  r->Register(OpDefBuilder("StaticRegexFullMatch")
                  .Input("input: string")
                  .Output("output: bool")
                  .Attr("pattern: string"),
              UnchangedShape);
  r->Register(OpDefBuilder("MergeV2Checkpoints")
                  .Input("checkpoint_prefixes: string")
                  .Input("destination_prefix: string")
                  .Attr("delete_old_dirs: bool = true")
                  .Attr("allow_missing_files: bool = false")
                  .SetIsStateful(),
              UnknownShape);
}

}  // namespace weft
