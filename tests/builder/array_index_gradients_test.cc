// Numeric checks (grad_check.h) of the builder's gradients of the layout and
// indexing ops (graph/builder/array_index_grad.cc): SpaceToBatchND,
// BatchToSpaceND, SpaceToDepth, DepthToSpace, MirrorPad, MirrorPadGrad,
// MatrixBandPart, ReverseSequence, Roll, Diag, DiagPart, TopKV2,
// CheckNumerics and the MatrixDiag*V3 ops.
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "gtest/gtest.h"
#include "tests/builder/grad_check.h"

namespace weft {
namespace {

using testing_builder::Check;
using testing_builder::S;
using testing_builder::X;

TEST(ArrayIndexGradientsTest, SpaceBatch) {
  Check({{2, 4, 3, 2}}, [](S s, X x) {
    Output block = Const(s, {2, 3});
    Output pads = Const(s, {{0, 2}, {1, 2}});
    return Square(s, AddNode1(s, "SpaceToBatchND", {x[0], block, pads}));
  });
  Check({{6, 2, 2, 1}}, [](S s, X x) {
    Output block = Const(s, {3, 2});
    Output crops = Const(s, {{1, 1}, {0, 1}});
    return Square(s, AddNode1(s, "BatchToSpaceND", {x[0], block, crops}));
  });
}

TEST(ArrayIndexGradientsTest, SpaceDepth) {
  Check({{1, 4, 2, 3}}, [](S s, X x) {
    return Square(s, AddNode1(s, "SpaceToDepth", {x[0]}, {{"block_size", Attr(2)}}));
  });
  Check({{2, 1, 2, 8}}, [](S s, X x) {
    return Square(s, AddNode1(s, "DepthToSpace", {x[0]}, {{"block_size", Attr(2)}}));
  });
}

TEST(ArrayIndexGradientsTest, MirrorPad) {
  for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
    Check({{3, 4}}, [mode](S s, X x) {
      Output pads = Const(s, {{2, 1}, {1, 3}});
      Output y = AddNode1(s, "MirrorPad", {x[0], pads}, {{"mode", Attr(mode)}});
      return Square(s, y);
    });
    Check({{5, 6}}, [mode](S s, X x) {
      Output pads = Const(s, {{1, 1}, {0, 2}});
      Output y = AddNode1(s, "MirrorPadGrad", {x[0], pads}, {{"mode", Attr(mode)}});
      return Square(s, y);
    });
  }
}

TEST(ArrayIndexGradientsTest, BandRollReverse) {
  Check({{2, 3, 4}}, [](S s, X x) {
    Output y = AddNode1(s, "MatrixBandPart",
                        {x[0], Const(s, int64_t{1}), Const(s, int64_t{0})});
    return Square(s, y);
  });
  Check({{3, 4}}, [](S s, X x) {
    return Square(s, AddNode1(s, "Roll", {x[0], Const(s, {1, -3}), Const(s, {0, 1})}));
  });
  Check({{3, 4, 2}}, [](S s, X x) {
    Output y = AddNode1(s, "ReverseSequence", {x[0], Const(s, {int64_t{4}, int64_t{2}, int64_t{0}})},
                        {{"seq_dim", Attr(1)}, {"batch_dim", Attr(0)}});
    return Square(s, y);
  });
}

TEST(ArrayIndexGradientsTest, DiagTopKCheckNumerics) {
  Check({{2, 3}}, [](S s, X x) { return Square(s, AddNode1(s, "Diag", {x[0]})); });
  Check({{2, 3, 2, 3}}, [](S s, X x) {
    return Square(s, AddNode1(s, "DiagPart", {x[0]}));
  });
  Check({{3, 6}}, [](S s, X x) {
    std::vector<Output> top = AddNode(s, "TopKV2", {x[0], Const(s, 3)});
    return Square(s, top[0]);
  });
  Check({{3, 2}}, [](S s, X x) {
    Output y = AddNode1(s, "CheckNumerics", {Square(s, x[0])}, {{"message", Attr("m")}});
    return Mul(s, y, x[0]);
  });
  Check({{3, 2}}, [](S s, X x) {
    Output y = AddNode1(s, "CheckNumericsV2", {Square(s, x[0])}, {{"message", Attr("m")}});
    return Mul(s, y, x[0]);
  });
}

TEST(ArrayIndexGradientsTest, MatrixDiagV3) {
  for (const char* align : {"RIGHT_LEFT", "LEFT_RIGHT"}) {
    Check({{2, 3, 4}}, [align](S s, X x) {  // diagonals -1..1 of 4x5 matrices
      Output y = AddNode1(s, "MatrixDiagV3",
                          {x[0], Const(s, {-1, 1}), Const(s, 4), Const(s, 5), Const(s, 0.0)},
                          {{"align", Attr(align)}});
      return Square(s, y);
    });
    Check({{2, 4, 5}}, [align](S s, X x) {
      Output y = AddNode1(s, "MatrixDiagPartV3", {x[0], Const(s, {-2, 1}), Const(s, 0.0)},
                          {{"align", Attr(align)}});
      return Square(s, y);
    });
    Check({{3, 4}, {2, 3}}, [align](S s, X x) {
      Output y = AddNode1(s, "MatrixSetDiagV3", {x[0], x[1], Const(s, {0, 1})},
                          {{"align", Attr(align)}});
      return Square(s, y);
    });
  }
}

}  // namespace
}  // namespace weft
