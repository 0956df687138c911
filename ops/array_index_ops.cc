// Indexing and checking ops as TensorFlow declares them: TopKV2, Roll,
// ReverseSequence, MatrixBandPart, Diag, DiagPart, CheckNumerics and
// CheckNumericsV2 (and, through RegisterMatrixDiagOps, the MatrixDiag*V3
// ops of matrix_diag_ops.cc). Shape functions check what known ranks and constant k
// already rule out. Kernels: ops/cpu/topk_kernels.cc,
// ops/cpu/roll_kernels.cc, ops/cpu/matrix_band_kernels.cc,
// ops/cpu/check_numerics_kernels.cc.
#include "absl/strings/str_cat.h"
#include "ops/array_shape_fns.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using array_shapes::Dims;

// values and indices: the input's shape with the last dim k.
absl::Status TopKShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
  WEFT_RETURN_IF_ERROR(c->WithRank(1, 0));
  const PartialShape& in = c->input(0);
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    c->set_output(1, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  Dims out = array_shapes::DimsOf(in);
  int64_t k = -1;
  if (array_shapes::ConstScalar(c, 1, &k)) {
    if (k < 0) {
      return absl::InvalidArgumentError(absl::StrCat("Need k >= 0, got ", k));
    }
    const int64_t last = out.back();
    if (last >= 0 && last < k) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must have last dimension >= k = ", k,
                       " but is ", last));
    }
  }
  out.back() = k;
  c->set_output(0, PartialShape(out));
  c->set_output(1, PartialShape(out));
  return absl::OkStatus();
}

absl::Status AtLeastMatrixShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2));
  return UnchangedShape(c);
}

// Diag: [d...] -> [d..., d...].
absl::Status DiagShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
  const PartialShape& in = c->input(0);
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  Dims out = array_shapes::DimsOf(in);
  out.insert(out.end(), in.dims().begin(), in.dims().end());
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// DiagPart: [d..., d...] -> [d...].
absl::Status DiagPartShape(InferenceContext* c) {
  const PartialShape& in = c->input(0);
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  if (in.rank() == 0 || in.rank() % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input must have even and non-zero rank, input rank is ", in.rank()));
  }
  const int half = in.rank() / 2;
  Dims out(half, -1);
  for (int i = 0; i < half; ++i) {
    const int64_t a = in.dim(i), b = in.dim(i + half);
    if (a >= 0 && b >= 0 && a != b) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Dimensions ", i, " and ", i + half, " of ", in.DebugString(),
          " must be equal"));
    }
    out[i] = a >= 0 ? a : b;
  }
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

constexpr char kFloatTypes[] = "T: {bfloat16, half, float, double}";
constexpr char kDiagTypes[] =
    "T: {bfloat16, half, float, double, int32, int64, complex64, complex128}";

}  // namespace

void RegisterArrayIndexOps(OpRegistry* r) {
  r->Register(OpDefBuilder("TopKV2")
                  .Input("input: T")
                  .Input("k: Tk")
                  .Output("values: T")
                  .Output("indices: index_type")
                  .Attr("sorted: bool = true")
                  .Attr("T: {float, double, int32, uint8, int16, int8, int64, "
                        "bfloat16, uint16, half, uint32, uint64}")
                  .Attr("Tk: {int16, int32, int64} = DT_INT32")
                  .Attr("index_type: {int16, int32, int64} = DT_INT32"),
              TopKShape);
  r->Register(OpDefBuilder("Roll")
                  .Input("input: T")
                  .Input("shift: Tshift")
                  .Input("axis: Taxis")
                  .Output("output: T")
                  .Attr("T: type")
                  .Attr("Tshift: {int32, int64}")
                  .Attr("Taxis: {int32, int64}"),
              UnchangedShape);
  r->Register(OpDefBuilder("ReverseSequence")
                  .Input("input: T")
                  .Input("seq_lengths: Tlen")
                  .Output("output: T")
                  .Attr("seq_dim: int")
                  .Attr("batch_dim: int = 0")
                  .Attr("T: type")
                  .Attr("Tlen: {int32, int64} = DT_INT64"),
              UnchangedShape);
  r->Register(OpDefBuilder("MatrixBandPart")
                  .Input("input: T")
                  .Input("num_lower: Tindex")
                  .Input("num_upper: Tindex")
                  .Output("band: T")
                  .Attr("T: type")
                  .Attr("Tindex: {int32, int64} = DT_INT64"),
              AtLeastMatrixShape);
  r->Register(OpDefBuilder("Diag")
                  .Input("diagonal: T")
                  .Output("output: T")
                  .Attr(kDiagTypes),
              DiagShape);
  r->Register(OpDefBuilder("DiagPart")
                  .Input("input: T")
                  .Output("diagonal: T")
                  .Attr(kDiagTypes),
              DiagPartShape);
  for (const char* op : {"CheckNumerics", "CheckNumericsV2"}) {
    r->Register(OpDefBuilder(op)
                    .Input("tensor: T")
                    .Output("output: T")
                    .Attr(kFloatTypes)
                    .Attr("message: string")
                    .SetIsStateful(),
                UnchangedShape);
  }
  RegisterMatrixDiagOps(r);
}

}  // namespace weft
