// TopKV2, MatrixBandPart, Diag/DiagPart, MirrorPad(Grad), SpaceToBatchND,
// BatchToSpaceND, SpaceToDepth, DepthToSpace, Roll, ReverseSequence and
// CheckNumerics, MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3: small values worked by hand, and the errors TensorFlow
// gives for inputs a graph can get wrong (TensorFlow's values on larger
// inputs: tests/conformance/array_index_ops_test.py).
#include <cmath>
#include <limits>
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
constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

NodeBuilder TopK(DataType t = DT_FLOAT) {
  return std::move(NodeBuilder("topk", "TopKV2").Attr("T", t));
}

TEST(TopKTest, LargestFirstTiesByIndex) {
  Tensor x = MakeTensor<float>({2, 5}, {1, 3, 3, -1, 3, 0, 0, 0, 0, 5});
  auto out = RunOk(TopK(), {x, Scalar<int32_t>(3)});
  ExpectTensorEqual(out[0], MakeTensor<float>({2, 3}, {3, 3, 3, 5, 0, 0}));
  ExpectTensorEqual(out[1], MakeTensor<int32_t>({2, 3}, {1, 2, 4, 4, 0, 1}));
  out = RunOk(TopK(), {x, Scalar<int32_t>(1)});
  ExpectTensorEqual(out[1], MakeTensor<int32_t>({2, 1}, {1, 4}));
  out = RunOk(TopK(), {x, Scalar<int32_t>(0)});
  EXPECT_EQ(out[0].shape().DebugString(), "[2,0]");
  out = RunOk(TopK(DT_INT64).Attr("Tk", DT_INT64).Attr("index_type", DT_INT64),
              {MakeTensor<int64_t>({4}, {7, -2, 9, 7}), Scalar<int64_t>(4)});
  ExpectTensorEqual(out[0], MakeTensor<int64_t>({4}, {9, 7, 7, -2}));
  ExpectTensorEqual(out[1], MakeTensor<int64_t>({4}, {2, 0, 3, 1}));
}

TEST(TopKTest, LargeRows) {
  const int64_t n = 100000;
  std::vector<float> v(2 * n);
  for (int64_t i = 0; i < 2 * n; ++i) v[i] = static_cast<float>((i * 7919) % 1000);
  auto out = RunOk(TopK(), {MakeTensor<float>({2, n}, v), Scalar<int32_t>(5)});
  // 999 first appears where i * 7919 % 1000 == 999: i = 321 (mod 1000).
  EXPECT_EQ(out[0].data<float>()[0], 999.0f);
  EXPECT_EQ(out[1].data<int32_t>()[0], 321);
  EXPECT_EQ(out[1].data<int32_t>()[1], 1321);
}

TEST(TopKTest, Errors) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_STATUS(RunStatus(TopK(), {x, Scalar<int32_t>(-1)}), kInvalid, "Need k >= 0, got -1");
  EXPECT_STATUS(RunStatus(TopK(), {x, Scalar<int32_t>(4)}), kInvalid,
                "input must have at least k columns. Had 3, needed 4");
  EXPECT_STATUS(RunStatus(TopK(), {Scalar(1.0f), Scalar<int32_t>(1)}), kInvalid,
                "input must be >= 1-D");
  EXPECT_STATUS(RunStatus(TopK(), {x, Vec<int32_t>({1})}), kInvalid, "k must be 0-D");
}

