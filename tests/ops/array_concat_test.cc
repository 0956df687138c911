// ConcatV2, Pack, Unpack, Split, SplitV.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "tests/ops/array_test_util.h"

namespace weft {
namespace {

using testing_util::RunOk;
using testing_util::RunStatus;
using testing_util::Scalar;
using testing_util::Strings;
using testing_util::Vec;

NodeBuilder Concat(DataType t, int n) {
  return NodeBuilder("c", "ConcatV2").Attr("T", t).Attr("N", n);
}

TEST(ConcatV2Test, AxesIncludingNegative) {
  Tensor a = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  Tensor b = MakeTensor<float>({2, 1}, {5, 6});
  auto out = RunOk(Concat(DT_FLOAT, 2), {a, b, Scalar<int32_t>(1)});
  ExpectTensorEqual(out[0], MakeTensor<float>({2, 3}, {1, 2, 5, 3, 4, 6}));
  out = RunOk(Concat(DT_FLOAT, 2), {a, b, Scalar<int32_t>(-1)});
  ExpectTensorEqual(out[0], MakeTensor<float>({2, 3}, {1, 2, 5, 3, 4, 6}));
  Tensor c = MakeTensor<float>({1, 2}, {7, 8});
  out = RunOk(Concat(DT_FLOAT, 3).Attr("Tidx", DT_INT64), {a, c, a, Scalar<int64_t>(-2)});
  ExpectTensorEqual(out[0], MakeTensor<float>({5, 2}, {1, 2, 3, 4, 7, 8, 1, 2, 3, 4}));
}

TEST(ConcatV2Test, EmptyInputsStringsAndBools) {
  Tensor a = MakeTensor<int32_t>({0, 3}, {});
  Tensor b = MakeTensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = RunOk(Concat(DT_INT32, 2), {a, b, Scalar<int32_t>(0)});
  ExpectTensorEqual(out[0], b);
  out = RunOk(Concat(DT_STRING, 2), {Strings({1}, {"x"}), Strings({2}, {"y", "z"}), Scalar<int32_t>(0)});
  ExpectTensorEqual(out[0], Strings({3}, {"x", "y", "z"}));
  out = RunOk(Concat(DT_BOOL, 2), {MakeTensor<bool>({1, 1}, {true}),
                                   MakeTensor<bool>({1, 1}, {false}), Scalar<int32_t>(1)});
  ExpectTensorEqual(out[0], MakeTensor<bool>({1, 2}, {true, false}));
  out = RunOk(Concat(DT_INT64, 2), {MakeTensor<int64_t>({2, 0}, {}), MakeTensor<int64_t>({2, 0}, {}),
                                    Scalar<int32_t>(1)});
  EXPECT_EQ(out[0].shape().DebugString(), "[2,0]");
}

TEST(ConcatV2Test, Errors) {
  Tensor a = MakeTensor<float>({2, 2}, {});
  EXPECT_STATUS(RunStatus(Concat(DT_FLOAT, 2), {a, MakeTensor<float>({3, 3}, {}), Scalar<int32_t>(0)}),
                absl::StatusCode::kInvalidArgument,
                "Dimension 1 in both shapes must be equal: shape[0] = [2,2] vs. shape[1] = [3,3]");
  EXPECT_STATUS(RunStatus(Concat(DT_FLOAT, 2), {a, MakeTensor<float>({2}, {}), Scalar<int32_t>(0)}),
                absl::StatusCode::kInvalidArgument, "Ranks of all input tensors should match");
  EXPECT_STATUS(RunStatus(Concat(DT_FLOAT, 2), {a, a, Scalar<int32_t>(2)}),
                absl::StatusCode::kInvalidArgument, "out of range");
  EXPECT_STATUS(RunStatus(Concat(DT_FLOAT, 2), {Scalar(1.0f), Scalar(2.0f), Scalar<int32_t>(0)}),
                absl::StatusCode::kInvalidArgument, "Can't concatenate scalars");
  EXPECT_STATUS(RunStatus(Concat(DT_FLOAT, 2), {a, a, Vec<int32_t>({0, 1})}),
                absl::StatusCode::kInvalidArgument, "must be a scalar");
}

TEST(PackTest, Axes) {
  Tensor a = Vec<int32_t>({1, 2, 3});
  Tensor b = Vec<int32_t>({4, 5, 6});
  auto out = RunOk(NodeBuilder("p", "Pack").Attr("T", DT_INT32).Attr("N", 2), {a, b});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}));
  out = RunOk(NodeBuilder("p", "Pack").Attr("T", DT_INT32).Attr("N", 2).Attr("axis", 1), {a, b});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({3, 2}, {1, 4, 2, 5, 3, 6}));
  out = RunOk(NodeBuilder("p", "Pack").Attr("T", DT_INT32).Attr("N", 2).Attr("axis", -1), {a, b});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({3, 2}, {1, 4, 2, 5, 3, 6}));
  out = RunOk(NodeBuilder("p", "Pack").Attr("T", DT_STRING).Attr("N", 3),
              {Strings({}, {"a"}), Strings({}, {"b"}), Strings({}, {"c"})});
  ExpectTensorEqual(out[0], Strings({3}, {"a", "b", "c"}));
  out = RunOk(NodeBuilder("p", "Pack").Attr("T", DT_FLOAT).Attr("N", 1), {Scalar(2.0f)});
  ExpectTensorEqual(out[0], Vec<float>({2}));
  out = RunOk(NodeBuilder("p", "Pack").Attr("T", DT_FLOAT).Attr("N", 2),
              {MakeTensor<float>({0}, {}), MakeTensor<float>({0}, {})});
  EXPECT_EQ(out[0].shape().DebugString(), "[2,0]");
}

