// The ops issue 36 added (ops/array_misc_ops.cc, ops/math_misc_ops.cc and
// the older MatrixDiag forms): small values worked by hand, and the errors
// TensorFlow gives for inputs a graph can get wrong: bitcast size
// mismatches, partitions out of range, negative bincount values, num <= 0,
// bad shapes. TensorFlow's values on larger inputs:
// tests/conformance/array_misc_ops_test.py.
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
using testing_util::Vec;
constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

NodeBuilder Node(const char* op, const char* attr = "T", DataType t = DT_FLOAT) {
  return std::move(NodeBuilder("n", op).Attr(attr, t));
}

TEST(BitcastTest, ShapesFollowSizes) {
  auto out = RunOk(Node("Bitcast").Attr("type", DT_INT32), {Vec<float>({1.0f, -0.0f})});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2}, {0x3f800000, INT32_MIN}));
  out = RunOk(Node("Bitcast").Attr("type", DT_UINT16), {Vec<float>({1.0f})});
  EXPECT_EQ(out[0].shape().DebugString(), "[1,2]");
  out = RunOk(Node("Bitcast", "T", DT_UINT8).Attr("type", DT_INT32),
              {MakeTensor<uint8_t>({2, 4}, {1, 0, 0, 0, 0, 0, 0, 128})});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2}, {1, INT32_MIN}));
  EXPECT_STATUS(RunStatus(Node("Bitcast", "T", DT_UINT8).Attr("type", DT_INT32),
                          {MakeTensor<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6})}),
                kInvalid, "Cannot bitcast from 4 to 3 (uint8 to int32)");
  EXPECT_STATUS(RunStatus(Node("Bitcast", "T", DT_UINT8).Attr("type", DT_INT16),
                          {Scalar<uint8_t>(1)}),
                kInvalid, "Cannot bitcast");
}

TEST(EnsureShapeTest, NamesBothShapes) {
  NodeBuilder node = Node("EnsureShape");
  node.ShapeAttr("shape", {-1, 3});
  RunOk(node, {MakeTensor<float>({4, 3}, std::vector<float>(12, 1))});
  EXPECT_STATUS(RunStatus(node, {MakeTensor<float>({3, 2}, std::vector<float>(6, 1))}),
                kInvalid, "[3,2] is not compatible with expected shape [?,3]");
}

TEST(EmptyTest, InitZeroesAndChecksShape) {
  auto out = RunOk(Node("Empty", "dtype").Attr("init", true), {Vec<int32_t>({2, 3})});
  ExpectTensorEqual(out[0], MakeTensor<float>({2, 3}, std::vector<float>(6, 0)));
  EXPECT_STATUS(RunStatus(Node("Empty", "dtype"), {Vec<int32_t>({2, -1})}), kInvalid, "shape");
  EXPECT_STATUS(RunStatus(Node("Empty", "dtype"), {Scalar<int32_t>(2)}), kInvalid,
                "shape must be a vector");
}

TEST(LinSpaceTest, ValuesAndNum) {
  auto out = RunOk(Node("LinSpace"), {Scalar(0.0f), Scalar(1.0f), Scalar<int32_t>(5)});
  ExpectTensorEqual(out[0], MakeTensor<float>({5}, {0, 0.25f, 0.5f, 0.75f, 1}));
  out = RunOk(Node("LinSpace"), {Scalar(3.0f), Scalar(9.0f), Scalar<int32_t>(1)});
  ExpectTensorEqual(out[0], MakeTensor<float>({1}, {3}));
  EXPECT_STATUS(RunStatus(Node("LinSpace"), {Scalar(0.0f), Scalar(1.0f), Scalar<int32_t>(0)}),
                kInvalid, "Requires num > 0: 0");
  EXPECT_STATUS(RunStatus(Node("LinSpace"), {Scalar(0.0f), Scalar(1.0f), Scalar<int32_t>(-3)}),
                kInvalid, "Requires num > 0: -3");
  EXPECT_STATUS(RunStatus(Node("LinSpace"), {Vec<float>({0}), Scalar(1.0f), Scalar<int32_t>(2)}),
                kInvalid, "start must be a scalar");
}

