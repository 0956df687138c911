// tf.data: the dataset ops TensorFlow 1.x input pipelines and TF 2.x traced
// graphs build (sources, transformations, options), the iterators that
// read them (IteratorV2 with MakeIterator, OneShotIterator, anonymous
// iterators), string handles, optionals and seed generators, with
// TensorFlow 2.21's OpDefs. A dataset is a DT_VARIANT scalar; an iterator a
// DT_RESOURCE scalar. The kernels are in ops/data/.
#include <vector>

#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"

namespace weft {
namespace {

// IteratorGetNext and friends: one output per `output_shapes` entry.
absl::Status ElementShapes(InferenceContext* c) {
  std::vector<PartialShape> shapes;
  absl::Status s = c->GetAttr("output_shapes", &shapes);
  if (!s.ok() || static_cast<int>(shapes.size()) != c->num_outputs()) {
    return UnknownShape(c);
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, shapes[i]);
  return absl::OkStatus();
}

// A dataset op: its inputs (added by the caller), a variant handle out, the
// element signature attrs, and TensorFlow's `metadata` attr where it has one.
OpDefBuilder Dataset(const char* name, bool metadata) {
  OpDefBuilder b(name);
  b.Output("handle: variant")
      .Attr("output_types: list(type) >= 1")
      .Attr("output_shapes: list(shape) >= 1");
  if (metadata) b.Attr("metadata: string = ''");
  return b;
}

}  // namespace

void RegisterDatasetOps(OpRegistry* r) {
  r->Register(OpDefBuilder("TensorDataset")
                  .Input("components: Toutput_types")
                  .Output("handle: variant")
                  .Attr("Toutput_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1")
                  .Attr("metadata: string = ''")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("TensorSliceDataset")
                  .Input("components: Toutput_types")
                  .Output("handle: variant")
                  .Attr("Toutput_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1")
                  .Attr("is_files: bool = false")
                  .Attr("metadata: string = ''")
                  .Attr("replicate_on_split: bool = false")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(Dataset("RangeDataset", true)
                  .Input("start: int64")
                  .Input("stop: int64")
                  .Input("step: int64")
                  .Attr("replicate_on_split: bool = false")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(Dataset("MapDataset", true)
                  .Input("input_dataset: variant")
                  .Input("other_arguments: Targuments")
                  .Attr("f: func")
                  .Attr("Targuments: list(type) >= 0")
                  .Attr("use_inter_op_parallelism: bool = true")
                  .Attr("preserve_cardinality: bool = false")
                  .Attr("force_synchronous: bool = false"),
              ScalarShape);
  r->Register(Dataset("ParallelMapDatasetV2", true)
                  .Input("input_dataset: variant")
                  .Input("other_arguments: Targuments")
                  .Input("num_parallel_calls: int64")
                  .Attr("f: func")
                  .Attr("Targuments: list(type) >= 0")
                  .Attr("use_inter_op_parallelism: bool = true")
                  .Attr("deterministic: string = 'default'")
                  .Attr("preserve_cardinality: bool = false")
                  .Attr("use_unbounded_threadpool: bool = false"),
              ScalarShape);
  r->Register(Dataset("FilterDataset", true)
                  .Input("input_dataset: variant")
                  .Input("other_arguments: Targuments")
                  .Attr("predicate: func")
                  .Attr("Targuments: list(type) >= 0"),
              ScalarShape);
  r->Register(Dataset("BatchDatasetV2", true)
                  .Input("input_dataset: variant")
                  .Input("batch_size: int64")
                  .Input("drop_remainder: bool")
                  .Attr("parallel_copy: bool = false"),
              ScalarShape);
  r->Register(OpDefBuilder("PaddedBatchDatasetV2")
                  .Input("input_dataset: variant")
                  .Input("batch_size: int64")
                  .Input("padded_shapes: N * int64")
                  .Input("padding_values: Toutput_types")
                  .Input("drop_remainder: bool")
                  .Output("handle: variant")
                  .Attr("parallel_copy: bool = false")
                  .Attr("Toutput_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1")
                  .Attr("N: int >= 1")
                  .Attr("metadata: string = ''"),
              ScalarShape);
  for (const char* op : {"RepeatDataset", "TakeDataset", "SkipDataset"}) {
    r->Register(Dataset(op, true)
                    .Input("input_dataset: variant")
                    .Input("count: int64"),
                ScalarShape);
  }
  r->Register(Dataset("ShuffleDataset", true)
                  .Input("input_dataset: variant")
                  .Input("buffer_size: int64")
                  .Input("seed: int64")
                  .Input("seed2: int64")
                  .Attr("reshuffle_each_iteration: bool = true"),
              ScalarShape);
  r->Register(Dataset("ShuffleDatasetV2", true)
                  .Input("input_dataset: variant")
                  .Input("buffer_size: int64")
                  .Input("seed_generator: resource")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(Dataset("ShuffleDatasetV3", true)
                  .Input("input_dataset: variant")
                  .Input("buffer_size: int64")
                  .Input("seed: int64")
                  .Input("seed2: int64")
                  .Input("seed_generator: resource")
                  .Attr("reshuffle_each_iteration: bool = true")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(Dataset("ShuffleAndRepeatDataset", true)
                  .Input("input_dataset: variant")
                  .Input("buffer_size: int64")
                  .Input("seed: int64")
                  .Input("seed2: int64")
                  .Input("count: int64")
                  .Attr("reshuffle_each_iteration: bool = true"),
              ScalarShape);
  r->Register(Dataset("ShuffleAndRepeatDatasetV2", true)
                  .Input("input_dataset: variant")
                  .Input("buffer_size: int64")
                  .Input("seed: int64")
                  .Input("seed2: int64")
                  .Input("count: int64")
                  .Input("seed_generator: resource")
                  .Attr("reshuffle_each_iteration: bool = true")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(Dataset("PrefetchDataset", true)
                  .Input("input_dataset: variant")
                  .Input("buffer_size: int64")
                  .Attr("slack_period: int = 0")
                  .Attr("legacy_autotune: bool = true")
                  .Attr("buffer_size_min: int = 0"),
              ScalarShape);
  r->Register(Dataset("ScanDataset", true)
                  .Input("input_dataset: variant")
                  .Input("initial_state: Tstate")
                  .Input("other_arguments: Targuments")
                  .Attr("f: func")
                  .Attr("Tstate: list(type) >= 1")
                  .Attr("Targuments: list(type) >= 0")
                  .Attr("preserve_cardinality: bool = false")
                  .Attr("use_default_device: bool = true"),
              ScalarShape);
  r->Register(OpDefBuilder("ReduceDataset")
                  .Input("input_dataset: variant")
                  .Input("initial_state: Tstate")
                  .Input("other_arguments: Targuments")
                  .Output("components: output_types")
                  .Attr("f: func")
                  .Attr("Tstate: list(type) >= 1")
                  .Attr("Targuments: list(type) >= 0")
                  .Attr("output_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1")
                  .Attr("use_inter_op_parallelism: bool = true")
                  .Attr("metadata: string = ''")
                  .SetIsStateful(),
              ElementShapes);
  r->Register(Dataset("ZipDataset", true)
                  .Input("input_datasets: N * variant")
                  .Attr("N: int >= 1"),
              ScalarShape);
  r->Register(Dataset("ConcatenateDataset", true)
                  .Input("input_dataset: variant")
                  .Input("another_dataset: variant"),
              ScalarShape);
  r->Register(Dataset("FlatMapDataset", true)
                  .Input("input_dataset: variant")
                  .Input("other_arguments: Targuments")
                  .Attr("f: func")
                  .Attr("Targuments: list(type) >= 0"),
              ScalarShape);
  r->Register(Dataset("InterleaveDataset", true)
                  .Input("input_dataset: variant")
                  .Input("other_arguments: Targuments")
                  .Input("cycle_length: int64")
                  .Input("block_length: int64")
                  .Attr("f: func")
                  .Attr("Targuments: list(type) >= 0"),
              ScalarShape);
  r->Register(Dataset("ShardDataset", true)
                  .Input("input_dataset: variant")
                  .Input("num_shards: int64")
                  .Input("index: int64")
                  .Attr("require_non_empty: bool = false"),
              ScalarShape);
  r->Register(Dataset("CacheDatasetV2", true)
                  .Input("input_dataset: variant")
                  .Input("filename: string")
                  .Input("cache: resource")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(Dataset("OptionsDataset", true)
                  .Input("input_dataset: variant")
                  .Attr("serialized_options: string"),
              ScalarShape);
  r->Register(Dataset("ModelDataset", false)
                  .Input("input_dataset: variant")
                  .Attr("algorithm: int = 0")
                  .Attr("cpu_budget: int = 0")
                  .Attr("ram_budget: int = 0"),
              ScalarShape);
  r->Register(Dataset("MapAndBatchDataset", true)
                  .Input("input_dataset: variant")
                  .Input("other_arguments: Targuments")
                  .Input("batch_size: int64")
                  .Input("num_parallel_calls: int64")
                  .Input("drop_remainder: bool")
                  .Attr("f: func")
                  .Attr("Targuments: list(type) >= 0")
                  .Attr("preserve_cardinality: bool = false"),
              ScalarShape);
  r->Register(Dataset("OptimizeDatasetV2", false)
                  .Input("input_dataset: variant")
                  .Input("optimizations_enabled: string")
                  .Input("optimizations_disabled: string")
                  .Input("optimizations_default: string")
                  .Attr("optimization_configs: list(string) = []"),
              ScalarShape);
  r->Register(Dataset("FinalizeDataset", false)
                  .Input("input_dataset: variant")
                  .Attr("has_captured_ref: bool = false"),
              ScalarShape);
  r->Register(OpDefBuilder("IteratorV2")
                  .Output("handle: resource")
                  .Attr("shared_name: string")
                  .Attr("container: string")
                  .Attr("output_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("AnonymousIteratorV2")
                  .Output("handle: resource")
                  .Output("deleter: variant")
                  .Attr("output_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("AnonymousIteratorV3")
                  .Output("handle: resource")
                  .Attr("output_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("MakeIterator")
                  .Input("dataset: variant")
                  .Input("iterator: resource")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("IteratorGetNext")
                  .Input("iterator: resource")
                  .Output("components: output_types")
                  .Attr("output_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1")
                  .SetIsStateful(),
              ElementShapes);
  r->Register(OpDefBuilder("IteratorGetNextSync")
                  .Input("iterator: resource")
                  .Output("components: output_types")
                  .Attr("output_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1")
                  .SetIsStateful(),
              ElementShapes);
  r->Register(OpDefBuilder("OneShotIterator")
                  .Output("handle: resource")
                  .Attr("dataset_factory: func")
                  .Attr("output_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1")
                  .Attr("container: string = ''")
                  .Attr("shared_name: string = ''")
                  .SetIsStateful(),
              ScalarShape);
  // The deleters of anonymous resources.
  for (const char* op : {"DeleteIterator", "DeleteSeedGenerator",
                         "DeleteRandomSeedGenerator"}) {
    r->Register(OpDefBuilder(op)
                    .Input("handle: resource")
                    .Input("deleter: variant")
                    .SetIsStateful(),
                ScalarShape);
  }
  r->Register(OpDefBuilder("IteratorToStringHandle")
                  .Input("resource_handle: resource")
                  .Output("string_handle: string")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("IteratorFromStringHandleV2")
                  .Input("string_handle: string")
                  .Output("resource_handle: resource")
                  .Attr("output_types: list(type) >= 0 = []")
                  .Attr("output_shapes: list(shape) >= 0 = []")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("IteratorGetNextAsOptional")
                  .Input("iterator: resource")
                  .Output("optional: variant")
                  .Attr("output_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("OptionalFromValue")
                  .Input("components: Toutput_types")
                  .Output("optional: variant")
                  .Attr("Toutput_types: list(type) >= 1"),
              ScalarShape);
  r->Register(OpDefBuilder("OptionalNone")
                  .Output("optional: variant"),
              ScalarShape);
  r->Register(OpDefBuilder("OptionalHasValue")
                  .Input("optional: variant")
                  .Output("has_value: bool"),
              ScalarShape);
  r->Register(OpDefBuilder("OptionalGetValue")
                  .Input("optional: variant")
                  .Output("components: output_types")
                  .Attr("output_types: list(type) >= 1")
                  .Attr("output_shapes: list(shape) >= 1"),
              ElementShapes);
  r->Register(OpDefBuilder("DatasetCardinality")
                  .Input("input_dataset: variant")
                  .Output("cardinality: int64")
                  .Attr("cardinality_options: string = ''"),
              ScalarShape);
  r->Register(OpDefBuilder("AnonymousSeedGenerator")
                  .Input("seed: int64")
                  .Input("seed2: int64")
                  .Input("reshuffle: bool")
                  .Output("handle: resource")
                  .Output("deleter: variant")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("AnonymousRandomSeedGenerator")
                  .Input("seed: int64")
                  .Input("seed2: int64")
                  .Output("handle: resource")
                  .Output("deleter: variant")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("DummySeedGenerator")
                  .Output("handle: resource")
                  .SetIsStateful(),
              ScalarShape);
}

}  // namespace weft
