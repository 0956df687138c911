// Numeric checks of the gradients of Tile, Slice, Pack/Unpack, Select,
// LogSoftmax, SquaredDifference, Conv2D, DepthwiseConv2dNative and the pools (grad_check.h).
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "gtest/gtest.h"
#include "tests/builder/grad_check.h"

namespace weft {
namespace {

using testing_builder::Check;
using testing_builder::Range;
using testing_builder::S;
using testing_builder::X;

TEST(MoreGradientsTest, Tile) {
  Check({{2, 3}}, [](S s, X x) {
    Output t = Tile(s, x[0], Const(s, {2, 3}));
    return Mul(s, t, t);
  });
  Check({{3}}, [](S s, X x) {
    return Square(s, Tile(s, x[0], Const(s, {int64_t{1}})));
  });
}

TEST(MoreGradientsTest, Slice) {
  Check({{3, 4}}, [](S s, X x) {
    return Square(s, Slice(s, x[0], Const(s, {1, 1}), Const(s, {2, 2})));
  });
  Check({{3, 4}}, [](S s, X x) {  // size -1: to the end
    return Square(s, Slice(s, x[0], Const(s, {0, 2}), Const(s, {-1, -1})));
  });
}

TEST(MoreGradientsTest, PackAndUnpack) {
  for (int64_t axis : {0, 1, -1}) {
    Check({{2, 3}, {2, 3}}, [axis](S s, X x) {
      Output p = Pack(s, {x[0], x[1], x[0]}, axis);
      return Mul(s, p, p);
    });
  }
  for (int64_t axis : {0, 1}) {
    Check({{2, 3}}, [axis](S s, X x) {
      std::vector<Output> parts = Unpack(s, x[0], axis == 0 ? 2 : 3, axis);
      // Only some slices are used: the others must get zeros.
      return Mul(s, parts[1], Square(s, parts[0]));
    });
  }
}

TEST(MoreGradientsTest, Select) {
  Check({{2, 3}, {2, 3}}, [](S s, X x) {
    Output c = Greater(s, x[0], x[1]);
    Output y = AddNode1(s, "Select", {c, Square(s, x[0]), x[1]});
    return Mul(s, y, x[0]);
  });
  Check({{2, 3}, {3}}, [](S s, X x) {  // SelectV2 broadcasting e
    Output c = Greater(s, x[0], ZerosLike(s, x[1]));
    return Square(s, SelectV2(s, c, x[0], x[1]));
  });
}

TEST(MoreGradientsTest, LogSoftmax) {
  Check({{2, 4}}, [](S s, X x) {
    return Mul(s, LogSoftmax(s, x[0]), Square(s, x[0]));
  });
}

TEST(MoreGradientsTest, SquaredDifference) {
  Check({{2, 3}, {2, 3}}, [](S s, X x) {
    return SquaredDifference(s, x[0], x[1]);
  });
  Check({{2, 3}, {3}}, [](S s, X x) {
    return Mul(s, SquaredDifference(s, x[0], x[1]), x[0]);
  });
}

TEST(MoreGradientsTest, Conv2D) {
  for (const char* padding : {"SAME", "VALID"}) {
    for (int64_t stride : {1, 2}) {
      Check({{2, 5, 5, 2}, {3, 3, 2, 3}}, [=](S s, X x) {
        Output y = Conv2D(s, x[0], x[1], {1, stride, stride, 1}, padding);
        return Mul(s, y, y);
      });
    }
  }
}

TEST(MoreGradientsTest, DepthwiseConv2D) {
  for (const char* padding : {"SAME", "VALID"}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t mult : {1, 2}) {
        Check({{2, 5, 6, 3}, {3, 2, 3, mult}}, [=](S s, X x) {
          Output y = DepthwiseConv2D(s, x[0], x[1], {1, stride, stride, 1}, padding);
          return Mul(s, y, y);
        });
      }
    }
  }
}

TEST(MoreGradientsTest, MaxPoolAndAvgPool) {
  for (const char* padding : {"SAME", "VALID"}) {
    Check({{1, 4, 5, 2}}, [=](S s, X x) {
      return Square(s, MaxPool(s, x[0], {1, 2, 2, 1}, {1, 2, 2, 1}, padding));
    });
    Check({{1, 4, 5, 2}}, [=](S s, X x) {
      return Square(s, AvgPool(s, x[0], {1, 3, 3, 1}, {1, 2, 2, 1}, padding));
    });
  }
}

}  // namespace
}  // namespace weft