TEST(UnravelIndexTest, CoordinatesAndBounds) {
  auto out = RunOk(Node("UnravelIndex", "Tidx", DT_INT32),
                   {Vec<int32_t>({22, 41, 37}), Vec<int32_t>({7, 6})});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2, 3}, {3, 6, 6, 4, 5, 1}));
  EXPECT_STATUS(RunStatus(Node("UnravelIndex", "Tidx", DT_INT32),
                          {Vec<int32_t>({42}), Vec<int32_t>({7, 6})}),
                kInvalid, "index is out of bound as with dims");
  EXPECT_STATUS(RunStatus(Node("UnravelIndex", "Tidx", DT_INT32),
                          {Vec<int32_t>({1}), Vec<int32_t>({7, 0})}),
                kInvalid, "Input dims cannot contain a dim of zero");
  EXPECT_STATUS(RunStatus(Node("UnravelIndex", "Tidx", DT_INT64),
                          {Vec<int64_t>({1}), Vec<int64_t>({int64_t{1} << 40, 1 << 30})}),
                kInvalid, "integer overflow");
}

TEST(SearchSortedTest, BoundsAndShapes) {
  Tensor sorted = MakeTensor<float>({1, 5}, {1, 2, 2, 2, 5});
  Tensor values = MakeTensor<float>({1, 4}, {0, 2, 3, 9});
  ExpectTensorEqual(RunOk(Node("LowerBound"), {sorted, values})[0],
                    MakeTensor<int32_t>({1, 4}, {0, 1, 4, 5}));
  ExpectTensorEqual(RunOk(Node("UpperBound"), {sorted, values})[0],
                    MakeTensor<int32_t>({1, 4}, {0, 4, 4, 5}));
  EXPECT_STATUS(RunStatus(Node("LowerBound"), {sorted, MakeTensor<float>({2, 1}, {1, 2})}),
                kInvalid, "Leading dim_size of both tensors must match.");
}

TEST(DataFormatTest, DimMapAndVecPermute) {
  ExpectTensorEqual(RunOk(Node("DataFormatDimMap", "T", DT_INT32),
                          {Vec<int32_t>({0, 1, 2, 3, -1})})[0],
                    Vec<int32_t>({0, 2, 3, 1, 1}));
  ExpectTensorEqual(RunOk(Node("DataFormatVecPermute", "T", DT_INT32),
                          {Vec<int32_t>({1, 2, 3, 4})})[0],
                    Vec<int32_t>({1, 4, 2, 3}));
  EXPECT_STATUS(RunStatus(Node("DataFormatVecPermute", "T", DT_INT32), {Vec<int32_t>({1, 2, 3})}),
                kInvalid, "1D input must be of size 2 or 4");
  EXPECT_STATUS(RunStatus(Node("DataFormatDimMap", "T", DT_INT32).Attr("dst_format", "NCHV"),
                          {Vec<int32_t>({1})}),
                kInvalid, "must determine a permutation");
}

TEST(ReverseTest, BoolDims) {
  Tensor x = MakeTensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectTensorEqual(RunOk(Node("Reverse", "T", DT_INT32), {x, Vec<bool>({true, false})})[0],
                    MakeTensor<int32_t>({2, 3}, {4, 5, 6, 1, 2, 3}));
  ExpectTensorEqual(RunOk(Node("Reverse", "T", DT_INT32), {x, Vec<bool>({false, true})})[0],
                    MakeTensor<int32_t>({2, 3}, {3, 2, 1, 6, 5, 4}));
  EXPECT_STATUS(RunStatus(Node("Reverse", "T", DT_INT32), {x, Vec<bool>({true})}), kInvalid,
                "'dims' must have the same number of values as 'input' has dimensions");
}

