// Numeric checks (grad_check.h) of the gradients of the indexing and
// rearranging ops: StridedSlice, GatherV2, DynamicStitch,
// UnsortedSegmentSum, GatherNd, ScatterNd, TensorScatter*, Pad/PadV2, Split/SplitV, BroadcastTo, IdentityN; and
// the ops that stop or refuse gradients (OneHot, PreventGradient).
#include "absl/strings/match.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "gtest/gtest.h"
#include "tests/builder/grad_check.h"

namespace weft {
namespace {

using testing_builder::Check;
using testing_builder::S;
using testing_builder::X;

Output StridedSlice(S s, const Output& x, std::vector<int> begin,
                    std::vector<int> end, std::vector<int> strides,
                    const AttrList& masks = {}) {
  auto vec = [&s](const std::vector<int>& v) {
    return Const(s, std::vector<int32_t>(v.begin(), v.end()),
                 TensorShape({static_cast<int64_t>(v.size())}));
  };
  return AddNode1(s, "StridedSlice", {x, vec(begin), vec(end), vec(strides)},
                  masks);
}

TEST(IndexGradientsTest, StridedSlice) {
  Check({{4, 5}}, [](S s, X x) {
    return Square(s, StridedSlice(s, x[0], {1, 0}, {3, 5}, {1, 2}));
  });
  Check({{4, 5}}, [](S s, X x) {  // negative stride, begin/end masks
    return Square(s, StridedSlice(s, x[0], {3, 4}, {0, 0}, {-2, -1},
                                  {{"begin_mask", Attr(2)},
                                   {"end_mask", Attr(2)}}));
  });
  Check({{3, 4, 2}}, [](S s, X x) {  // shrink axis 0, new axis, ellipsis
    Output a = StridedSlice(s, x[0], {1, 0}, {2, 1}, {1, 1},
                            {{"shrink_axis_mask", Attr(1)},
                             {"ellipsis_mask", Attr(2)}});
    Output b = StridedSlice(s, a, {0, 1}, {0, 3}, {1, 1},
                            {{"new_axis_mask", Attr(1)}});
    return Mul(s, b, b);
  });
}

TEST(IndexGradientsTest, GatherV2) {
  for (int axis : {0, 1, -1}) {
    Check({{3, 4}}, [axis](S s, X x) {
      // Repeated indices: their rows' gradients add up.
      Output idx = Const(s, {2, 0, 2});
      return Square(s, GatherV2(s, x[0], idx, Const(s, axis)));
    });
  }
  Check({{3, 4}}, [](S s, X x) {  // a scalar index drops the axis
    return Square(s, GatherV2(s, x[0], Const(s, 2), Const(s, 1)));
  });
  Check({{2, 4, 3}}, [](S s, X x) {  // 2-D int64 indices in the middle
    Output idx = Const(s, {{int64_t{3}, int64_t{1}}, {int64_t{1}, int64_t{0}}});
    Output g = GatherV2(s, x[0], idx, Const(s, int64_t{1}));
    return Mul(s, g, g);
  });
}

TEST(IndexGradientsTest, GatherV2WithBatchDims) {
  // params [2, 3, 4] (batch 2), per-batch indices [2, 3].
  for (int axis : {1, 2}) {
    for (int batch_dims : {1, -1}) {
      Check({{2, 3, 4}}, [=](S s, X x) {
        Output idx = Const(s, {{2, 0, 2}, {1, 1, 0}});
        Output g = AddNode1(s, "GatherV2", {x[0], idx, Const(s, axis)},
                            {{"batch_dims", Attr(batch_dims)}});
        return Mul(s, g, g);
      });
    }
  }
  Check({{2, 3, 4, 2}}, [](S s, X x) {  // batch dims 2, axis 3, scalar-ish
    Output idx = Const(s, std::vector<int64_t>{1, 0, 0, 1, 1, 1},
                       TensorShape({2, 3}));
    Output g = AddNode1(s, "GatherV2", {x[0], idx, Const(s, -1)},
                        {{"batch_dims", Attr(2)}});
    return Mul(s, g, g);
  });
}

TEST(IndexGradientsTest, GatherNdScatterNdAndTensorScatter) {
  Check({{3, 4}}, [](S s, X x) {  // rows, one named twice: they add up
    Output idx = Const(s, std::vector<int32_t>{2, 0, 2}, TensorShape({3, 1}));
    return Square(s, AddNode1(s, "GatherNd", {x[0], idx}));
  });
  Check({{3, 4}}, [](S s, X x) {  // single elements, int64 indices
    Output idx = Const(s, std::vector<int64_t>{2, 1, 0, 3, 2, 1}, TensorShape({3, 2}));
    return Square(s, AddNode1(s, "GatherNd", {x[0], idx}));
  });
  Check({{3, 2}}, [](S s, X x) {  // updates into [4, 2], one row twice
    Output idx = Const(s, std::vector<int32_t>{1, 3, 1}, TensorShape({3, 1}));
    return Square(s, AddNode1(s, "ScatterNd", {idx, x[0], Const(s, {4, 2})}));
  });
  for (const char* op : {"TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub",
                         "ScatterNdNonAliasingAdd"}) {
    SCOPED_TRACE(op);
    Check({{4, 2}, {2, 2}}, [op](S s, X x) {
      Output idx = Const(s, std::vector<int32_t>{1, 3}, TensorShape({2, 1}));
      return Square(s, AddNode1(s, op, {x[0], idx, x[1]}));
    });
  }
}

TEST(IndexGradientsTest, DynamicStitch) {
  Check({{2, 2}, {3, 2}}, [](S s, X x) {
    Output merged = AddNode1(
        s, "DynamicStitch",
        {Input(std::vector<Output>{Const(s, {4, 1}), Const(s, {0, 3, 2})}),
         Input(std::vector<Output>{x[0], x[1]})});
    return Mul(s, merged, merged);
  });
}

TEST(IndexGradientsTest, UnsortedSegmentSum) {
  Check({{4, 3}}, [](S s, X x) {
    // Row 2 has a negative id: dropped, so its gradient is zero.
    Output sums = AddNode1(s, "UnsortedSegmentSum",
                           {x[0], Const(s, {1, 0, -1, 1}), Const(s, 3)});
    return Square(s, sums);
  });
}

// Segment reductions (segment_grad.cc): sorted ids with an empty segment,
// unsorted ones with a dropped (negative) id, sparse ones with a repeated
// index; random inputs, so min/max have no ties.
TEST(IndexGradientsTest, SegmentReductions) {
  for (const char* op : {"SegmentSum", "SegmentMean", "SegmentMin", "SegmentMax"}) {
    SCOPED_TRACE(op);
    Check({{5, 3}}, [op](S s, X x) {
      return Square(s, AddNode1(s, op, {x[0], Const(s, {0, 0, 2, 2, 2})}));
    });
  }
  for (const char* op : {"UnsortedSegmentMin", "UnsortedSegmentMax"}) {
    SCOPED_TRACE(op);
    Check({{4, 3}}, [op](S s, X x) {
      // No empty segment: its value (T's highest or lowest) would overflow.
      return Square(s, AddNode1(s, op, {x[0], Const(s, {1, 0, -1, 1}), Const(s, 2)}));
    });
  }
  for (const char* op : {"SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN"}) {
    SCOPED_TRACE(op);
    Check({{4, 3}}, [op](S s, X x) {
      return Square(s, AddNode1(s, op, {x[0], Const(s, {3, 0, 3, 1}), Const(s, {0, 0, 0, 2})}));
    });
    Check({{4, 3}}, [op](S s, X x) {
      return Square(s, AddNode1(s, std::string(op) + "WithNumSegments",
                                {x[0], Const(s, {3, 0, 3, 1}), Const(s, {0, 0, 0, 2}),
                                 Const(s, 4)}));
    });
  }
}

TEST(IndexGradientsTest, PadAndPadV2) {
  Check({{2, 3}}, [](S s, X x) {
    return Square(s, Pad(s, x[0], Const(s, {{1, 0}, {2, 1}})));
  });
  Check({{2, 3}, {}}, [](S s, X x) {  // int64 paddings; the constant too
    Output p = Const(s, {{int64_t{0}, int64_t{2}}, {int64_t{1}, int64_t{1}}});
    return Square(s, AddNode1(s, "PadV2", {x[0], p, x[1]}));
  });
}

TEST(IndexGradientsTest, SplitAndSplitV) {
  for (int axis : {0, 1, -1}) {
    Check({{4, 6}}, [axis](S s, X x) {
      std::vector<Output> parts = AddNode(s, "Split", {Const(s, axis), x[0]},
                                          {{"num_split", Attr(2)}});
      // Only the second piece is used: the first gets zeros.
      return Square(s, parts.size() == 2 ? parts[1] : Output());
    });
  }
  Check({{3, 6}}, [](S s, X x) {
    std::vector<Output> parts = AddNode(
        s, "SplitV", {x[0], Const(s, {1, -1, 2}), Const(s, 1)},
        {{"num_split", Attr(3)}});
    if (parts.size() != 3) return Output();
    return Mul(s, Square(s, parts[0]), Sum(s, parts[2], Const(s, 1), true));
  });
}

TEST(IndexGradientsTest, BroadcastTo) {
  Check({{3, 1}}, [](S s, X x) {
    Output b = AddNode1(s, "BroadcastTo", {x[0], Const(s, {2, 3, 4})});
    return Mul(s, b, b);
  });
  Check({{4}}, [](S s, X x) {
    Output b = AddNode1(s, "BroadcastTo",
                        {x[0], Const(s, {int64_t{2}, int64_t{4}})});
    return Square(s, b);
  });
}

TEST(IndexGradientsTest, IdentityNAndPlaceholderWithDefault) {
  Check({{2}, {3}}, [](S s, X x) {
    std::vector<Output> ys = AddNode(
        s, "IdentityN", {Input(std::vector<Output>{x[0], x[1]})});
    if (ys.size() != 2) return Output();
    return Mul(s, Sum(s, Square(s, ys[0]), Const(s, 0)), ys[1]);
  });
  Check({{3}}, [](S s, X x) {
    Output y = AddNode1(s, "PlaceholderWithDefault", {x[0]},
                        {{"shape", ShapeAttr({3})}});
    return Square(s, y);
  });
}

TEST(IndexGradientsTest, OneHotPassesNoGradient) {
  // OneHot's values get no gradient (as in TensorFlow): only x's path does.
  Scope root = Scope::NewRoot();
  Output on = Const(root, 2.f), x = Const(root, {1.f, 3.f, 5.f});
  Output hot = AddNode1(root, "OneHot",
                        {Const(root, {2, 0}), Const(root, 3), on,
                         Const(root, 0.f)});
  Output y = Sum(root, Mul(root, hot, x), Const(root, {0, 1}));
  std::vector<Output> grads;
  ASSERT_TRUE(AddGradients(root, {y}, {x, on}, {}, &grads).ok())
      << root.status();
  auto out = testing_builder::RunGraph(root, {}, grads);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(testing_builder::Values((*out)[0]), (std::vector<double>{2, 0, 2}));
  EXPECT_EQ(testing_builder::Values((*out)[1]), (std::vector<double>{0}));
}

TEST(IndexGradientsTest, PreventGradientFailsWithItsMessage) {
  Scope root = Scope::NewRoot();
  Output x = Const(root, {1.f});
  Output p = AddNode1(root.WithOpName("guard"), "PreventGradient", {x},
                      {{"message", Attr("no second derivative")}});
  std::vector<Output> grads;
  absl::Status st = AddGradients(root, {Square(root, p)}, {x}, {}, &grads);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "'guard'")) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "no second derivative")) << st;
}

}  // namespace
}  // namespace weft
