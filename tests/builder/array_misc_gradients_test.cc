// Numeric checks (grad_check.h) of the builder's gradients of the ops issue
// 36 added (graph/builder/array_misc_grad.cc, and the older MatrixDiag
// forms in array_index_grad.cc): Reverse, EnsureShape, MatrixDiag,
// MatrixDiagPart, MatrixSetDiag and their V2 forms, DynamicPartition,
// NthElement, CumulativeLogsumexp, Betainc, MaxPoolV2 and BatchMatMulV3.
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

TEST(ArrayMiscGradientsTest, ReverseAndEnsureShape) {
  Check({{2, 3, 4}}, [](S s, X x) {
    return Square(s, AddNode1(s, "Reverse", {x[0], Const(s, {true, false, true})}));
  });
  Check({{2, 3}}, [](S s, X x) {
    return Square(s, AddNode1(s, "EnsureShape", {x[0]}, {{"shape", ShapeAttr({-1, 3})}}));
  });
}

// Print passes its input's gradient through (its data list gets none).
TEST(ArrayMiscGradientsTest, PrintPassesThrough) {
  Check({{2, 3}, {2}}, [](S s, X x) {
    Output y = AddNode1(s, "Print", {x[0], Input(std::vector<Output>{x[1]})},
                        {{"message", Attr("grad check: ")}});
    return Square(s, y);
  });
}

TEST(ArrayMiscGradientsTest, MatrixDiagV1) {
  Check({{2, 3}}, [](S s, X x) { return Square(s, AddNode1(s, "MatrixDiag", {x[0]})); });
  Check({{2, 3, 4}}, [](S s, X x) {
    return Square(s, AddNode1(s, "MatrixDiagPart", {x[0]}));
  });
  Check({{4, 3}, {3}}, [](S s, X x) {
    return Square(s, AddNode1(s, "MatrixSetDiag", {x[0], x[1]}));
  });
}

TEST(ArrayMiscGradientsTest, MatrixDiagV2) {  // diagonals left-aligned
  Check({{2, 3, 4}}, [](S s, X x) {
    return Square(s, AddNode1(s, "MatrixDiagV2", {x[0], Const(s, {-1, 1}), Const(s, 4),
                                                  Const(s, 5), Const(s, 0.0)}));
  });
  Check({{2, 4, 5}}, [](S s, X x) {
    return Square(s, AddNode1(s, "MatrixDiagPartV2",
                              {x[0], Const(s, {-2, 1}), Const(s, 0.0)}));
  });
  Check({{3, 4}, {2, 3}}, [](S s, X x) {
    return Square(s, AddNode1(s, "MatrixSetDiagV2", {x[0], x[1], Const(s, {0, 1})}));
  });
}

TEST(ArrayMiscGradientsTest, DynamicPartition) {
  Check({{3, 2, 2}}, [](S s, X x) {
    std::vector<Output> parts = AddNode(s, "DynamicPartition",
                                        {x[0], Const(s, std::vector<int32_t>{2, 0, 2, 1, 2, 0},
                                                     TensorShape({3, 2}))},
                                        {{"num_partitions", Attr(4)}});
    // Partition 3 is empty and 1 unused: their gradients are zeros.
    return Add(s, Sum(s, Square(s, parts[0]), Const(s, 0)),
               Sum(s, Mul(s, parts[2], parts[2]), Const(s, 0)));
  });
}

TEST(ArrayMiscGradientsTest, ParallelDynamicStitch) {
  Check({{2, 2}, {3, 2}}, [](S s, X x) {
    Output merged = AddNode1(s, "ParallelDynamicStitch",
                             {Input(std::vector<Output>{Const(s, {0, 3}), Const(s, {1, 4, 2})}),
                              Input(std::vector<Output>{x[0], x[1]})});
    return Square(s, merged);
  });
}

TEST(ArrayMiscGradientsTest, NthElementAndLogsumexp) {
  for (bool reverse : {false, true}) {
    Check({{2, 5}}, [reverse](S s, X x) {
      return Square(s, AddNode1(s, "NthElement", {x[0], Const(s, 1)},
                                {{"reverse", Attr(reverse)}}));
    });
    for (bool exclusive : {false, true}) {
      Check({{3, 4}}, [reverse, exclusive](S s, X x) {
        Output y = AddNode1(s, "CumulativeLogsumexp", {x[0], Const(s, 1)},
                            {{"reverse", Attr(reverse)}, {"exclusive", Attr(exclusive)}});
        // exp: the exclusive scan starts at -inf.
        return Mul(s, Exp(s, y),
                   Const(s, std::vector<double>{1, -2, 3, -1, 2, 1, -1, 1, 0.5, 2, -3, 1},
                         TensorShape({3, 4})));
      });
    }
  }
}

TEST(ArrayMiscGradientsTest, Betainc) {
  Check({{3}}, [](S s, X x) {
    Output unit = Sigmoid(s, x[0]);  // x in (0, 1)
    return AddNode1(s, "Betainc", {Const(s, {1.5, 2.0, 0.7}), Const(s, 2.5), unit});
  });
}

TEST(ArrayMiscGradientsTest, MaxPoolV2AndBatchMatMulV3) {
  Check({{1, 4, 4, 2}}, [](S s, X x) {
    return Square(s, AddNode1(s, "MaxPoolV2", {x[0], Const(s, {1, 2, 2, 1}),
                                               Const(s, {1, 2, 1, 1})},
                              {{"padding", Attr("VALID")}}));
  });
  Check({{2, 3, 4}, {4, 2}}, [](S s, X x) {
    return Square(s, AddNode1(s, "BatchMatMulV3", {x[0], x[1]},
                              {{"Tout", Attr(x[0].dtype)}, {"adj_x", Attr(false)}}));
  });
}

}  // namespace
}  // namespace weft
