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

// Input i as a batch of matrices: its batch dims and its rows and columns.
// False when its rank is unknown; INVALID_ARGUMENT when it is below 2, or
// when `square` and both known sizes differ.
absl::Status Matrices(InferenceContext* c, int i, bool square, bool* known,
                      Dims* batch, int64_t* rows, int64_t* cols) {
  WEFT_RETURN_IF_ERROR(c->WithRankAtLeast(i, 2));
  const PartialShape& s = c->input(i);
  *known = s.known_rank();
  if (!*known) return absl::OkStatus();
  batch->assign(s.dims().begin(), s.dims().end() - 2);
  *rows = s.dim(s.rank() - 2);
  *cols = s.dim(s.rank() - 1);
  if (square) {
    if (!MergeDim(*rows, *cols, rows)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Input matrix must be square; input ", i, " has shape ",
          s.DebugString()));
    }
    *cols = *rows;
  }
  return absl::OkStatus();
}

Dims With(Dims batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

// [..., N, N] -> the same (MatrixInverse, Cholesky).
absl::Status SquareShape(InferenceContext* c) {
  bool known;
  Dims batch;
  int64_t n, n2;
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, true, &known, &batch, &n, &n2));
  for (int o = 0; o < c->num_outputs(); ++o) {
    c->set_output(o, known ? PartialShape(With(batch, {n, n})) : PartialShape());
  }
  return absl::OkStatus();
}

// [..., N, N] -> [...] for every output (the determinants).
absl::Status DeterminantShape(InferenceContext* c) {
  bool known;
  Dims batch;
  int64_t n, n2;
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, true, &known, &batch, &n, &n2));
  for (int o = 0; o < c->num_outputs(); ++o) {
    c->set_output(o, known ? PartialShape(batch) : PartialShape());
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
  bool known_a, known_b;
  Dims batch_a, batch_b, batch;
  int64_t m, n, rows, k;
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, square, &known_a, &batch_a, &m, &n));
  WEFT_RETURN_IF_ERROR(Matrices(c, 1, false, &known_b, &batch_b, &rows, &k));
  if (!known_a || !known_b) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  if (!MergeDim(m, rows, &m)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input matrix and rhs are incompatible: matrix has shape ",
        c->input(0).DebugString(), ", rhs ", c->input(1).DebugString()));
  }
  if (!MergeBatch(batch_a, batch_b, &batch)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "All input tensors must have the same outer dimensions: matrix has "
        "shape ", c->input(0).DebugString(), ", rhs ", c->input(1).DebugString()));
  }
  c->set_output(0, PartialShape(With(batch, {n, k})));
  return absl::OkStatus();
}

// MatrixTriangularSolve: the batch dims broadcast.
absl::Status TriangularSolveShape(InferenceContext* c) {
  bool known_a, known_b;
  Dims batch_a, batch_b;
  int64_t m, m2, rows, k;
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, true, &known_a, &batch_a, &m, &m2));
  WEFT_RETURN_IF_ERROR(Matrices(c, 1, false, &known_b, &batch_b, &rows, &k));
  if (!known_a || !known_b) {
    c->set_output(0, PartialShape());
    return absl::OkStatus();
  }
  if (!MergeDim(m, rows, &m)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "In[0] mismatch In[1] shape: matrix has shape ", c->input(0).DebugString(),
        ", rhs ", c->input(1).DebugString()));
  }
  absl::StatusOr<PartialShape> batch =
      BroadcastShapes(PartialShape(batch_a), PartialShape(batch_b));
  if (!batch.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "In[0] and In[1] must have compatible batch dimensions: ",
        c->input(0).DebugString(), " vs. ", c->input(1).DebugString()));
  }
  Dims out(batch->dims().begin(), batch->dims().end());
  c->set_output(0, PartialShape(With(out, {m, k})));
  return absl::OkStatus();
}

int64_t MinDim(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a < 0 || b < 0 ? -1 : std::min(a, b);
}

absl::Status QrShape(InferenceContext* c) {
  bool known, full;
  Dims batch;
  int64_t m, n;
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, false, &known, &batch, &m, &n));
  WEFT_RETURN_IF_ERROR(c->GetAttr("full_matrices", &full));
  if (!known) {
    c->set_output(0, PartialShape());
    c->set_output(1, PartialShape());
    return absl::OkStatus();
  }
  const int64_t p = full ? m : MinDim(m, n);
  c->set_output(0, PartialShape(With(batch, {m, p})));
  c->set_output(1, PartialShape(With(batch, {p, n})));
  return absl::OkStatus();
}

absl::Status EigShape(InferenceContext* c) {
  bool known, compute_v;
  Dims batch;
  int64_t n, n2;
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, true, &known, &batch, &n, &n2));
  WEFT_RETURN_IF_ERROR(c->GetAttr("compute_v", &compute_v));
  c->set_output(0, known ? PartialShape(With(batch, {n})) : PartialShape());
  // Without vectors, the kernel's v is a placeholder scalar.
  c->set_output(1, !compute_v ? PartialShape({})
                              : known ? PartialShape(With(batch, {n, n})) : PartialShape());
  return absl::OkStatus();
}

absl::Status SvdShape(InferenceContext* c) {
  bool known, compute_uv, full;
  Dims batch;
  int64_t m, n;
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, false, &known, &batch, &m, &n));
  WEFT_RETURN_IF_ERROR(c->GetAttr("compute_uv", &compute_uv));
  WEFT_RETURN_IF_ERROR(c->GetAttr("full_matrices", &full));
  const int64_t p = MinDim(m, n);
  c->set_output(0, known ? PartialShape(With(batch, {p})) : PartialShape());
  if (!compute_uv) {  // placeholder scalars, as the kernel gives
    c->set_output(1, PartialShape({}));
    c->set_output(2, PartialShape({}));
  } else if (!known) {
    c->set_output(1, PartialShape());
    c->set_output(2, PartialShape());
  } else {
    c->set_output(1, PartialShape(With(batch, {m, full ? m : p})));
    c->set_output(2, PartialShape(With(batch, {n, full ? n : p})));
  }
  return absl::OkStatus();
}

absl::Status CholeskyGradShape(InferenceContext* c) {
  bool known_l, known_g;
  Dims batch_l, batch_g, batch;
  int64_t n, n2, gn, gn2;
  WEFT_RETURN_IF_ERROR(Matrices(c, 0, true, &known_l, &batch_l, &n, &n2));
  WEFT_RETURN_IF_ERROR(Matrices(c, 1, true, &known_g, &batch_g, &gn, &gn2));
  if (!known_l || !known_g) {
    c->set_output(0, known_l ? c->input(0) : c->input(1));
    return absl::OkStatus();
  }
  if (!MergeDim(n, gn, &n) || !MergeBatch(batch_l, batch_g, &batch)) {
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
