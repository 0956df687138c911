// MatrixDiagV3, MatrixDiagPartV3 and MatrixSetDiagV3 (tf.linalg.diag,
// diag_part, set_diag) as TensorFlow declares them: a band of diagonals
// k = lower..upper, packed one per row, longest first-to-last, each aligned
// left or right as `align` says. Also the older forms: V2 (the same inputs,
// no `align`: diagonals left-aligned) and V1 (the main diagonal only).
// Shape functions resolve what constant k, num_rows and num_cols fix.
// Kernels: ops/cpu/matrix_diag_kernels.cc.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/array_shape_fns.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using array_shapes::Dims;

constexpr char kAlign[] =
    "align: {'LEFT_RIGHT', 'RIGHT_LEFT', 'LEFT_LEFT', 'RIGHT_RIGHT'} = 'RIGHT_LEFT'";

// k (input `i`) as [lower, upper] when constant.
bool ConstBand(InferenceContext* c, int i, int64_t* lower, int64_t* upper) {
  Dims k;
  if (!array_shapes::ConstInts(c, i, &k) || k.empty() || k.size() > 2) return false;
  *lower = k[0];
  *upper = k.back();
  return *lower <= *upper;
}

absl::Status MatrixDiagShape(InferenceContext* c) {
  const PartialShape& diag = c->input(0);
  int64_t lower = 0, upper = 0, rows = 0, cols = 0;
  if (!diag.known_rank() || diag.rank() < 1 || !ConstBand(c, 1, &lower, &upper) ||
      !array_shapes::ConstScalar(c, 2, &rows) || !array_shapes::ConstScalar(c, 3, &cols)) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  Dims out = array_shapes::DimsOf(diag);
  const int64_t len = out.back();
  out.pop_back();
  if (lower != upper) {
    if (out.empty()) {
      return absl::InvalidArgumentError("diagonal must be at least 2-D for a band of k");
    }
    out.pop_back();
  }
  if (len >= 0) {
    const int64_t min_rows = len - std::min<int64_t>(upper, 0);
    const int64_t min_cols = len + std::max<int64_t>(lower, 0);
    if (rows < 0 && cols < 0) rows = cols = std::max(min_rows, min_cols);
    if (rows < 0) rows = min_rows;
    if (cols < 0) cols = min_cols;
  }
  out.push_back(rows < 0 ? -1 : rows);
  out.push_back(cols < 0 ? -1 : cols);
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status MatrixDiagPartShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2));
  const PartialShape& in = c->input(0);
  int64_t lower = 0, upper = 0;
  if (!in.known_rank() || !ConstBand(c, 1, &lower, &upper)) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  Dims out = array_shapes::DimsOf(in);
  const int64_t rows = out[out.size() - 2], cols = out.back();
  out.resize(out.size() - 2);
  if (lower != upper) out.push_back(upper - lower + 1);
  out.push_back(rows < 0 || cols < 0
                    ? -1
                    : std::min(rows + std::min<int64_t>(upper, 0),
                               cols - std::max<int64_t>(lower, 0)));
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// MatrixDiag (V1): [..., n] -> [..., n, n].
absl::Status MatrixDiagV1Shape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1));
  const PartialShape& in = c->input(0);
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  Dims out = array_shapes::DimsOf(in);
  out.push_back(out.back());
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// MatrixDiagPart (V1): [..., m, n] -> [..., min(m, n)].
absl::Status MatrixDiagPartV1Shape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2));
  const PartialShape& in = c->input(0);
  if (!in.known_rank()) {
    c->set_output(0, PartialShape::UnknownRank());
    return absl::OkStatus();
  }
  Dims out = array_shapes::DimsOf(in);
  const int64_t rows = out[out.size() - 2], cols = out.back();
  out.pop_back();
  out.back() = rows < 0 || cols < 0 ? -1 : std::min(rows, cols);
  c->set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status MatrixSetDiagShape(InferenceContext* c) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2));
  return UnchangedShape(c);
}

}  // namespace

void RegisterMatrixDiagOps(OpRegistry* r) {
  // V2 and V3 differ only in V3's `align`.
  for (const char* v : {"V2", "V3"}) {
    const bool v3 = std::string(v) == "V3";
    auto align = [v3](OpDefBuilder& b) -> OpDefBuilder& { return v3 ? b.Attr(kAlign) : b; };
    r->Register(align(OpDefBuilder(absl::StrCat("MatrixDiag", v))
                          .Input("diagonal: T")
                          .Input("k: int32")
                          .Input("num_rows: int32")
                          .Input("num_cols: int32")
                          .Input("padding_value: T")
                          .Output("output: T")
                          .Attr("T: type")),
                MatrixDiagShape);
    r->Register(align(OpDefBuilder(absl::StrCat("MatrixDiagPart", v))
                          .Input("input: T")
                          .Input("k: int32")
                          .Input("padding_value: T")
                          .Output("diagonal: T")
                          .Attr("T: type")),
                MatrixDiagPartShape);
    r->Register(align(OpDefBuilder(absl::StrCat("MatrixSetDiag", v))
                          .Input("input: T")
                          .Input("diagonal: T")
                          .Input("k: int32")
                          .Output("output: T")
                          .Attr("T: type")),
                MatrixSetDiagShape);
  }
  r->Register(OpDefBuilder("MatrixDiag")
                  .Input("diagonal: T")
                  .Output("output: T")
                  .Attr("T: type"),
              MatrixDiagV1Shape);
  r->Register(OpDefBuilder("MatrixDiagPart")
                  .Input("input: T")
                  .Output("diagonal: T")
                  .Attr("T: type"),
              MatrixDiagPartV1Shape);
  r->Register(OpDefBuilder("MatrixSetDiag")
                  .Input("input: T")
                  .Input("diagonal: T")
                  .Output("output: T")
                  .Attr("T: type"),
              MatrixSetDiagShape);
}

}  // namespace weft