TEST(MatrixDiagTest, OlderForms) {
  ExpectTensorEqual(RunOk(Node("MatrixDiag"), {Vec<float>({1, 2})})[0],
                    MakeTensor<float>({2, 2}, {1, 0, 0, 2}));
  ExpectTensorEqual(RunOk(Node("MatrixDiagPart"), {MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})})[0],
                    Vec<float>({1, 5}));
  // V2 aligns every diagonal left: the superdiagonal of a 3x3 is [2, 6, pad].
  auto out = RunOk(Node("MatrixDiagPartV2"),
                   {MakeTensor<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), Vec<int32_t>({0, 1}),
                    Scalar(-1.0f)});
  ExpectTensorEqual(out[0], MakeTensor<float>({2, 3}, {2, 6, -1, 1, 5, 9}));
}

TEST(BincountTest, CountsWeightsAndErrors) {
  ExpectTensorEqual(RunOk(Node("Bincount"), {Vec<int32_t>({1, 1, 3, 7}), Scalar<int32_t>(5),
                                             Vec<float>({})})[0],
                    Vec<float>({0, 2, 0, 1, 0}));
  ExpectTensorEqual(RunOk(Node("DenseBincount", "Tidx", DT_INT64).Attr("T", DT_FLOAT)
                              .Attr("binary_output", true),
                          {MakeTensor<int64_t>({2, 3}, {0, 0, 2, 1, 1, 1}), Scalar<int64_t>(3),
                           Vec<float>({})})[0],
                    MakeTensor<float>({2, 3}, {1, 0, 1, 0, 1, 0}));
  EXPECT_STATUS(RunStatus(Node("Bincount"), {Vec<int32_t>({1, -1}), Scalar<int32_t>(5),
                                             Vec<float>({})}),
                kInvalid, "Input arr must be non-negative!");
  EXPECT_STATUS(RunStatus(Node("Bincount"), {Vec<int32_t>({1}), Scalar<int32_t>(-5),
                                             Vec<float>({})}),
                kInvalid, "size (-5) must be non-negative");
  EXPECT_STATUS(RunStatus(Node("Bincount"), {Vec<int32_t>({1, 2}), Scalar<int32_t>(5),
                                             Vec<float>({1})}),
                kInvalid, "`weights` must be the same shape as `arr`");
  EXPECT_STATUS(RunStatus(Node("SparseBincount", "Tidx", DT_INT32).Attr("T", DT_FLOAT),
                          {MakeTensor<int64_t>({1, 2}, {5, 0}), Vec<int32_t>({1}),
                           Vec<int64_t>({2, 4}), Scalar<int32_t>(3), Vec<float>({})}),
                kInvalid, "Index out of bound");
}

TEST(DynamicPartitionTest, OrderAndRange) {
  auto out = RunOk(Node("DynamicPartition").Attr("num_partitions", 3),
                   {Vec<float>({10, 20, 30, 40}), Vec<int32_t>({2, 0, 2, 0})});
  ExpectTensorEqual(out[0], Vec<float>({20, 40}));
  EXPECT_EQ(out[1].shape().DebugString(), "[0]");
  ExpectTensorEqual(out[2], Vec<float>({10, 30}));
  EXPECT_STATUS(RunStatus(Node("DynamicPartition").Attr("num_partitions", 2),
                          {Vec<float>({1, 2}), Vec<int32_t>({0, 2})}),
                kInvalid, "partitions[1] = 2 is not in [0, 2)");
  EXPECT_STATUS(RunStatus(Node("DynamicPartition").Attr("num_partitions", 2),
                          {Vec<float>({1, 2}), Vec<int32_t>({0, 1, 1})}),
                kInvalid, "data.shape must start with partitions.shape");
}

TEST(UniqueV2Test, Axis) {
  auto out = RunOk(Node("UniqueV2").Attr("Taxis", DT_INT32),
                   {MakeTensor<float>({3, 2}, {1, 2, 3, 4, 1, 2}), Vec<int32_t>({0})});
  ExpectTensorEqual(out[0], MakeTensor<float>({2, 2}, {1, 2, 3, 4}));
  ExpectTensorEqual(out[1], Vec<int32_t>({0, 1, 0}));
  out = RunOk(Node("UniqueV2").Attr("Taxis", DT_INT32),
              {MakeTensor<float>({2, 3}, {1, 2, 1, 3, 4, 3}), Vec<int32_t>({1})});
  ExpectTensorEqual(out[0], MakeTensor<float>({2, 2}, {1, 2, 3, 4}));
  EXPECT_STATUS(RunStatus(Node("UniqueV2").Attr("Taxis", DT_INT32),
                          {MakeTensor<float>({2, 3}, {1, 2, 1, 3, 4, 3}), Vec<int32_t>({2})}),
                kInvalid, "axis has to be between [-2, 2)");
}

