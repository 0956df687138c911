// ConcatOffset, ShapeN, InvertPermutation, ListDiff, DynamicStitch, PadV2,
// PreventGradient and StridedSliceGrad: the array ops gradient functions emit.
#include <vector>

#include "gtest/gtest.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::Random;
using testing_util::RunAll;
using testing_util::RunOk;
using testing_util::RunStatus;
using testing_util::Scalar;

TEST(ArrayGradTest, ConcatOffset) {
  std::vector<Tensor> out = RunAll(
      NodeBuilder("n", "ConcatOffset").Attr("N", 3),
      {Scalar<int32_t>(-2), MakeTensor<int32_t>({3}, {2, 3, 5}),
       MakeTensor<int32_t>({3}, {2, 1, 5}), MakeTensor<int32_t>({3}, {2, 4, 5})});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({3}, {0, 0, 0}));
  ExpectTensorEqual(out[1], MakeTensor<int32_t>({3}, {0, 3, 0}));
  ExpectTensorEqual(out[2], MakeTensor<int32_t>({3}, {0, 4, 0}));
  const absl::Status s = RunStatus(
      NodeBuilder("n", "ConcatOffset").Attr("N", 2),
      {Scalar<int32_t>(0), MakeTensor<int32_t>({2}, {2, 3}), MakeTensor<int32_t>({2}, {2, 4})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(ArrayGradTest, ShapeN) {
  std::vector<Tensor> out =
      RunAll(NodeBuilder("n", "ShapeN").Attr("N", 2).Attr("T", DT_FLOAT).Attr("out_type", DT_INT64),
             {Random<float>({2, 3}, 0, 1), Scalar(1.0f)});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensorEqual(out[0], MakeTensor<int64_t>({2}, {2, 3}));
  ExpectTensorEqual(out[1], Tensor(DT_INT64, TensorShape({0})));
}

TEST(ArrayGradTest, InvertPermutation) {
  ExpectTensorEqual(RunOk(NodeBuilder("n", "InvertPermutation"),
                          {MakeTensor<int32_t>({4}, {2, 0, 3, 1})}),
                    MakeTensor<int32_t>({4}, {1, 3, 0, 2}));
  for (const Tensor& bad : {MakeTensor<int32_t>({3}, {0, 0, 1}), MakeTensor<int32_t>({2}, {0, 2})}) {
    const absl::Status s = RunStatus(NodeBuilder("n", "InvertPermutation"), {bad});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  }
}

TEST(ArrayGradTest, ListDiff) {
  std::vector<Tensor> out =
      RunAll(NodeBuilder("n", "ListDiff").Attr("T", DT_INT32),
             {MakeTensor<int32_t>({6}, {1, 2, 3, 4, 5, 6}), MakeTensor<int32_t>({3}, {1, 3, 5})});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({3}, {2, 4, 6}));
  ExpectTensorEqual(out[1], MakeTensor<int32_t>({3}, {1, 3, 5}));
}

TEST(ArrayGradTest, DynamicStitch) {
  ExpectTensorEqual(
      RunOk(NodeBuilder("n", "DynamicStitch").Attr("N", 2).Attr("T", DT_FLOAT),
            {MakeTensor<int32_t>({2}, {0, 2}), MakeTensor<int32_t>({1, 2}, {1, 2}),
             MakeTensor<float>({2, 2}, {1, 2, 3, 4}), MakeTensor<float>({1, 2, 2}, {5, 6, 7, 8})}),
      // Index 2 appears twice: the later one wins.
      MakeTensor<float>({3, 2}, {1, 2, 5, 6, 7, 8}));
  // Rows no index names come out zero.
  ExpectTensorEqual(
      RunOk(NodeBuilder("n", "DynamicStitch").Attr("N", 1).Attr("T", DT_FLOAT),
            {MakeTensor<int32_t>({2}, {0, 3}), MakeTensor<float>({2}, {1, 2})}),
      MakeTensor<float>({4}, {1, 0, 0, 2}));
  const absl::Status s =
      RunStatus(NodeBuilder("n", "DynamicStitch").Attr("N", 1).Attr("T", DT_FLOAT),
                {MakeTensor<int32_t>({2}, {0, 1}), MakeTensor<float>({3}, {1, 2, 3})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(ArrayGradTest, PreventGradientPassesThrough) {
  const Tensor x = MakeTensor<float>({2}, {1.5f, -2});
  ExpectTensorEqual(
      RunOk(NodeBuilder("n", "PreventGradient").Attr("T", DT_FLOAT).Attr("message", "why"), {x}),
      x);
}

TEST(ArrayGradTest, PadV2FillsWithConstant) {
  ExpectTensorEqual(RunOk(NodeBuilder("n", "PadV2").Attr("T", DT_FLOAT),
                          {MakeTensor<float>({1, 2}, {1, 2}), MakeTensor<int32_t>({2, 2}, {1, 0, 0, 1}),
                           Scalar(9.0f)}),
                    MakeTensor<float>({2, 3}, {9, 9, 9, 1, 2, 9}));
}

TEST(ArrayGradTest, StridedSliceGradInvertsStridedSlice) {
  // x[1:5:2, ::-1] of a [6, 3] tensor; its gradient scatters dy back.
  const Tensor dy = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor got = RunOk(
      NodeBuilder("n", "StridedSliceGrad").Attr("T", DT_FLOAT).Attr("Index", DT_INT32)
          .Attr("end_mask", 2).Attr("begin_mask", 2),
      {MakeTensor<int32_t>({2}, {6, 3}), MakeTensor<int32_t>({2}, {1, 0}),
       MakeTensor<int32_t>({2}, {5, 0}), MakeTensor<int32_t>({2}, {2, -1}), dy});
  ExpectTensorEqual(got, MakeTensor<float>({6, 3}, {0, 0, 0, 3, 2, 1, 0, 0, 0,
                                                    6, 5, 4, 0, 0, 0, 0, 0, 0}));
  // Shrink and new axes: x[None, 1] of a [2, 3] tensor has shape [1, 3].
  const Tensor got2 = RunOk(
      NodeBuilder("n", "StridedSliceGrad").Attr("T", DT_FLOAT).Attr("Index", DT_INT32)
          .Attr("new_axis_mask", 1).Attr("shrink_axis_mask", 2),
      {MakeTensor<int32_t>({2}, {2, 3}), MakeTensor<int32_t>({2}, {0, 1}),
       MakeTensor<int32_t>({2}, {0, 2}), MakeTensor<int32_t>({2}, {1, 1}),
       MakeTensor<float>({1, 3}, {7, 8, 9})});
  ExpectTensorEqual(got2, MakeTensor<float>({2, 3}, {0, 0, 0, 7, 8, 9}));
  const absl::Status s = RunStatus(
      NodeBuilder("n", "StridedSliceGrad").Attr("T", DT_FLOAT).Attr("Index", DT_INT32),
      {MakeTensor<int32_t>({1}, {4}), MakeTensor<int32_t>({1}, {0}),
       MakeTensor<int32_t>({1}, {2}), MakeTensor<int32_t>({1}, {1}),
       MakeTensor<float>({3}, {1, 2, 3})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

}  // namespace
}  // namespace weft
