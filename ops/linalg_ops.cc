// TensorFlow's dense linear algebra ops (tf.linalg): inverse, determinants,
// solves, Cholesky and its gradient, QR, the symmetric eigensolver, SVD and
// least squares, each on a batch of matrices [..., M, N], with TensorFlow
// 2.21's OpDefs. Shape functions fill in what the known dims fix and
// reject only shapes that can never work (rank < 2, a known non-square
// matrix where one must be square, rows that cannot match). Kernels:
// ops/cpu/linalg_kernels.cc and ops/cpu/linalg_decomp_kernels.cc.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/shape_inference.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using Dims = std::vector<int64_t>;

constexpr char kFloats[] = "T: {double, float, half, complex64, complex128}";
constexpr char kFloatsHalfFirst[] = "T: {half, float, double, complex64, complex128}";

// Merges two dims known to be equal (-1: unknown); false if they clash.
bool MergeDim(int64_t a, int64_t b, int64_t* out) {
  if (a >= 0 && b >= 0 && a != b) return false;
  *out = a >= 0 ? a : b;
  return true;
}

// Input i as a batch of matrices: whether its rank is known, and then its
// batch dims, rows and columns.
struct MatrixShape {
  bool known = false;
  Dims batch;
  int64_t rows = -1, cols = -1;
};

// INVALID_ARGUMENT when input i's rank is below 2, or when `square` and
// its two known sizes differ.
absl::Status Matrices(InferenceContext* c, int i, bool square, MatrixShape* out) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(i, 2));
  const PartialShape& s = c->input(i);
  out->known = s.known_rank();
  if (!out->known) return absl::OkStatus();
  out->batch.assign(s.dims().begin(), s.dims().end() - 2);
  out->rows = s.dim(s.rank() - 2);
  out->cols = s.dim(s.rank() - 1);
  if (square) {
    if (!MergeDim(out->rows, out->cols, &out->rows)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input matrix must be square; input ", i, " has shape ",
          s.DebugString()));
    }
    out->cols = out->rows;
  }
  return absl::OkStatus();
}

// Inputs 0 and 1 (input 0 square when `square`), and whether both ranks
// are known; where not, output 0 is left unknown.
absl::StatusOr<bool> TwoMatrices(InferenceContext* c, bool square, MatrixShape* a,
                                 MatrixShape* b) {
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, square, a));
  WEFT_RETURN_IF_ERROR(Matrices(c, 1, false, b));
  if (!a->known || !b->known) c->set_output(0, PartialShape());
  return a->known && b->known;
}

Dims With(Dims batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

// Batch dims + tail where the input's rank is known, else unknown.
PartialShape Out(const MatrixShape& in, std::initializer_list<int64_t> tail) {
  return in.known ? PartialShape(With(in.batch, tail)) : PartialShape();
}

// [..., N, N] -> the same (MatrixInverse, Cholesky).
absl::Status SquareShape(InferenceContext* c) {
  MatrixShape in;
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, true, &in));
  c->set_output(0, Out(in, {in.rows, in.rows}));
  return absl::OkStatus();
}

// [..., N, N] -> [...] for every output (the determinants).
absl::Status DeterminantShape(InferenceContext* c) {
  MatrixShape in;
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, true, &in));
  for (int o = 0; o < c->num_outputs(); ++o) {
    c->set_output(o, in.known ? PartialShape(in.batch) : PartialShape());
  }
  return absl::OkStatus();
}

// Merges two batch shapes that must be equal (unknown when either is).
bool MergeBatch(const Dims& a, const Dims& b, Dims* out) {
  if (a.size() != b.size()) return false;
  out->resize(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (!MergeDim(a[i], b[i], &(*out)[i])) return false;
  }
  return true;
}

// matrix [..., M, M] (or [..., M, N] for least squares), rhs [..., M, K]
// -> [..., N, K], the batch dims equal (MatrixSolve, MatrixSolveLs).
absl::Status SolveShape(InferenceContext* c, bool square) {
  MatrixShape a, b;
  absl::StatusOr<bool> known = TwoMatrices(c, square, &a, &b);
  if (!known.ok() || !*known) return known.status();
  Dims batch;
  int64_t m;
  if (!MergeDim(a.rows, b.rows, &m)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input matrix and rhs are incompatible: matrix has shape ",
        c->input(0).DebugString(), ", rhs ", c->input(1).DebugString()));
  }
  if (!MergeBatch(a.batch, b.batch, &batch)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "All input tensors must have the same outer dimensions: matrix has "
        "shape ", c->input(0).DebugString(), ", rhs ", c->input(1).DebugString()));
  }
  c->set_output(0, PartialShape(With(batch, {a.cols, b.cols})));
  return absl::OkStatus();
}

// MatrixTriangularSolve: the batch dims broadcast.
absl::Status TriangularSolveShape(InferenceContext* c) {
  MatrixShape a, b;
  absl::StatusOr<bool> known = TwoMatrices(c, true, &a, &b);
  if (!known.ok() || !*known) return known.status();
  int64_t m;
  if (!MergeDim(a.rows, b.rows, &m)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "In[0] mismatch In[1] shape: matrix has shape ", c->input(0).DebugString(),
        ", rhs ", c->input(1).DebugString()));
  }
  absl::StatusOr<PartialShape> batch =
      BroadcastShapes(PartialShape(a.batch), PartialShape(b.batch));
  if (!batch.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "In[0] and In[1] must have compatible batch dimensions: ",
        c->input(0).DebugString(), " vs. ", c->input(1).DebugString()));
  }
  Dims out(batch->dims().begin(), batch->dims().end());
  c->set_output(0, PartialShape(With(out, {m, b.cols})));
  return absl::OkStatus();
}