TEST(MatrixBandPartTest, Band) {
  Tensor x = MakeTensor<int32_t>({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  auto node = NodeBuilder("b", "MatrixBandPart").Attr("T", DT_INT32);
  auto out = RunOk(node, {x, Scalar<int64_t>(1), Scalar<int64_t>(0)});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({3, 4}, {1, 0, 0, 0, 5, 6, 0, 0, 0, 10, 11, 0}));
  out = RunOk(node, {x, Scalar<int64_t>(0), Scalar<int64_t>(-1)});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({3, 4}, {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  out = RunOk(node, {x, Scalar<int64_t>(-1), Scalar<int64_t>(-1)});
  EXPECT_TRUE(out[0].SharesBufferWith(x));
  EXPECT_STATUS(RunStatus(node, {x, Scalar<int64_t>(4), Scalar<int64_t>(0)}), kInvalid,
                "num_lower must be negative or less or equal to number of rows (3) got: 4");
  EXPECT_STATUS(RunStatus(node, {x, Scalar<int64_t>(0), Scalar<int64_t>(5)}), kInvalid,
                "num_upper must be negative or less or equal to number of columns (4) got: 5");
  EXPECT_STATUS(RunStatus(node, {Vec<int32_t>({1}), Scalar<int64_t>(0), Scalar<int64_t>(0)}),
                kInvalid, "input must be at least 2-dim");
  EXPECT_STATUS(RunStatus(node, {x, Vec<int64_t>({0}), Scalar<int64_t>(0)}), kInvalid,
                "num_lower must be scalar");
}

TEST(DiagTest, DiagAndPart) {
  auto out = RunOk(NodeBuilder("d", "Diag").Attr("T", DT_FLOAT), {Vec<float>({1, 2})});
  ExpectTensorEqual(out[0], MakeTensor<float>({2, 2}, {1, 0, 0, 2}));
  out = RunOk(NodeBuilder("d", "DiagPart").Attr("T", DT_FLOAT), {out[0]});
  ExpectTensorEqual(out[0], Vec<float>({1, 2}));
  EXPECT_STATUS(RunStatus(NodeBuilder("d", "Diag").Attr("T", DT_FLOAT), {Scalar(1.0f)}),
                kInvalid, "Input must be at least rank 1, got 0");
  EXPECT_STATUS(RunStatus(NodeBuilder("d", "DiagPart").Attr("T", DT_FLOAT),
                          {MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}),
                kInvalid, "dimensions 0 and 1 do not match");
  EXPECT_STATUS(RunStatus(NodeBuilder("d", "DiagPart").Attr("T", DT_FLOAT), {Vec<float>({1})}),
                kInvalid, "should be even and positive");
}

NodeBuilder MirrorPad(const char* op, const char* mode, DataType t = DT_FLOAT) {
  return std::move(NodeBuilder("m", op).Attr("T", t).Attr("mode", mode));
}

TEST(MirrorPadTest, ReflectAndSymmetric) {
  Tensor x = Vec<int32_t>({1, 2, 3});
  Tensor pads = MakeTensor<int32_t>({1, 2}, {2, 1});
  auto out = RunOk(MirrorPad("MirrorPad", "REFLECT", DT_INT32), {x, pads});
  ExpectTensorEqual(out[0], Vec<int32_t>({3, 2, 1, 2, 3, 2}));
  out = RunOk(MirrorPad("MirrorPad", "SYMMETRIC", DT_INT32), {x, pads});
  ExpectTensorEqual(out[0], Vec<int32_t>({2, 1, 1, 2, 3, 3}));
  out = RunOk(MirrorPad("MirrorPad", "SYMMETRIC", DT_STRING),
              {Strings({2}, {"a", "b"}), MakeTensor<int32_t>({1, 2}, {0, 2})});
  ExpectTensorEqual(out[0], Strings({4}, {"a", "b", "b", "a"}));
  // The gradient adds every mirrored copy back: [3,2,1,2,3,2] -> x.
  out = RunOk(MirrorPad("MirrorPadGrad", "REFLECT"),
              {Vec<float>({1, 10, 100, 1000, 10000, 100000}), pads});
  ExpectTensorEqual(out[0], Vec<float>({100, 101010, 10001}));
}

TEST(MirrorPadTest, PaddingsTooBig) {
  Tensor x = Vec<float>({1, 2, 3});
  EXPECT_STATUS(RunStatus(MirrorPad("MirrorPad", "REFLECT"), {x, MakeTensor<int32_t>({1, 2}, {3, 0})}),
                kInvalid, "paddings must be less than the dimension size: 3, 0 not less than 3");
  EXPECT_TRUE(RunStatus(MirrorPad("MirrorPad", "SYMMETRIC"), {x, MakeTensor<int32_t>({1, 2}, {3, 0})}).ok());
  EXPECT_STATUS(RunStatus(MirrorPad("MirrorPad", "SYMMETRIC"), {x, MakeTensor<int32_t>({1, 2}, {0, 4})}),
                kInvalid, "paddings must be no greater than the dimension size: 0, 4 greater than 3");
  EXPECT_STATUS(RunStatus(MirrorPad("MirrorPad", "REFLECT"), {x, MakeTensor<int32_t>({1, 2}, {-1, 0})}),
                kInvalid, "paddings must be non-negative: -1 0");
  EXPECT_STATUS(RunStatus(MirrorPad("MirrorPad", "REFLECT"), {x, MakeTensor<int32_t>({2, 2}, {0, 0, 0, 0})}),
                kInvalid, "The first dimension of paddings must be the rank of inputs");
  EXPECT_STATUS(RunStatus(MirrorPad("MirrorPadGrad", "REFLECT"), {x, MakeTensor<int32_t>({1, 2}, {1, 1})}),
                kInvalid, "paddings must be less than the output dimension size: 1, 1 not less than 1");
}

NodeBuilder SpaceBatch(const char* op) {
  return std::move(NodeBuilder("s", op).Attr("T", DT_INT32));
}

TEST(SpaceToBatchTest, RoundTrip) {
  // [1, 2, 3, 1] padded to width 4, blocks of 2x2.
  Tensor x = MakeTensor<int32_t>({1, 2, 3, 1}, {1, 2, 3, 4, 5, 6});
  Tensor block = Vec<int32_t>({2, 2});
  Tensor pads = MakeTensor<int32_t>({2, 2}, {0, 0, 1, 0});
  auto out = RunOk(SpaceBatch("SpaceToBatchND"), {x, block, pads});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({4, 1, 2, 1}, {0, 2, 1, 3, 0, 5, 4, 6}));
  out = RunOk(SpaceBatch("BatchToSpaceND"), {out[0], block, pads});
  ExpectTensorEqual(out[0], x);
}

TEST(SpaceToBatchTest, Errors) {
  Tensor x = MakeTensor<int32_t>({1, 2, 3, 1}, {1, 2, 3, 4, 5, 6});
  Tensor no_pads = MakeTensor<int32_t>({2, 2}, {0, 0, 0, 0});
  EXPECT_STATUS(RunStatus(SpaceBatch("SpaceToBatchND"), {x, Vec<int32_t>({2, 2}), no_pads}),
                kInvalid, "padded_shape[1]=3 is not divisible by block_shape[1]=2");
  EXPECT_STATUS(RunStatus(SpaceBatch("SpaceToBatchND"), {x, Vec<int32_t>({0, 1}), no_pads}),
                kInvalid, "All values in block_shape must be positive");
  EXPECT_STATUS(RunStatus(SpaceBatch("SpaceToBatchND"),
                          {x, Vec<int32_t>({1, 1}), MakeTensor<int32_t>({2, 2}, {0, -1, 0, 0})}),
                kInvalid, "Paddings must be non-negative");
  EXPECT_STATUS(RunStatus(SpaceBatch("SpaceToBatchND"), {x, Vec<int32_t>({1, 1}), Vec<int32_t>({0, 0})}),
                kInvalid, "paddings should have shape [2, 2]");
  EXPECT_STATUS(RunStatus(SpaceBatch("BatchToSpaceND"), {x, Vec<int32_t>({2, 1}), no_pads}),
                kInvalid, "Input batch dimension (1) is not divisible by product of block sizes (2)");
  EXPECT_STATUS(RunStatus(SpaceBatch("BatchToSpaceND"),
                          {x, Vec<int32_t>({1, 1}), MakeTensor<int32_t>({2, 2}, {2, 1, 0, 0})}),
                kInvalid, "cropped_shape[0]=-1 must be non-negative");
  EXPECT_STATUS(RunStatus(SpaceBatch("BatchToSpaceND"), {Vec<int32_t>({1}), Vec<int32_t>({1}),
                                                         MakeTensor<int32_t>({1, 2}, {0, 0})}),
                kInvalid, "input rank should be >= 2 instead of 1");
}

TEST(SpaceToDepthTest, RoundTripAndErrors) {
  Tensor x = MakeTensor<int32_t>({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto node = [](const char* op) {
    return std::move(NodeBuilder("s", op).Attr("T", DT_INT32).Attr("block_size", 2));
  };
  auto out = RunOk(node("SpaceToDepth"), {x});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({1, 1, 1, 8}, {1, 2, 3, 4, 5, 6, 7, 8}));
  out = RunOk(node("DepthToSpace"), {MakeTensor<int32_t>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({1, 2, 4, 1}, {1, 2, 5, 6, 3, 4, 7, 8}));
  out = RunOk(node("SpaceToDepth"), {out[0]});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_STATUS(RunStatus(node("SpaceToDepth"), {MakeTensor<int32_t>({1, 3, 2, 1}, {1, 2, 3, 4, 5, 6})}),
                kInvalid, "Image height 3 and width 2 should be divisible by block_size: 2");
  EXPECT_STATUS(RunStatus(node("DepthToSpace"), {MakeTensor<int32_t>({1, 1, 1, 2}, {1, 2})}),
                kInvalid, "Input depth dimension 2 should be divisible by: 4");
  EXPECT_STATUS(RunStatus(node("DepthToSpace"), {Vec<int32_t>({1, 2, 3, 4})}), kInvalid,
                "Input rank should be: 4 instead of: 1");
  EXPECT_STATUS(RunStatus(node("DepthToSpace").Attr("data_format", "NCHW"), {x}), kInvalid,
                "Only NHWC data_format supported on CPU. Got NCHW");
}

TEST(RollTest, ShiftsAndErrors) {
  Tensor x = MakeTensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto roll = NodeBuilder("r", "Roll").Attr("T", DT_INT32).Attr("Tshift", DT_INT32).Attr("Taxis", DT_INT32);
  auto out = RunOk(roll, {x, Vec<int32_t>({1, -1}), Vec<int32_t>({0, 1})});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2, 3}, {5, 6, 4, 2, 3, 1}));
  out = RunOk(roll, {x, Vec<int32_t>({2, 2}), Vec<int32_t>({-1, 1})});  // 4 = 1 mod 3
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2, 3}, {3, 1, 2, 6, 4, 5}));
  EXPECT_STATUS(RunStatus(roll, {x, Vec<int32_t>({1}), Vec<int32_t>({2})}), kInvalid,
                "axis 2 is out of range");
  EXPECT_STATUS(RunStatus(roll, {x, Vec<int32_t>({1, 1}), Vec<int32_t>({0})}), kInvalid,
                "shift and axis must have the same size");
  EXPECT_STATUS(RunStatus(roll, {Scalar<int32_t>(1), Scalar<int32_t>(1), Scalar<int32_t>(0)}),
                kInvalid, "input must be 1-D or higher");
}

