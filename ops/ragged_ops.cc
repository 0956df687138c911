// TensorFlow's ragged ops: RaggedTensorToTensor (a ragged tensor, given as
// flat values plus row partitions, to a dense one, padded or cropped),
// RaggedBincount, RaggedRange, RaggedTensorToSparse, RaggedGather and
// RaggedFillEmptyRows (+Grad).
// OpDefs match TensorFlow 2.21's (tests/ops/op_def_compat_test checks).
// Kernels: ops/cpu/ragged_*_kernels.cc.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "ops/array_shape_fns.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using array_shapes::Dims;

// Rank ragged_rank + rank(values): [?] * (ragged_rank + 1) + values' inner
// dims, each outer dim taken from a constant `shape` where it gives one.
absl::Status RaggedTensorToTensorShape(InferenceContext* c) {
  std::vector<std::string> types;
  WEFT_RETURN_IF_ERROR(c->GetAttr("row_partition_types", &types));
  const int ragged_rank =
      static_cast<int>(types.size()) - (!types.empty() && types[0] == "FIRST_DIM_SIZE" ? 1 : 0);
  const PartialShape& values = c->input(1);
  if (!values.known_rank() || values.rank() < 1 || ragged_rank < 1) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  Dims dims(ragged_rank + 1, -1);
  for (int d = 1; d < values.rank(); ++d) dims.push_back(values.dim(d));
  const PartialShape shape = c->InputAsShape(0);
  if (shape.known_rank() && shape.rank() == static_cast<int>(dims.size())) {
    for (int d = 0; d <= ragged_rank; ++d) dims[d] = shape.dim(d);
  }
  c->set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

// [rows, size]: rows = len(splits) - 1.
absl::Status RaggedBincountShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRank(0, 1));
  const PartialShape& splits = c->input(0);
  int64_t rows = splits.known_rank() && splits.dim(0) > 0 ? splits.dim(0) - 1 : -1;
  int64_t size = -1;
  array_shapes::ConstScalar(c, 2, &size);
  c->set_output(0, PartialShape(Dims{rows, size}));
  return absl::OkStatus();
}

// splits [rows + 1] (rows: the longest of starts, limits, deltas; 1 for
// scalars), values [?].
absl::Status RaggedRangeShape(InferenceContext* c) {
  int64_t rows = 1;
  for (int i = 0; i < 3; ++i) {
    const PartialShape& s = c->input(i);
    if (!s.known_rank()) {
      rows = -1;
      break;
    }
    if (s.rank() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Shape must be at most rank 1 but is rank ", s.rank()));
    }
    if (s.rank() == 1) rows = s.dim(0) < 0 ? -1 : s.dim(0);
  }
  c->set_output(0, PartialShape(Dims{rows < 0 ? -1 : rows + 1}));
  c->set_output(1, PartialShape(Dims{-1}));
  return absl::OkStatus();
}

// indices [?, rank], values [?], dense_shape [rank]: rank = RAGGED_RANK +
// rank(rt_dense_values).
absl::Status RaggedTensorToSparseShape(InferenceContext* c) {
  const PartialShape& values = c->input(c->num_inputs() - 1);
  const int64_t rank =
      values.known_rank() ? c->num_inputs() - 1 + values.rank() : -1;
  c->set_output(0, PartialShape(Dims{-1, rank}));
  c->set_output(1, PartialShape(Dims{-1}));
  c->set_output(2, PartialShape(Dims{rank}));
  return absl::OkStatus();
}

