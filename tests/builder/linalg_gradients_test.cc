// Numeric checks (grad_check.h, in double) of the builder's gradients of
// the linear algebra ops: MatrixInverse (both adjoints), MatrixDeterminant,
// LogMatrixDeterminant, Cholesky (through CholeskyGrad), MatrixSolve,
// MatrixTriangularSolve (both triangles, both adjoints, broadcast batch
// dims) and SelfAdjointEigV2 (with and without vectors). Matrices are made
// well conditioned (x + 3 I, or x x^T + 3 I where positive definiteness is
// needed), outputs are weighted by another input, and eigenvectors enter
// squared, so the checks do not depend on their signs.
#include <vector>

#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "gtest/gtest.h"
#include "tests/builder/grad_check.h"

namespace weft {
namespace {

using testing_builder::Check;
using testing_builder::S;
using testing_builder::X;

// x + 3 I (x a batch of 3 x 3 matrices).
Output Shifted(S s, const Output& x) {
  std::vector<double> eye = {3, 0, 0, 0, 3, 0, 0, 0, 3};
  return Add(s, x, Const(s, eye, TensorShape({3, 3})));
}

Output Flat(S s, const Output& x) { return Reshape(s, x, Const(s, {-1})); }

TEST(LinalgGradientsTest, MatrixInverse) {
  for (bool adjoint : {false, true}) {
    SCOPED_TRACE(adjoint);
    Check({{2, 3, 3}, {2, 3, 3}}, [adjoint](S s, X x) {
      Output y = AddNode1(s, "MatrixInverse", {Shifted(s, x[0])}, {{"adjoint", Attr(adjoint)}});
      return Mul(s, y, x[1]);
    });
  }
}

TEST(LinalgGradientsTest, Determinants) {
  Check({{2, 3, 3}, {2}}, [](S s, X x) {
    return Mul(s, AddNode1(s, "MatrixDeterminant", {Shifted(s, x[0])}), x[1]);
  });
  Check({{2, 3, 3}, {2}}, [](S s, X x) {
    std::vector<Output> out = AddNode(s, "LogMatrixDeterminant", {Shifted(s, x[0])});
    return Mul(s, out[1], x[1]);
  });
}

TEST(LinalgGradientsTest, Cholesky) {
  Check({{2, 3, 3}, {2, 3, 3}}, [](S s, X x) {
    Output a = Shifted(s, BatchMatMulV2(s, x[0], x[0], false, true));
    return Mul(s, AddNode1(s, "Cholesky", {a}), x[1]);
  });
}

TEST(LinalgGradientsTest, MatrixSolve) {
  for (bool adjoint : {false, true}) {
    SCOPED_TRACE(adjoint);
    Check({{2, 3, 3}, {2, 3, 2}, {2, 3, 2}}, [adjoint](S s, X x) {
      Output y = AddNode1(s, "MatrixSolve", {Shifted(s, x[0]), x[1]},
                          {{"adjoint", Attr(adjoint)}});
      return Mul(s, y, x[2]);
    });
  }
}

TEST(LinalgGradientsTest, MatrixTriangularSolve) {
  for (bool lower : {true, false}) {
    for (bool adjoint : {false, true}) {
      SCOPED_TRACE(testing::Message() << "lower " << lower << " adjoint " << adjoint);
      // One matrix for a batch of two right-hand sides, and the reverse.
      Check({{3, 3}, {2, 3, 2}, {2, 3, 2}}, [=](S s, X x) {
        Output y = AddNode1(s, "MatrixTriangularSolve", {Shifted(s, x[0]), x[1]},
                            {{"lower", Attr(lower)}, {"adjoint", Attr(adjoint)}});
        return Mul(s, y, x[2]);
      });
      Check({{2, 1, 3, 3}, {3, 1}, {2, 1, 3, 1}}, [=](S s, X x) {
        Output y = AddNode1(s, "MatrixTriangularSolve", {Shifted(s, x[0]), x[1]},
                            {{"lower", Attr(lower)}, {"adjoint", Attr(adjoint)}});
        return Mul(s, y, x[2]);
      });
    }
  }
}

TEST(LinalgGradientsTest, SelfAdjointEigV2) {
  // A symmetric input x + x^T; the kernel reads its lower triangle.
  Check({{2, 3, 3}, {2, 3}, {2, 3, 3}}, [](S s, X x) {
    Output a = Add(s, x[0], Transpose(s, x[0], Const(s, {0, 2, 1})));
    std::vector<Output> ev = AddNode(s, "SelfAdjointEigV2", {a});
    return ConcatV2(s, {Flat(s, Mul(s, ev[0], x[1])), Flat(s, Mul(s, Square(s, ev[1]), x[2]))},
                    Const(s, 0));
  });
  Check({{2, 3, 3}, {2, 3}}, [](S s, X x) {
    Output a = Add(s, x[0], Transpose(s, x[0], Const(s, {0, 2, 1})));
    std::vector<Output> ev = AddNode(s, "SelfAdjointEigV2", {a}, {{"compute_v", Attr(false)}});
    return Mul(s, ev[0], x[1]);
  });
}

}  // namespace
}  // namespace weft