TEST(ReverseSequenceTest, LengthsAndErrors) {
  Tensor x = MakeTensor<int32_t>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto node = [](int seq, int batch) {
    return std::move(NodeBuilder("r", "ReverseSequence").Attr("T", DT_INT32)
                         .Attr("seq_dim", seq).Attr("batch_dim", batch));
  };
  auto out = RunOk(node(1, 0), {x, Vec<int64_t>({3, 0})});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2, 4}, {3, 2, 1, 4, 5, 6, 7, 8}));
  out = RunOk(node(0, 1), {x, Vec<int64_t>({2, 1, 0, 2})});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2, 4}, {5, 2, 3, 8, 1, 6, 7, 4}));
  EXPECT_STATUS(RunStatus(node(1, 0), {x, Vec<int64_t>({5, 0})}), kInvalid,
                "seq_lens(0) > input.dims(1), (5 vs. 4)");
  EXPECT_STATUS(RunStatus(node(1, 0), {x, Vec<int64_t>({1, -1})}), kInvalid, "seq_lens(1) < 0");
  EXPECT_STATUS(RunStatus(node(1, 0), {x, Vec<int64_t>({1})}), kInvalid,
                "Length of seq_lengths != input.dims(0), (1 vs. 2)");
  EXPECT_STATUS(RunStatus(node(1, 1), {x, Vec<int64_t>({1, 1})}), kInvalid,
                "batch_dim == seq_dim == 1");
  EXPECT_STATUS(RunStatus(node(2, 0), {x, Vec<int64_t>({1, 1})}), kInvalid,
                "seq_dim must be < input rank");
}