// Splits [?] each, values [?] + params' inner dims.
absl::Status RaggedGatherShape(InferenceContext* c) {
  const int n = c->num_outputs() - 1;
  for (int k = 0; k < n; ++k) c->set_output(k, PartialShape(Dims{-1}));
  const PartialShape& values = c->input(c->num_inputs() - 2);
  if (!values.known_rank()) {
    c->set_output(n, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  Dims dims = {-1};
  for (int d = 1; d < values.rank(); ++d) dims.push_back(values.dim(d));
  c->set_output(n, PartialShape(dims));
  return absl::OkStatus();
}

// output_value_rowids and output_values [?], empty_row_indicator [nrows],
// reverse_index_map as value_rowids.
absl::Status RaggedFillEmptyRowsShape(InferenceContext* c) {
  int64_t nrows = -1;
  array_shapes::ConstScalar(c, 2, &nrows);
  const PartialShape& ids = c->input(0);
  c->set_output(0, PartialShape(Dims{-1}));
  c->set_output(1, PartialShape(Dims{-1}));
  c->set_output(2, PartialShape(Dims{nrows}));
  c->set_output(3, PartialShape(Dims{ids.known_rank() && ids.rank() == 1 ? ids.dim(0) : -1}));
  return absl::OkStatus();
}

// d_values as reverse_index_map, d_default_value a scalar.
absl::Status RaggedFillEmptyRowsGradShape(InferenceContext* c) {
  const PartialShape& map = c->input(0);
  c->set_output(0, PartialShape(Dims{map.known_rank() && map.rank() == 1 ? map.dim(0) : -1}));
  c->set_output(1, PartialShape(Dims{}));
  return absl::OkStatus();
}

}  // namespace

// count_sparse_ops.cc: Dense-, Sparse- and RaggedCountSparseOutput.
void RegisterCountSparseOps(OpRegistry* r);

void RegisterRaggedOps(OpRegistry* r) {
  RegisterCountSparseOps(r);
  r->Register(OpDefBuilder("RaggedTensorToTensor")
                  .Input("shape: Tshape")
                  .Input("values: T")
                  .Input("default_value: T")
                  .Input("row_partition_tensors: num_row_partition_tensors * Tindex")
                  .Output("result: T")
                  .Attr("T: type")
                  .Attr("Tindex: {int64, int32}")
                  .Attr("Tshape: {int64, int32}")
                  .Attr("num_row_partition_tensors: int >= 1")
                  .Attr("row_partition_types: list(string)"),
              RaggedTensorToTensorShape);
  r->Register(OpDefBuilder("RaggedBincount")
                  .Input("splits: int64")
                  .Input("values: Tidx")
                  .Input("size: Tidx")
                  .Input("weights: T")
                  .Output("output: T")
                  .Attr("Tidx: {int32, int64}")
                  .Attr("T: {int32, int64, float, double}")
                  .Attr("binary_output: bool = false"),
              RaggedBincountShape);
  r->Register(OpDefBuilder("RaggedRange")
                  .Input("starts: T")
                  .Input("limits: T")
                  .Input("deltas: T")
                  .Output("rt_nested_splits: Tsplits")
                  .Output("rt_dense_values: T")
                  .Attr("T: {bfloat16, float, double, int32, int64} = DT_INT32")
                  .Attr("Tsplits: {int32, int64} = DT_INT64"),
              RaggedRangeShape);
  r->Register(OpDefBuilder("RaggedTensorToSparse")
                  .Input("rt_nested_splits: RAGGED_RANK * Tsplits")
                  .Input("rt_dense_values: T")
                  .Output("sparse_indices: int64")
                  .Output("sparse_values: T")
                  .Output("sparse_dense_shape: int64")
                  .Attr("RAGGED_RANK: int >= 1")
                  .Attr("T: type")
                  .Attr("Tsplits: {int32, int64} = DT_INT64"),
              RaggedTensorToSparseShape);
  r->Register(OpDefBuilder("RaggedGather")
                  .Input("params_nested_splits: PARAMS_RAGGED_RANK * Tsplits")
                  .Input("params_dense_values: Tvalues")
                  .Input("indices: Tindices")
                  .Output("output_nested_splits: OUTPUT_RAGGED_RANK * Tsplits")
                  .Output("output_dense_values: Tvalues")
                  .Attr("Tvalues: type")
                  .Attr("Tindices: {int32, int64}")
                  .Attr("Tsplits: {int32, int64} = DT_INT64")
                  .Attr("PARAMS_RAGGED_RANK: int >= 1")
                  .Attr("OUTPUT_RAGGED_RANK: int >= 0"),
              RaggedGatherShape);
  r->Register(OpDefBuilder("RaggedFillEmptyRows")
                  .Input("value_rowids: int64")
                  .Input("values: T")
                  .Input("nrows: int64")
                  .Input("default_value: T")
                  .Output("output_value_rowids: int64")
                  .Output("output_values: T")
                  .Output("empty_row_indicator: bool")
                  .Output("reverse_index_map: int64")
                  .Attr("T: type"),
              RaggedFillEmptyRowsShape);
  r->Register(OpDefBuilder("RaggedFillEmptyRowsGrad")
                  .Input("reverse_index_map: int64")
                  .Input("grad_values: T")
                  .Output("d_values: T")
                  .Output("d_default_value: T")
                  .Attr("T: type"),
              RaggedFillEmptyRowsGradShape);
}

}  // namespace weft