int64_t MinDim(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a < 0 || b < 0 ? -1 : std::min(a, b);
}

absl::Status QrShape(InferenceContext* c) {
  MatrixShape in;
  bool full;
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, false, &in));
  WEFT_RETURN_IF_ERROR(c->GetAttr("full_matrices", &full));
  const int64_t p = full ? in.rows : MinDim(in.rows, in.cols);
  c->set_output(0, Out(in, {in.rows, p}));
  c->set_output(1, Out(in, {p, in.cols}));
  return absl::OkStatus();
}

// Without vectors, the kernels' v (and u) outputs are placeholder scalars.
absl::Status EigShape(InferenceContext* c) {
  MatrixShape in;
  bool compute_v;
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, true, &in));
  WEFT_RETURN_IF_ERROR(c->GetAttr("compute_v", &compute_v));
  c->set_output(0, Out(in, {in.rows}));
  c->set_output(1, compute_v ? Out(in, {in.rows, in.rows}) : PartialShape({}));
  return absl::OkStatus();
}

absl::Status SvdShape(InferenceContext* c) {
  MatrixShape in;
  bool compute_uv, full;
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, false, &in));
  WEFT_RETURN_IF_ERROR(c->GetAttr("compute_uv", &compute_uv));
  WEFT_RETURN_IF_ERROR(c->GetAttr("full_matrices", &full));
  const int64_t m = in.rows, n = in.cols, p = MinDim(m, n);
  c->set_output(0, Out(in, {p}));
  c->set_output(1, compute_uv ? Out(in, {m, full ? m : p}) : PartialShape({}));
  c->set_output(2, compute_uv ? Out(in, {n, full ? n : p}) : PartialShape({}));
  return absl::OkStatus();
}

absl::Status CholeskyGradShape(InferenceContext* c) {
  MatrixShape l, g;
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, true, &l));
  WEFT_RETURN_IF_ERROR(Matrices(c, 1, true, &g));
  if (!l.known || !g.known) {
    c->set_output(0, l.known ? c->input(0) : c->input(1));
    return absl::OkStatus();
  }
  Dims batch;
  int64_t n;
  if (!MergeDim(l.rows, g.rows, &n) || !MergeBatch(l.batch, g.batch, &batch)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Inputs (L and grad) must have the same shape: ", c->input(0).DebugString(),
        " vs. ", c->input(1).DebugString()));
  }
  c->set_output(0, PartialShape(With(batch, {n, n})));
  return absl::OkStatus();
}

}  // namespace

void RegisterLinalgOps(OpRegistry* r) {
  r->Register(OpDefBuilder("MatrixInverse")
                  .Input("input: T")
                  .Output("output: T")
                  .Attr("adjoint: bool = false")
                  .Attr(kFloats),
              SquareShape);
  r->Register(OpDefBuilder("MatrixDeterminant")
                  .Input("input: T")
                  .Output("output: T")
                  .Attr(kFloatsHalfFirst),
              DeterminantShape);
  r->Register(OpDefBuilder("LogMatrixDeterminant")
                  .Input("input: T")
                  .Output("sign: T")
                  .Output("log_abs_determinant: T")
                  .Attr(kFloatsHalfFirst),
              DeterminantShape);
  r->Register(OpDefBuilder("Cholesky")
                  .Input("input: T")
                  .Output("output: T")
                  .Attr(kFloats),
              SquareShape);
  r->Register(OpDefBuilder("CholeskyGrad")
                  .Input("l: T")
                  .Input("grad: T")
                  .Output("output: T")
                  .Attr("T: {half, float, double}"),
              CholeskyGradShape);
  r->Register(OpDefBuilder("MatrixSolve")
                  .Input("matrix: T")
                  .Input("rhs: T")
                  .Output("output: T")
                  .Attr("adjoint: bool = false")
                  .Attr(kFloats),
              [](InferenceContext* c) { return SolveShape(c, true); });
  r->Register(OpDefBuilder("MatrixTriangularSolve")
                  .Input("matrix: T")
                  .Input("rhs: T")
                  .Output("output: T")
                  .Attr("lower: bool = true")
                  .Attr("adjoint: bool = false")
                  .Attr("T: {bfloat16, double, float, half, complex64, complex128}"),
              TriangularSolveShape);
  r->Register(OpDefBuilder("MatrixSolveLs")
                  .Input("matrix: T")
                  .Input("rhs: T")
                  .Input("l2_regularizer: double")
                  .Output("output: T")
                  .Attr(kFloats)
                  .Attr("fast: bool = true"),
              [](InferenceContext* c) {
                WEFT_RETURN_IF_ERROR(c->WithRank(2, 0));
                return SolveShape(c, false);
              });
  r->Register(OpDefBuilder("Qr")
                  .Input("input: T")
                  .Output("q: T")
                  .Output("r: T")
                  .Attr("full_matrices: bool = false")
                  .Attr(kFloats),
              QrShape);
  r->Register(OpDefBuilder("SelfAdjointEigV2")
                  .Input("input: T")
                  .Output("e: T")
                  .Output("v: T")
                  .Attr("compute_v: bool = true")
                  .Attr(kFloats),
              EigShape);
  r->Register(OpDefBuilder("Svd")
                  .Input("input: T")
                  .Output("s: T")
                  .Output("u: T")
                  .Output("v: T")
                  .Attr("compute_uv: bool = true")
                  .Attr("full_matrices: bool = false")
                  .Attr(kFloats),
              SvdShape);
}

}  // namespace weft