TEST(SelectTest, InTopKAndNthElement) {
  Tensor pred = MakeTensor<float>({3, 3}, {0.1f, 0.5f, 0.4f, 1, 1, 1, 0.2f, NAN, 0.3f});
  ExpectTensorEqual(RunOk(Node("InTopKV2", "T", DT_INT32),
                          {pred, Vec<int32_t>({2, 0, 2}), Scalar<int32_t>(1)})[0],
                    Vec<bool>({false, true, false}));
  ExpectTensorEqual(RunOk(Node("InTopKV2", "T", DT_INT32),
                          {pred, Vec<int32_t>({2, 5, 0}), Scalar<int32_t>(2)})[0],
                    Vec<bool>({true, false, false}));
  Tensor x = MakeTensor<float>({2, 3}, {3, 1, 2, 9, 7, 8});
  ExpectTensorEqual(RunOk(Node("NthElement"), {x, Scalar<int32_t>(0)})[0], Vec<float>({1, 7}));
  ExpectTensorEqual(RunOk(Node("NthElement").Attr("reverse", true), {x, Scalar<int32_t>(0)})[0],
                    Vec<float>({3, 9}));
  EXPECT_STATUS(RunStatus(Node("NthElement"), {x, Scalar<int32_t>(3)}), kInvalid,
                "Input must have last dimension > n = 3");
}

TEST(CumulativeLogsumexpTest, ExclusiveReverse) {
  Tensor x = Vec<double>({0, std::log(3.0), -INFINITY});
  auto out = RunOk(Node("CumulativeLogsumexp", "T", DT_DOUBLE), {x, Scalar<int32_t>(0)});
  EXPECT_DOUBLE_EQ(out[0].data<double>()[1], std::log(4.0));
  out = RunOk(Node("CumulativeLogsumexp", "T", DT_DOUBLE).Attr("exclusive", true),
              {x, Scalar<int32_t>(0)});
  EXPECT_EQ(out[0].data<double>()[0], -INFINITY);
  EXPECT_DOUBLE_EQ(out[0].data<double>()[2], std::log(4.0));
}

TEST(BetaincTest, ShapesMustAgree) {
  auto out = RunOk(Node("Betainc"), {Scalar(1.0f), Scalar(1.0f), Vec<float>({0.25f, 0.5f})});
  ExpectTensorEqual(out[0], Vec<float>({0.25f, 0.5f}));  // I_x(1, 1) = x
  EXPECT_STATUS(RunStatus(Node("Betainc"), {Vec<float>({1, 1}), Scalar(1.0f),
                                            Vec<float>({0.5f, 0.5f, 0.5f})}),
                kInvalid, "Shapes of a and x are inconsistent");
}

TEST(MaxPoolV2Test, WindowInputs) {
  Tensor x = MakeTensor<float>({1, 2, 2, 1}, {1, 4, 3, 2});
  auto out = RunOk(Node("MaxPoolV2").Attr("padding", "VALID"),
                   {x, Vec<int32_t>({1, 2, 2, 1}), Vec<int32_t>({1, 1, 1, 1})});
  ExpectTensorEqual(out[0], MakeTensor<float>({1, 1, 1, 1}, {4}));
  EXPECT_STATUS(RunStatus(Node("MaxPoolV2").Attr("padding", "VALID"),
                          {x, Vec<int32_t>({1, 2, 2}), Vec<int32_t>({1, 1, 1, 1})}),
                kInvalid, "Sliding window ksize field must specify 4 dimensions");
}

}  // namespace
}  // namespace weft
