// tf.data transformations whose OpDefs dataset_ops.cc lacks: UnbatchDataset,
// ParallelInterleaveDatasetV4, CacheDataset (TensorFlow 1.x's graphs) and
// the memory cache resource ops CacheDatasetV2 takes, with TensorFlow
// 2.21's OpDefs. The kernels are in ops/data/.
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
  r->Register(OpDefBuilder("ParallelInterleaveDatasetV4")
                  .Input("input_dataset: variant")
                  .Input("other_arguments: Targuments")
                  .Input("cycle_length: int64")
                  .Input("block_length: int64")
                  .Input("buffer_output_elements: int64")
                  .Input("prefetch_input_elements: int64")
                  .Input("num_parallel_calls: int64")
                  .Output("handle: variant")
                  .Attr("f: func")
                  .Attr("deterministic: string = 'default'")
                  .Attr("Targuments: list(type) >= 0")
                  .Attr("output_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1")
                  .Attr("metadata: string = ''"),
              ScalarShape);
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
