// Gradients of the linear algebra ops (ops/linalg_ops.cc), with
// TensorFlow's formulas, written with batched matmuls (adjoint = transpose
// for the real dtypes the kernels have):
// - MatrixInverse Y = A^-1: dA = -Y^T G Y^T (adjoint: -Y G^T Y).
// - MatrixDeterminant: dA = g det A^-T; LogMatrixDeterminant: dA = g A^-T
//   (the sign has no gradient).
// - Cholesky: CholeskyGrad(L, G).
// - MatrixSolve X = A^-1 B: dB = A^-T G, dA = -dB X^T (adjoint: dB = A^-1 G,
//   dA = -X dB^T); MatrixTriangularSolve the same with triangular solves,
//   dA kept to the triangle read and both summed over broadcast batch dims.
// - SelfAdjointEigV2 (A = V diag(e) V^T): dA = V (diag(ge) + F o (V^T gV))
//   V^T, F_ij = 1 / (e_j - e_i) off the diagonal, then symmetrised onto the
//   lower triangle the kernel reads (diagonal once); without vectors, V is
//   recomputed.
#include <vector>

#include "graph/builder/array_ops.h"
#include "graph/builder/grad_registry.h"
#include "graph/builder/grad_util.h"
#include "graph/builder/math_ops.h"
#include "ops/framework/node_def_util.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using grad_internal::ScalarLike;
using In = const GradInputs&;
using Dx = std::vector<Output>*;

Output Adjoint(const Scope& s, const char* op, const Output& a, bool adjoint) {
  return AddNode1(s, op, {a}, {{"adjoint", Attr(adjoint)}});
}

// x[..., None, None]: a batch of scalars against a batch of matrices.
Output AsMatrices(const Scope& s, const Output& x) {
  return ExpandDims(s, ExpandDims(s, x, Const(s, -1)), Const(s, -1));
}

// x's shape without its last two (matrix) dims.
Output BatchDims(const Scope& s, const Output& x) {
  Output n = Sub(s, grad_internal::RankOf(s, x), Const(s, 2));
  return Slice(s, Shape(s, x), Const(s, {0}), ExpandDims(s, n, Const(s, 0)));
}

// The lower (upper) triangle of x, diagonal included.
Output Triangle(const Scope& s, const Output& x, bool lower) {
  return AddNode1(s, "MatrixBandPart",
                  {x, Const(s, int64_t{lower ? -1 : 0}), Const(s, int64_t{lower ? 0 : -1})});
}

absl::Status MatrixInverseGrad(const Scope& s, In in, Dx dx) {
  bool adjoint = false;
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "adjoint", &adjoint));
  const Output &y = in.y[0], &g = in.dy[0];
  (*dx)[0] = adjoint ? Neg(s, BatchMatMulV2(s, BatchMatMulV2(s, y, g, false, true), y))
                     : Neg(s, BatchMatMulV2(s, y, BatchMatMulV2(s, g, y, false, true), true));
  return absl::OkStatus();
}

absl::Status MatrixDeterminantGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = Mul(s, AsMatrices(s, Mul(s, in.dy[0], in.y[0])),
                 Adjoint(s, "MatrixInverse", in.x[0], true));
  return absl::OkStatus();
}

absl::Status LogMatrixDeterminantGrad(const Scope& s, In in, Dx dx) {
  if (!in.dy[1].valid()) return absl::OkStatus();  // only the sign was used
  (*dx)[0] = Mul(s, AsMatrices(s, in.dy[1]), Adjoint(s, "MatrixInverse", in.x[0], true));
  return absl::OkStatus();
}

absl::Status CholeskyGrad(const Scope& s, In in, Dx dx) {
  (*dx)[0] = AddNode1(s, "CholeskyGrad", {in.y[0], in.dy[0]});
  return absl::OkStatus();
}

// dA from dB for X = op(A)^-1 B: -dB X^T, or -X dB^T for the adjoint.
Output SolveMatrixGrad(const Scope& s, const Output& x, const Output& db, bool adjoint) {
  return Neg(s, adjoint ? BatchMatMulV2(s, x, db, false, true)
                        : BatchMatMulV2(s, db, x, false, true));
}