TEST(CheckNumericsTest, Messages) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto node = [](const char* op) {
    return std::move(NodeBuilder("check", op).Attr("T", DT_FLOAT).Attr("message", "loss"));
  };
  Tensor ok = Vec<float>({1, -2});
  auto out = RunOk(node("CheckNumerics"), {ok});
  EXPECT_TRUE(out[0].SharesBufferWith(ok));
  EXPECT_STATUS(RunStatus(node("CheckNumerics"), {Vec<float>({1, nan})}), kInvalid,
                "loss : Tensor had NaN values");
  EXPECT_STATUS(RunStatus(node("CheckNumerics"), {Vec<float>({-inf, 1})}), kInvalid,
                "loss : Tensor had Inf values");
  EXPECT_STATUS(RunStatus(node("CheckNumerics"), {Vec<float>({inf, nan})}), kInvalid,
                "loss : Tensor had Inf and NaN values");
  EXPECT_STATUS(RunStatus(node("CheckNumericsV2"), {Vec<float>({inf, nan, -inf})}), kInvalid,
                "loss : Tensor had -Inf, +Inf, and NaN values");
  EXPECT_STATUS(RunStatus(node("CheckNumericsV2"), {Vec<float>({inf, -inf})}), kInvalid,
                "loss : Tensor had -Inf and +Inf values");
}