TEST(PackTest, Errors) {
  EXPECT_STATUS(RunStatus(NodeBuilder("p", "Pack").Attr("T", DT_INT32).Attr("N", 2),
                          {Vec<int32_t>({1}), Vec<int32_t>({1, 2})}),
                absl::StatusCode::kInvalidArgument,
                "Shapes of all inputs must match: values[0].shape = [1] != values[1].shape = [2]");
  EXPECT_STATUS(RunStatus(NodeBuilder("p", "Pack").Attr("T", DT_INT32).Attr("N", 2).Attr("axis", 2),
                          {Vec<int32_t>({1}), Vec<int32_t>({1})}),
                absl::StatusCode::kInvalidArgument, "out of range");
}

TEST(UnpackTest, AxesAndAliasing) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = RunOk(NodeBuilder("u", "Unpack").Attr("T", DT_FLOAT).Attr("num", 2), {x});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensorEqual(out[0], Vec<float>({1, 2, 3}));
  ExpectTensorEqual(out[1], Vec<float>({4, 5, 6}));
  EXPECT_TRUE(out[0].SharesBufferWith(x));  // row 0 starts the aligned buffer
  out = RunOk(NodeBuilder("u", "Unpack").Attr("T", DT_FLOAT).Attr("num", 3).Attr("axis", -1), {x});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensorEqual(out[2], Vec<float>({3, 6}));
  EXPECT_STATUS(RunStatus(NodeBuilder("u", "Unpack").Attr("T", DT_FLOAT).Attr("num", 3), {x}),
                absl::StatusCode::kInvalidArgument, "Input shape axis 0 must equal 3, got shape [2,3]");
  out = RunOk(NodeBuilder("u", "Unpack").Attr("T", DT_STRING).Attr("num", 2),
              {Strings({2}, {"p", "q"})});
  ExpectTensorEqual(out[1], Strings({}, {"q"}));
}

TEST(SplitTest, EvenSplits) {
  Tensor x = MakeTensor<int32_t>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto node = NodeBuilder("s", "Split").Attr("T", DT_INT32).Attr("num_split", 2);
  auto out = RunOk(node, {Scalar<int32_t>(1), x});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2, 2}, {1, 2, 5, 6}));
  ExpectTensorEqual(out[1], MakeTensor<int32_t>({2, 2}, {3, 4, 7, 8}));
  out = RunOk(node, {Scalar<int32_t>(-2), x});
  ExpectTensorEqual(out[1], MakeTensor<int32_t>({1, 4}, {5, 6, 7, 8}));
  EXPECT_STATUS(RunStatus(NodeBuilder("s", "Split").Attr("T", DT_INT32).Attr("num_split", 3),
                          {Scalar<int32_t>(1), x}),
                absl::StatusCode::kInvalidArgument, "evenly divide");
  EXPECT_STATUS(RunStatus(node, {Scalar<int32_t>(2), x}), absl::StatusCode::kInvalidArgument,
                "out of range");
}

TEST(SplitVTest, SizesWithInference) {
  Tensor x = MakeTensor<float>({5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto node = NodeBuilder("s", "SplitV").Attr("T", DT_FLOAT).Attr("num_split", 3);
  auto out = RunOk(node, {x, Vec<int64_t>({1, -1, 2}), Scalar<int32_t>(0)});
  ASSERT_EQ(out.size(), 3u);
  ExpectTensorEqual(out[0], MakeTensor<float>({1, 2}, {0, 1}));
  ExpectTensorEqual(out[1], MakeTensor<float>({2, 2}, {2, 3, 4, 5}));
  ExpectTensorEqual(out[2], MakeTensor<float>({2, 2}, {6, 7, 8, 9}));
  out = RunOk(NodeBuilder("s", "SplitV").Attr("T", DT_FLOAT).Attr("num_split", 2).Attr("Tlen", DT_INT32),
              {x, Vec<int32_t>({0, 2}), Scalar<int32_t>(1)});
  EXPECT_EQ(out[0].shape().DebugString(), "[5,0]");
  ExpectTensorEqual(out[1], x);
  EXPECT_STATUS(RunStatus(node, {x, Vec<int64_t>({1, 1, 1}), Scalar<int32_t>(0)}),
                absl::StatusCode::kInvalidArgument, "Determined shape must either match");
  EXPECT_STATUS(RunStatus(node, {x, Vec<int64_t>({-1, -1, 1}), Scalar<int32_t>(0)}),
                absl::StatusCode::kInvalidArgument, "may hold one -1");
  EXPECT_STATUS(RunStatus(node, {x, Vec<int64_t>({1, 4}), Scalar<int32_t>(0)}),
                absl::StatusCode::kInvalidArgument, "size_splits has 2 entries");
}

}  // namespace
}  // namespace weft
