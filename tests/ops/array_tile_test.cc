// Tile, BroadcastTo, Pad.
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

TEST(TileTest, Multiples) {
  Tensor x = MakeTensor<int32_t>({2, 2}, {1, 2, 3, 4});
  auto out = RunOk(NodeBuilder("t", "Tile").Attr("T", DT_INT32), {x, Vec<int32_t>({2, 3})});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({4, 6}, {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                                                         1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  out = RunOk(NodeBuilder("t", "Tile").Attr("T", DT_INT32), {x, Vec<int32_t>({1, 1})});
  EXPECT_TRUE(out[0].SharesBufferWith(x));
  out = RunOk(NodeBuilder("t", "Tile").Attr("T", DT_INT32).Attr("Tmultiples", DT_INT64),
              {x, Vec<int64_t>({0, 2})});
  EXPECT_EQ(out[0].shape().DebugString(), "[0,4]");
  out = RunOk(NodeBuilder("t", "Tile").Attr("T", DT_STRING),
              {Strings({1, 2}, {"a", "b"}), Vec<int32_t>({2, 1})});
  ExpectTensorEqual(out[0], Strings({2, 2}, {"a", "b", "a", "b"}));
  out = RunOk(NodeBuilder("t", "Tile").Attr("T", DT_FLOAT), {Scalar(3.0f), Vec<int32_t>({})});
  ExpectTensorEqual(out[0], Scalar(3.0f));
  Tensor y = MakeTensor<double>({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  out = RunOk(NodeBuilder("t", "Tile").Attr("T", DT_DOUBLE), {y, Vec<int32_t>({1, 2, 2})});
  ExpectTensorEqual(out[0], MakeTensor<double>({2, 2, 6}, {1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3,
                                                           4, 5, 6, 4, 5, 6, 4, 5, 6, 4, 5, 6}));
}

TEST(TileTest, Errors) {
  Tensor x = MakeTensor<int32_t>({2, 2}, {1, 2, 3, 4});
  EXPECT_STATUS(RunStatus(NodeBuilder("t", "Tile").Attr("T", DT_INT32), {x, Vec<int32_t>({2})}),
                absl::StatusCode::kInvalidArgument, "vector of length 2 but got length 1");
  EXPECT_STATUS(RunStatus(NodeBuilder("t", "Tile").Attr("T", DT_INT32), {x, Vec<int32_t>({2, -1})}),
                absl::StatusCode::kInvalidArgument, "multiples[1] >= 0");
}

TEST(BroadcastToTest, Shapes) {
  Tensor x = Vec<float>({1, 2, 3});
  auto out = RunOk(NodeBuilder("b", "BroadcastTo").Attr("T", DT_FLOAT), {x, Vec<int32_t>({2, 3})});
  ExpectTensorEqual(out[0], MakeTensor<float>({2, 3}, {1, 2, 3, 1, 2, 3}));
  Tensor col = MakeTensor<int64_t>({2, 1}, {7, 8});
  out = RunOk(NodeBuilder("b", "BroadcastTo").Attr("T", DT_INT64).Attr("Tidx", DT_INT64),
              {col, Vec<int64_t>({2, 2, 3})});
  ExpectTensorEqual(out[0], MakeTensor<int64_t>({2, 2, 3}, {7, 7, 7, 8, 8, 8, 7, 7, 7, 8, 8, 8}));
  out = RunOk(NodeBuilder("b", "BroadcastTo").Attr("T", DT_BOOL), {Scalar(true), Vec<int32_t>({2})});
  ExpectTensorEqual(out[0], MakeTensor<bool>({2}, {true, true}));
  out = RunOk(NodeBuilder("b", "BroadcastTo").Attr("T", DT_FLOAT), {x, Vec<int32_t>({3})});
  EXPECT_TRUE(out[0].SharesBufferWith(x));
  out = RunOk(NodeBuilder("b", "BroadcastTo").Attr("T", DT_FLOAT), {x, Vec<int32_t>({0, 3})});
  EXPECT_EQ(out[0].shape().DebugString(), "[0,3]");
  EXPECT_STATUS(RunStatus(NodeBuilder("b", "BroadcastTo").Attr("T", DT_FLOAT), {x, Vec<int32_t>({2, 4})}),
                absl::StatusCode::kInvalidArgument,
                "Unable to broadcast tensor of shape [3] to tensor of shape [2,4]");
  EXPECT_STATUS(RunStatus(NodeBuilder("b", "BroadcastTo").Attr("T", DT_FLOAT),
                          {MakeTensor<float>({1, 3}, {}), Vec<int32_t>({3})}),
                absl::StatusCode::kInvalidArgument, "Unable to broadcast");
}

TEST(PadTest, PadsWithZeros) {
  Tensor x = MakeTensor<int32_t>({2, 2}, {1, 2, 3, 4});
  auto out = RunOk(NodeBuilder("p", "Pad").Attr("T", DT_INT32),
                   {x, MakeTensor<int32_t>({2, 2}, {1, 0, 0, 2})});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({3, 4}, {0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}));
  out = RunOk(NodeBuilder("p", "Pad").Attr("T", DT_STRING).Attr("Tpaddings", DT_INT64),
              {Strings({1}, {"a"}), MakeTensor<int64_t>({1, 2}, {1, 1})});
  ExpectTensorEqual(out[0], Strings({3}, {"", "a", ""}));
  out = RunOk(NodeBuilder("p", "Pad").Attr("T", DT_FLOAT),
              {MakeTensor<float>({0, 1}, {}), MakeTensor<int32_t>({2, 2}, {1, 0, 0, 0})});
  ExpectTensorEqual(out[0], MakeTensor<float>({1, 1}, {0}));
  out = RunOk(NodeBuilder("p", "Pad").Attr("T", DT_FLOAT), {Scalar(5.0f), MakeTensor<int32_t>({0, 2}, {})});
  ExpectTensorEqual(out[0], Scalar(5.0f));
}

TEST(PadTest, Errors) {
  Tensor x = MakeTensor<int32_t>({2, 2}, {1, 2, 3, 4});
  EXPECT_STATUS(RunStatus(NodeBuilder("p", "Pad").Attr("T", DT_INT32),
                          {x, MakeTensor<int32_t>({2, 2}, {1, -1, 0, 0})}),
                absl::StatusCode::kInvalidArgument, "Paddings must be non-negative: 1 -1");
  EXPECT_STATUS(RunStatus(NodeBuilder("p", "Pad").Attr("T", DT_INT32),
                          {x, MakeTensor<int32_t>({3, 2}, {})}),
                absl::StatusCode::kInvalidArgument, "first dimension of paddings must be the rank");
  EXPECT_STATUS(RunStatus(NodeBuilder("p", "Pad").Attr("T", DT_INT32), {x, Vec<int32_t>({1, 1})}),
                absl::StatusCode::kInvalidArgument, "matrix with 2 columns");
}

}  // namespace
}  // namespace weft
