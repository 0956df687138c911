// Reading files into a graph: the file-reading datasets (TFRecordDataset,
// TextLineDataset, FixedLengthRecordDataset, MatchingFilesDataset),
// MatchingFiles, and the parsers of what they read (ParseExampleV2,
// ParseSingleExample, DecodeRaw), with TensorFlow 2.21's OpDefs. Kernels:
// ops/data/file_datasets.cc and ops/cpu/parse_*.cc.
#include <vector>

#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// A file dataset: a variant scalar, stateful as TensorFlow marks it.
OpDefBuilder FileDataset(const char* name, bool metadata) {
  OpDefBuilder b(name);
  b.Input("filenames: string");
  b.Output("handle: variant");
  if (metadata) b.Attr("metadata: string = ''");
  b.SetIsStateful();
  return b;
}

// The dense outputs of a parse op: `prefix` (the batch, or nothing) followed
// by each dense_shapes entry; sparse and ragged outputs left unknown.
absl::Status ParseShapes(InferenceContext* c, std::vector<int64_t> prefix,
                         int first_dense) {
  std::vector<PartialShape> dense;
  WEFT_RETURN_IF_ERROR(c->GetAttr("dense_shapes", &dense));
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape());
  for (size_t d = 0; d < dense.size(); ++d) {
    const int out = first_dense + static_cast<int>(d);
    if (out >= c->num_outputs() || !dense[d].known_rank()) continue;
    std::vector<int64_t> dims = prefix;
    for (int64_t dim : dense[d].dims()) dims.push_back(dim);
    c->set_output(out, PartialShape(dims));
  }
  return absl::OkStatus();
}

absl::Status ParseSingleExampleShape(InferenceContext* c) {
  int64_t num_sparse = 0;
  WEFT_RETURN_IF_ERROR(c->GetAttr("num_sparse", &num_sparse));
  return ParseShapes(c, {}, static_cast<int>(3 * num_sparse));
}

absl::Status ParseExampleV2Shape(InferenceContext* c) {
  int64_t num_sparse = 0;
  WEFT_RETURN_IF_ERROR(c->GetAttr("num_sparse", &num_sparse));
  const PartialShape& serialized = c->input(0);
  if (!serialized.known_rank()) return UnknownShape(c);
  std::vector<int64_t> prefix(serialized.dims().begin(), serialized.dims().end());
  return ParseShapes(c, prefix, static_cast<int>(3 * num_sparse));
}

// DecodeRaw: the input's shape and one more dimension of unknown size.
absl::Status DecodeRawShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  if (!in.known_rank()) return UnknownShape(c);
  std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
  dims.push_back(-1);
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

absl::Status VectorShape(InferenceContext* c) {
  c->set_output(0, PartialShape({-1}));
  return absl::OkStatus();
}

}  // namespace

void RegisterFileDataOps(OpRegistry* r) {
  r->Register(FileDataset("TFRecordDataset", true)
                  .Input("compression_type: string")
                  .Input("buffer_size: int64"),
              ScalarShape);
  r->Register(FileDataset("TFRecordDatasetV2", true)
                  .Input("compression_type: string")
                  .Input("buffer_size: int64")
                  .Input("byte_offsets: int64"),
              ScalarShape);
  r->Register(FileDataset("TextLineDataset", true)
                  .Input("compression_type: string")
                  .Input("buffer_size: int64"),
              ScalarShape);
  r->Register(FileDataset("FixedLengthRecordDataset", true)
                  .Input("header_bytes: int64")
                  .Input("record_bytes: int64")
                  .Input("footer_bytes: int64")
                  .Input("buffer_size: int64"),
              ScalarShape);
  r->Register(FileDataset("FixedLengthRecordDatasetV2", true)
                  .Input("header_bytes: int64")
                  .Input("record_bytes: int64")
                  .Input("footer_bytes: int64")
                  .Input("buffer_size: int64")
                  .Input("compression_type: string"),
              ScalarShape);
  r->Register(OpDefBuilder("MatchingFilesDataset")
                  .Input("patterns: string")
                  .Output("handle: variant")
                  .SetIsStateful(),
              ScalarShape);
  r->Register(OpDefBuilder("MatchingFiles")
                  .Input("pattern: string")
                  .Output("filenames: string"),
              VectorShape);
  r->Register(OpDefBuilder("ParseExampleV2")
                  .Input("serialized: string")
                  .Input("names: string")
                  .Input("sparse_keys: string")
                  .Input("dense_keys: string")
                  .Input("ragged_keys: string")
                  .Input("dense_defaults: Tdense")
                  .Output("sparse_indices: num_sparse * int64")
                  .Output("sparse_values: sparse_types")
                  .Output("sparse_shapes: num_sparse * int64")
                  .Output("dense_values: Tdense")
                  .Output("ragged_values: ragged_value_types")
                  .Output("ragged_row_splits: ragged_split_types")
                  .Attr("Tdense: list({float, int64, string}) >= 0")
                  .Attr("num_sparse: int >= 0")
                  .Attr("sparse_types: list({float, int64, string}) >= 0")
                  .Attr("ragged_value_types: list({float, int64, string}) >= 0")
                  .Attr("ragged_split_types: list({int32, int64}) >= 0")
                  .Attr("dense_shapes: list(shape) >= 0"),
              ParseExampleV2Shape);
  r->Register(OpDefBuilder("ParseSingleExample")
                  .Input("serialized: string")
                  .Input("dense_defaults: Tdense")
                  .Output("sparse_indices: num_sparse * int64")
                  .Output("sparse_values: sparse_types")
                  .Output("sparse_shapes: num_sparse * int64")
                  .Output("dense_values: Tdense")
                  .Attr("num_sparse: int >= 0")
                  .Attr("sparse_keys: list(string) >= 0")
                  .Attr("dense_keys: list(string) >= 0")
                  .Attr("sparse_types: list({float, int64, string}) >= 0")
                  .Attr("Tdense: list({float, int64, string}) >= 0")
                  .Attr("dense_shapes: list(shape) >= 0"),
              ParseSingleExampleShape);
  r->Register(OpDefBuilder("DecodeRaw")
                  .Input("bytes: string")
                  .Output("output: out_type")
                  .Attr("out_type: {half, float, double, int32, uint16, uint8, "
                        "int16, int8, int64, complex64, complex128, bool, "
                        "bfloat16}")
                  .Attr("little_endian: bool = true"),
              DecodeRawShape);
}

}  // namespace weft
