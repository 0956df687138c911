// tf.data transformations whose OpDefs dataset_ops.cc lacks: UnbatchDataset,
// ParallelInterleaveDataset V2 to V4 and LegacyParallelInterleaveDatasetV2
// (TF1's parallel_interleave), CacheDataset (TensorFlow 1.x's graphs) and
// the memory cache resource ops CacheDatasetV2 takes, with TensorFlow
// 2.21's OpDefs. The kernels are in ops/data/.
#include <vector>

#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"

namespace weft {

void RegisterDatasetTransformOps(OpRegistry* r) {
  r->Register(OpDefBuilder("UnbatchDataset")
                  .Input("input_dataset: variant")
                  .Output("handle: variant")
                  .Attr("output_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1")
                  .Attr("metadata: string = ''"),
              ScalarShape);
  // The parallel interleaves: their tuning inputs after block_length, and
  // where their order attr goes ("deterministic: string" before Targuments,
  // "sloppy: bool" after output_shapes).
  struct Interleave {
    const char* op;
    std::vector<const char*> tuning;  // "name: type"
    const char* order_attr_first;     // before Targuments, or null
    const char* order_attr_last;      // after output_shapes, or null
  };
  const std::vector<Interleave> interleaves = {
      {"ParallelInterleaveDatasetV2", {"num_parallel_calls: int64"}, nullptr,
       "sloppy: bool = false"},
      {"ParallelInterleaveDatasetV3", {"num_parallel_calls: int64"},
       "deterministic: string = 'default'", nullptr},
      {"ParallelInterleaveDatasetV4",
       {"buffer_output_elements: int64", "prefetch_input_elements: int64",
        "num_parallel_calls: int64"},
       "deterministic: string = 'default'", nullptr},
      {"LegacyParallelInterleaveDatasetV2",
       {"buffer_output_elements: int64", "prefetch_input_elements: int64"},
       "deterministic: string = 'default'", nullptr},
  };
  for (const Interleave& op : interleaves) {
    OpDefBuilder b(op.op);
    b.Input("input_dataset: variant")
        .Input("other_arguments: Targuments")
        .Input("cycle_length: int64")
        .Input("block_length: int64");
    for (const char* input : op.tuning) b.Input(input);
    b.Output("handle: variant").Attr("f: func");
    if (op.order_attr_first != nullptr) b.Attr(op.order_attr_first);
    b.Attr("Targuments: list(type) >= 0")
        .Attr("output_types: list(type) >= 1")
        .Attr("output_shapes: list(shape) >= 1");
    if (op.order_attr_last != nullptr) b.Attr(op.order_attr_last);
    b.Attr("metadata: string = ''");
    r->Register(b, ScalarShape);
  }
  r->Register(OpDefBuilder("CacheDataset")
                  .Input("input_dataset: variant")
                  .Input("filename: string")
                  .Output("handle: variant")
                  .Attr("output_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1")
                  .Attr("metadata: string = ''"),
              ScalarShape);
  r->Register(OpDefBuilder("DummyMemoryCache")
                  .Output("handle: resource")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("AnonymousMemoryCache")
                  .Output("handle: resource")
                  .Output("deleter: variant")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("DeleteMemoryCache")
                  .Input("handle: resource")
                  .Input("deleter: variant")
                  .SetIsStateful(),
              ScalarShape);
}

}  // namespace weft
