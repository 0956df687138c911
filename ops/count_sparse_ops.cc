// The sparse-output counts behind tf.sparse.bincount and Keras
// CategoryEncoding(sparse=True): DenseCountSparseOutput,
// SparseCountSparseOutput and RaggedCountSparseOutput. Each counts the
// values of every batch row (or sums their weights) and returns a sparse
// triple. OpDefs match TensorFlow 2.21's (tests/ops/op_def_compat_test
// checks). Kernels: ops/cpu/count_sparse_kernels.cc.
#include <cstdint>

#include "ops/framework/op_def_builder.h"
#include "ops/framework/op_registry.h"
#include "ops/framework/shape_inference.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// indices [?, rank], values [?], dense_shape [rank]; rank -1 when unknown.
void SetCountOutputs(InferenceContext* c, int64_t rank) {
  c->set_output(0, PartialShape({-1, rank}));
  c->set_output(1, PartialShape({-1}));
  c->set_output(2, PartialShape({rank}));
}

// The rank of the values (the batch dims plus the counted one).
absl::Status DenseCountShape(InferenceContext* c) {
  const PartialShape& values = c->input(0);
  SetCountOutputs(c, values.known_rank() ? values.rank() : -1);
  return absl::OkStatus();
}

// 1 for a 1-D sparse input, else 2 (batch, value): the kernel keeps only
// the first index of each entry as its batch.
absl::Status SparseCountShape(InferenceContext* c) {
  const PartialShape& indices = c->input(0);
  int64_t rank = -1;
  if (indices.known_rank() && indices.rank() == 2 && indices.dim(1) >= 0) {
    rank = indices.dim(1) <= 1 ? indices.dim(1) : 2;
  }
  SetCountOutputs(c, rank);
  return absl::OkStatus();
}

// One more than the rank of the values: the ragged row dimension.
absl::Status RaggedCountShape(InferenceContext* c) {
  const PartialShape& values = c->input(1);
  SetCountOutputs(c, values.known_rank() ? values.rank() + 1 : -1);
  return absl::OkStatus();
}

OpDefBuilder WithCountAttrs(OpDefBuilder b) {
  b.Attr("T: {int32, int64}")
      .Attr("minlength: int >= -1 = -1")
      .Attr("maxlength: int >= -1 = -1")
      .Attr("binary_output: bool")
      .Attr("output_type: {int32, int64, float, double}")
      .Output("output_indices: int64")
      .Output("output_values: output_type")
      .Output("output_dense_shape: int64");
  return b;
}

}  // namespace

// Called by RegisterRaggedOps (ragged_ops.cc).
void RegisterCountSparseOps(OpRegistry* r) {
  r->Register(WithCountAttrs(OpDefBuilder("DenseCountSparseOutput")
                                 .Input("values: T")
                                 .Input("weights: output_type")),
              DenseCountShape);
  r->Register(WithCountAttrs(OpDefBuilder("SparseCountSparseOutput")
                                 .Input("indices: int64")
                                 .Input("values: T")
                                 .Input("dense_shape: int64")
                                 .Input("weights: output_type")),
              SparseCountShape);
  r->Register(WithCountAttrs(OpDefBuilder("RaggedCountSparseOutput")
                                 .Input("splits: int64")
                                 .Input("values: T")
                                 .Input("weights: output_type")),
              RaggedCountShape);
}

}  // namespace weft
