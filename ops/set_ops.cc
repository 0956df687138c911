// Set operations along the last dimension (tf.sets): DenseToDense-,
// DenseToSparse- and SparseToSparseSetOperation (a-b, b-a, intersection,
// union of each row's values, as a SparseTensor) and SetSize (the number of
// distinct values of each row of a SparseTensor). OpDefs match TensorFlow
// 2.21's (tests/ops/op_def_compat_test checks); the shape functions give the
// output rank where the inputs fix it and check the ranks agree.
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

const char kSetTypes[] =
    "T: {int8, int16, int32, int64, uint8, uint16, string}";

// The rank a sparse input's shape vector (input `shape_in`) and indices
// matrix (input `indices_in`) agree on, or -1 when neither says.
absl::Status SparseRank(InferenceContext* c, int indices_in, int shape_in,
                        int64_t* rank) {
  WEFT_RETURN_IF_ERROR(c->WithRank(indices_in, 2));
  WEFT_RETURN_IF_ERROR(c->WithRank(indices_in + 1, 1));
  WEFT_RETURN_IF_ERROR(c->WithRank(shape_in, 1));
  const PartialShape& ix = c->input(indices_in);
  const PartialShape& sh = c->input(shape_in);
  const int64_t from_ix = ix.known_rank() ? ix.dim(1) : -1;
  const int64_t from_sh = sh.known_rank() ? sh.dim(0) : -1;
  if (from_ix >= 0 && from_sh >= 0 && from_ix != from_sh) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Dimensions must be equal, but are ", from_ix, " and ", from_sh,
        " for the rank of sparse input ", indices_in));
  }
  *rank = from_ix >= 0 ? from_ix : from_sh;
  return absl::OkStatus();
}

// The rank of dense input i (at least 2), or -1 when unknown.
absl::Status DenseRank(InferenceContext* c, int i, int64_t* rank) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(i, 2));
  *rank = c->input(i).known_rank() ? c->input(i).rank() : -1;
  return absl::OkStatus();
}

// Outputs of a set operation whose inputs have ranks r1 and r2 (-1 unknown):
// indices [?, rank], values [?], shape [rank].
absl::Status SetResult(InferenceContext* c, int64_t r1, int64_t r2) {
  if (r1 >= 0 && r2 >= 0 && r1 != r2) {
    return absl::InvalidArgumentError(
        absl::StrCat("Mismatched ranks ", r1, " and ", r2));
  }
  const int64_t rank = r1 >= 0 ? r1 : r2;
  c->set_output(0, PartialShape({-1, rank}));
  c->set_output(1, PartialShape({-1}));
  c->set_output(2, PartialShape({rank}));
  return absl::OkStatus();
}

absl::Status DenseToDenseShape(InferenceContext* c) {
  int64_t r1 = -1, r2 = -1;
  WEFT_RETURN_IF_ERROR(DenseRank(c, 0, &r1));
  WEFT_RETURN_IF_ERROR(DenseRank(c, 1, &r2));
  if (r1 >= 0 && r1 == r2) {  // all but the last dim must agree
    for (int d = 0; d + 1 < r1; ++d) {
      const int64_t a = c->input(0).dim(d), b = c->input(1).dim(d);
      if (a >= 0 && b >= 0 && a != b) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Dimension ", d, " in both shapes must be equal, but are ", a,
            " and ", b, ". Shapes are ", c->input(0).DebugString(), " and ",
            c->input(1).DebugString(), "."));
      }
    }
  }
  return SetResult(c, r1, r2);
}

absl::Status DenseToSparseShape(InferenceContext* c) {
  int64_t r1 = -1, r2 = -1;
  WEFT_RETURN_IF_ERROR(DenseRank(c, 0, &r1));
  WEFT_RETURN_IF_ERROR(SparseRank(c, 1, 3, &r2));
  return SetResult(c, r1, r2);
}

absl::Status SparseToSparseShape(InferenceContext* c) {
  int64_t r1 = -1, r2 = -1;
  WEFT_RETURN_IF_ERROR(SparseRank(c, 0, 2, &r1));
  WEFT_RETURN_IF_ERROR(SparseRank(c, 3, 5, &r2));
  return SetResult(c, r1, r2);
}

absl::Status SetSizeShape(InferenceContext* c) {
  int64_t rank = -1;
  WEFT_RETURN_IF_ERROR(SparseRank(c, 0, 2, &rank));
  c->set_output(0, rank >= 2 ? PartialShape(std::vector<int64_t>(rank - 1, -1))
                             : PartialShape::UnknownRank());
  return absl::OkStatus();
}

OpDefBuilder SetOperation(const char* name) {
  return OpDefBuilder(name)
      .Output("result_indices: int64")
      .Output("result_values: T")
      .Output("result_shape: int64")
      .Attr("set_operation: string")
      .Attr("validate_indices: bool = true")
      .Attr(kSetTypes);
}

}  // namespace

void RegisterSetOps(OpRegistry* r) {
  r->Register(SetOperation("DenseToDenseSetOperation")
                  .Input("set1: T")
                  .Input("set2: T"),
              DenseToDenseShape);
  r->Register(SetOperation("DenseToSparseSetOperation")
                  .Input("set1: T")
                  .Input("set2_indices: int64")
                  .Input("set2_values: T")
                  .Input("set2_shape: int64"),
              DenseToSparseShape);
  r->Register(SetOperation("SparseToSparseSetOperation")
                  .Input("set1_indices: int64")
                  .Input("set1_values: T")
                  .Input("set1_shape: int64")
                  .Input("set2_indices: int64")
                  .Input("set2_values: T")
                  .Input("set2_shape: int64"),
              SparseToSparseShape);
  r->Register(OpDefBuilder("SetSize")
                  .Input("set_indices: int64")
                  .Input("set_values: T")
                  .Input("set_shape: int64")
                  .Output("size: int32")
                  .Attr("validate_indices: bool = true")
                  .Attr(kSetTypes),
              SetSizeShape);
}

}  // namespace weft