TEST(MatrixDiagV3Test, BandAlignAndErrors) {
  // 3x3, diagonals 1 (length 2) and 0 (length 3).
  Tensor m = MakeTensor<int32_t>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto part = [](const char* align) {
    return std::move(NodeBuilder("p", "MatrixDiagPartV3").Attr("T", DT_INT32).Attr("align", align));
  };
  auto out = RunOk(part("RIGHT_LEFT"), {m, Vec<int32_t>({0, 1}), Scalar<int32_t>(-1)});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2, 3}, {-1, 2, 6, 1, 5, 9}));
  out = RunOk(part("LEFT_RIGHT"), {m, Vec<int32_t>({-1, 1}), Scalar<int32_t>(0)});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({3, 3}, {2, 6, 0, 1, 5, 9, 0, 4, 8}));
  auto diag = NodeBuilder("d", "MatrixDiagV3").Attr("T", DT_INT32);
  out = RunOk(diag, {Vec<int32_t>({1, 2}), Scalar<int32_t>(1), Scalar<int32_t>(-1),
                     Scalar<int32_t>(-1), Scalar<int32_t>(0)});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({3, 3}, {0, 1, 0, 0, 0, 2, 0, 0, 0}));
  auto set = NodeBuilder("s", "MatrixSetDiagV3").Attr("T", DT_INT32);
  out = RunOk(set, {m, Vec<int32_t>({0, 0, 0}), Scalar<int32_t>(0)});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({3, 3}, {0, 2, 3, 4, 0, 6, 7, 8, 0}));
  EXPECT_STATUS(RunStatus(part("RIGHT_LEFT"), {m, Vec<int32_t>({1, 0}), Scalar<int32_t>(0)}),
                kInvalid, "lower_diag_index must not be larger than upper_diag_index: 1 > 0");
  EXPECT_STATUS(RunStatus(part("RIGHT_LEFT"), {m, Vec<int32_t>({0, 3}), Scalar<int32_t>(0)}),
                kInvalid, "upper_diag_index is out of bound: 3. It must be between -3 and 3");
  EXPECT_STATUS(RunStatus(part("RIGHT_LEFT"), {m, Vec<int32_t>({0, 1, 2}), Scalar<int32_t>(0)}),
                kInvalid, "diag_index must be a scalar or vector with one or two elements");
  EXPECT_STATUS(RunStatus(diag, {Vec<int32_t>({1, 2}), Scalar<int32_t>(0), Scalar<int32_t>(4),
                                 Scalar<int32_t>(3), Scalar<int32_t>(0)}),
                kInvalid, "The number of rows or columns is not consistent");
  EXPECT_STATUS(RunStatus(diag, {Vec<int32_t>({1, 2}), Vec<int32_t>({0, 1}), Scalar<int32_t>(-1),
                                 Scalar<int32_t>(-1), Scalar<int32_t>(0)}),
                kInvalid, "diagonal must be at least 2-dim");
  EXPECT_STATUS(RunStatus(set, {m, Vec<int32_t>({0, 0}), Scalar<int32_t>(0)}), kInvalid,
                "diagonal must have shape [3]");
}

}  // namespace
}  // namespace weft