absl::Status MatrixSolveGrad(const Scope& s, In in, Dx dx) {
  bool adjoint = false;
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "adjoint", &adjoint));
  Output db = AddNode1(s, "MatrixSolve", {in.x[0], in.dy[0]}, {{"adjoint", Attr(!adjoint)}});
  (*dx)[0] = SolveMatrixGrad(s, in.y[0], db, adjoint);
  (*dx)[1] = db;
  return absl::OkStatus();
}

absl::Status MatrixTriangularSolveGrad(const Scope& s, In in, Dx dx) {
  bool adjoint = false, lower = true;
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "adjoint", &adjoint));
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "lower", &lower));
  const Output &a = in.x[0], &b = in.x[1];
  Output db = AddNode1(s, "MatrixTriangularSolve", {a, in.dy[0]},
                       {{"lower", Attr(lower)}, {"adjoint", Attr(!adjoint)}});
  Output da = Triangle(s, SolveMatrixGrad(s, in.y[0], db, adjoint), lower);
  // Both have the broadcast batch dims in front: sum them back.
  BroadcastArgs r = BroadcastGradientArgs(s, BatchDims(s, a), BatchDims(s, b));
  (*dx)[0] = Reshape(s, Sum(s, da, r.r0), Shape(s, a));
  (*dx)[1] = Reshape(s, Sum(s, db, r.r1), Shape(s, b));
  return absl::OkStatus();
}

Output MatrixDiag(const Scope& s, const Output& d, DataType t) {
  return AddNode1(s, "MatrixDiagV3",
                  {d, Const(s, 0), Const(s, -1), Const(s, -1), ScalarLike(s, 0, t)});
}

Output SetDiag(const Scope& s, const Output& x, const Output& d) {
  return AddNode1(s, "MatrixSetDiagV3", {x, d, Const(s, 0)});
}

absl::Status SelfAdjointEigV2Grad(const Scope& s, In in, Dx dx) {
  bool compute_v = true;
  WEFT_RETURN_IF_ERROR(GetNodeAttr(*in.node, "compute_v", &compute_v));
  const Output& e = in.y[0];
  const DataType t = in.node->attr().at("T").type();
  Output v = compute_v ? in.y[1]
                       : AddNode(s, "SelfAdjointEigV2", {in.x[0]}, {{"compute_v", Attr(true)}})[1];
  Output ge = in.dy[0].valid() ? in.dy[0] : ZerosLike(s, e);
  // M + M^T for M = diag(ge) + F o (V^T gV), F antisymmetric.
  Output sym = Mul(s, MatrixDiag(s, ge, t), ScalarLike(s, 2, t));
  if (compute_v && in.dy[1].valid()) {
    const Output& gv = in.dy[1];
    Output f = SetDiag(s, Reciprocal(s, Sub(s, ExpandDims(s, e, Const(s, -2)),
                                            ExpandDims(s, e, Const(s, -1)))),
                       ZerosLike(s, e));
    Output vtg = BatchMatMulV2(s, v, gv, true, false);
    Output gtv = BatchMatMulV2(s, gv, v, true, false);
    sym = Add(s, sym, Mul(s, f, Sub(s, vtg, gtv)));
  }
  Output grad = Triangle(s, BatchMatMulV2(s, v, BatchMatMulV2(s, sym, v, false, true)), true);
  Output diag = AddNode1(s, "MatrixDiagPartV3", {grad, Const(s, 0), ScalarLike(s, 0, t)});
  (*dx)[0] = SetDiag(s, grad, Mul(s, diag, ScalarLike(s, 0.5f, t)));
  return absl::OkStatus();
}

}  // namespace

void RegisterLinalgGrads(GradRegistry* r) {
  r->Register("MatrixInverse", MatrixInverseGrad);
  r->Register("MatrixDeterminant", MatrixDeterminantGrad);
  r->Register("LogMatrixDeterminant", LogMatrixDeterminantGrad);
  r->Register("Cholesky", CholeskyGrad);
  r->Register("MatrixSolve", MatrixSolveGrad);
  r->Register("MatrixTriangularSolve", MatrixTriangularSolveGrad);
  r->Register("SelfAdjointEigV2", SelfAdjointEigV2Grad);
}

}  // namespace weft
