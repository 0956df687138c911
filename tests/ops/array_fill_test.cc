// Fill, ZerosLike, OnesLike, Range, OneHot.
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

TEST(FillTest, EveryDtype) {
  auto out = RunOk(NodeBuilder("f", "Fill").Attr("T", DT_FLOAT), {Vec<int32_t>({2, 2}), Scalar(1.5f)});
  ExpectTensorEqual(out[0], MakeTensor<float>({2, 2}, {1.5, 1.5, 1.5, 1.5}));
  out = RunOk(NodeBuilder("f", "Fill").Attr("T", DT_STRING).Attr("index_type", DT_INT64),
              {Vec<int64_t>({3}), Strings({}, {"ab"})});
  ExpectTensorEqual(out[0], Strings({3}, {"ab", "ab", "ab"}));
  out = RunOk(NodeBuilder("f", "Fill").Attr("T", DT_BOOL), {Vec<int32_t>({1}), Scalar(true)});
  ExpectTensorEqual(out[0], MakeTensor<bool>({1}, {true}));
  out = RunOk(NodeBuilder("f", "Fill").Attr("T", DT_INT64), {Vec<int32_t>({}), Scalar<int64_t>(7)});
  ExpectTensorEqual(out[0], Scalar<int64_t>(7));
  out = RunOk(NodeBuilder("f", "Fill").Attr("T", DT_DOUBLE), {Vec<int32_t>({0, 4}), Scalar(2.0)});
  EXPECT_EQ(out[0].shape().DebugString(), "[0,4]");
}

TEST(FillTest, Errors) {
  EXPECT_STATUS(RunStatus(NodeBuilder("f", "Fill").Attr("T", DT_FLOAT),
                          {Vec<int32_t>({2, -1}), Scalar(1.0f)}),
                absl::StatusCode::kInvalidArgument, "negative size -1");
  EXPECT_STATUS(RunStatus(NodeBuilder("f", "Fill").Attr("T", DT_FLOAT),
                          {Vec<int32_t>({2}), Vec<float>({1, 2})}),
                absl::StatusCode::kInvalidArgument, "value must be a scalar");
  EXPECT_STATUS(RunStatus(NodeBuilder("f", "Fill").Attr("T", DT_FLOAT),
                          {Scalar<int32_t>(2), Scalar(1.0f)}),
                absl::StatusCode::kInvalidArgument, "must be a vector");
}

TEST(ZerosOnesLikeTest, Values) {
  auto out = RunOk(NodeBuilder("z", "ZerosLike").Attr("T", DT_FLOAT), {Vec<float>({3, 4})});
  ExpectTensorEqual(out[0], Vec<float>({0, 0}));
  out = RunOk(NodeBuilder("o", "OnesLike").Attr("T", DT_INT32), {Vec<int32_t>({3, 4, 5})});
  ExpectTensorEqual(out[0], Vec<int32_t>({1, 1, 1}));
  out = RunOk(NodeBuilder("o", "OnesLike").Attr("T", DT_BOOL), {MakeTensor<bool>({2}, {false, false})});
  ExpectTensorEqual(out[0], MakeTensor<bool>({2}, {true, true}));
  out = RunOk(NodeBuilder("o", "OnesLike").Attr("T", DT_HALF),
              {MakeTensor<Half>({1}, {FloatToHalf(3)})});
  EXPECT_EQ(HalfToFloat(out[0].data<Half>()[0]), 1.0f);
  out = RunOk(NodeBuilder("o", "OnesLike").Attr("T", DT_DOUBLE), {Scalar(9.0)});
  ExpectTensorEqual(out[0], Scalar(1.0));
  out = RunOk(NodeBuilder("z", "ZerosLike").Attr("T", DT_STRING), {Strings({2}, {"a", "b"})});
  ExpectTensorEqual(out[0], Strings({2}, {"", ""}));
  out = RunOk(NodeBuilder("z", "ZerosLike").Attr("T", DT_INT64), {MakeTensor<int64_t>({0}, {})});
  EXPECT_EQ(out[0].NumElements(), 0);
}

TEST(ZerosOnesLikeTest, OnesLikeStringIsRejected) {
  // TensorFlow's OnesLike has no string in its allowed types.
  EXPECT_EQ(RunStatus(NodeBuilder("o", "OnesLike").Attr("T", DT_STRING), {Strings({1}, {"a"})})
                .code(),
            absl::StatusCode::kInvalidArgument);
}

float FromHex(const char* hex) { return std::strtof(hex, nullptr); }

TEST(RangeTest, FloatsMatchTensorFlowBitForBit) {
  // Bit patterns from TensorFlow 2.21's tf.range(0., 1., .1) and (1., 0., -.3).
  auto out = RunOk(NodeBuilder("r", "Range").Attr("Tidx", DT_FLOAT),
                   {Scalar(0.0f), Scalar(1.0f), Scalar(0.1f)});
  const char* want[] = {"0x0p+0",        "0x1.99999ap-4", "0x1.99999ap-3", "0x1.333334p-2",
                        "0x1.99999ap-2", "0x1p-1",        "0x1.333334p-1", "0x1.666666p-1",
                        "0x1.99999ap-1", "0x1.cccccep-1"};
  ASSERT_EQ(out[0].NumElements(), 10);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(out[0].data<float>()[i], FromHex(want[i])) << i;
  out = RunOk(NodeBuilder("r", "Range").Attr("Tidx", DT_FLOAT),
              {Scalar(1.0f), Scalar(0.0f), Scalar(-0.3f)});
  ASSERT_EQ(out[0].NumElements(), 4);
  EXPECT_EQ(out[0].data<float>()[3], FromHex("0x1.99999p-4"));
  // Random ranges (start, limit, delta, values) from TensorFlow 2.21.
  struct Case {
    float start, limit, delta;
    std::vector<const char*> values;
  };
  const Case cases[] = {
      {-0x1.4f67cp+1, -0x1.9a3cdp-2, 0x1.8ac546p-2,
       {"-0x1.4f67cp+1", "-0x1.1e0f18p+1", "-0x1.d96cdcp+0", "-0x1.76bb8cp+0", "-0x1.140a3ap+0",
        "-0x1.62b1dp-1"}},
      {0x1.0a090ap+0, 0x1.6eb008p+0, 0x1.c45954p-2, {"0x1.0a090ap+0"}},
      {-0x1.37928ep+2, -0x1.a7f608p+1, 0x1.2cfb28p-1,
       {"-0x1.37928ep+2", "-0x1.11f328p+2", "-0x1.d8a788p+1"}},
  };
  for (const Case& c : cases) {
    out = RunOk(NodeBuilder("r", "Range").Attr("Tidx", DT_FLOAT),
                {Scalar(c.start), Scalar(c.limit), Scalar(c.delta)});
    ASSERT_EQ(out[0].NumElements(), static_cast<int64_t>(c.values.size()));
    for (size_t i = 0; i < c.values.size(); ++i) {
      EXPECT_EQ(out[0].data<float>()[i], FromHex(c.values[i])) << i;
    }
  }
}

TEST(RangeTest, Integers) {
  auto out = RunOk(NodeBuilder("r", "Range"), {Scalar<int32_t>(10), Scalar<int32_t>(1), Scalar<int32_t>(-3)});
  ExpectTensorEqual(out[0], Vec<int32_t>({10, 7, 4}));
  const int64_t big = int64_t{1} << 40;
  out = RunOk(NodeBuilder("r", "Range").Attr("Tidx", DT_INT64),
              {Scalar<int64_t>(big), Scalar<int64_t>(big + 5), Scalar<int64_t>(2)});
  ExpectTensorEqual(out[0], Vec<int64_t>({big, big + 2, big + 4}));
  out = RunOk(NodeBuilder("r", "Range"), {Scalar<int32_t>(3), Scalar<int32_t>(3), Scalar<int32_t>(1)});
  EXPECT_EQ(out[0].shape().DebugString(), "[0]");
  out = RunOk(NodeBuilder("r", "Range").Attr("Tidx", DT_DOUBLE), {Scalar(0.0), Scalar(1.0), Scalar(0.5)});
  ExpectTensorEqual(out[0], Vec<double>({0, 0.5}));
}

TEST(RangeTest, Errors) {
  EXPECT_STATUS(RunStatus(NodeBuilder("r", "Range"),
                          {Scalar<int32_t>(0), Scalar<int32_t>(5), Scalar<int32_t>(0)}),
                absl::StatusCode::kInvalidArgument, "delta != 0");
  EXPECT_STATUS(RunStatus(NodeBuilder("r", "Range"),
                          {Scalar<int32_t>(5), Scalar<int32_t>(1), Scalar<int32_t>(1)}),
                absl::StatusCode::kInvalidArgument, "start <= limit when delta > 0: 5/1");
  EXPECT_STATUS(RunStatus(NodeBuilder("r", "Range"),
                          {Scalar<int32_t>(1), Scalar<int32_t>(5), Scalar<int32_t>(-1)}),
                absl::StatusCode::kInvalidArgument, "start >= limit when delta < 0");
  EXPECT_STATUS(RunStatus(NodeBuilder("r", "Range"),
                          {Vec<int32_t>({1, 2}), Scalar<int32_t>(5), Scalar<int32_t>(1)}),
                absl::StatusCode::kInvalidArgument, "start must be a scalar");
  // NaN fails every comparison: the error says NaN, not a false order claim.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_STATUS(RunStatus(NodeBuilder("r", "Range").Attr("Tidx", DT_FLOAT),
                          {Scalar(0.0f), Scalar(5.0f), Scalar(nan)}),
                absl::StatusCode::kInvalidArgument, "Range's delta is NaN");
  EXPECT_STATUS(RunStatus(NodeBuilder("r", "Range").Attr("Tidx", DT_FLOAT),
                          {Scalar(nan), Scalar(5.0f), Scalar(1.0f)}),
                absl::StatusCode::kInvalidArgument, "Range's start is NaN");
  // Lengths past any tensor are refused before they become an int64.
  EXPECT_STATUS(RunStatus(NodeBuilder("r", "Range").Attr("Tidx", DT_INT64),
                          {Scalar<int64_t>(INT64_MIN), Scalar<int64_t>(INT64_MAX),
                           Scalar<int64_t>(1)}),
                absl::StatusCode::kInvalidArgument, "too many elements");
  EXPECT_STATUS(RunStatus(NodeBuilder("r", "Range").Attr("Tidx", DT_FLOAT),
                          {Scalar(-1e30f), Scalar(1e30f), Scalar(1e-30f)}),
                absl::StatusCode::kInvalidArgument, "too many elements");
}

TEST(OneHotTest, AxesAndOutOfRangeIndices) {
  Tensor indices = MakeTensor<int32_t>({2, 2}, {0, 2, 5, -1});
  auto node = [](int axis) {
    return NodeBuilder("o", "OneHot").Attr("T", DT_FLOAT).Attr("TI", DT_INT32).Attr("axis", axis);
  };
  // Expected values from TensorFlow 2.21's tf.one_hot.
  auto out = RunOk(node(-1), {indices, Scalar<int32_t>(3), Scalar(1.0f), Scalar(0.0f)});
  ExpectTensorEqual(out[0], MakeTensor<float>({2, 2, 3}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
  out = RunOk(node(0), {indices, Scalar<int32_t>(3), Scalar(1.0f), Scalar(0.0f)});
  ExpectTensorEqual(out[0], MakeTensor<float>({3, 2, 2}, {1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0}));
  out = RunOk(node(1), {indices, Scalar<int32_t>(3), Scalar(1.0f), Scalar(0.0f)});
  ExpectTensorEqual(out[0], MakeTensor<float>({2, 3, 2}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
}

TEST(OneHotTest, OtherTypesAndErrors) {
  auto out = RunOk(NodeBuilder("o", "OneHot").Attr("T", DT_STRING),
                   {Vec<int64_t>({1}), Scalar<int32_t>(2), Strings({}, {"on"}), Strings({}, {"off"})});
  ExpectTensorEqual(out[0], Strings({1, 2}, {"off", "on"}));
  out = RunOk(NodeBuilder("o", "OneHot").Attr("T", DT_INT32).Attr("TI", DT_UINT8),
              {MakeTensor<uint8_t>({}, {1}), Scalar<int32_t>(3), Scalar<int32_t>(7), Scalar<int32_t>(-7)});
  ExpectTensorEqual(out[0], Vec<int32_t>({-7, 7, -7}));
  EXPECT_STATUS(RunStatus(NodeBuilder("o", "OneHot").Attr("T", DT_FLOAT),
                          {Vec<int64_t>({1}), Scalar<int32_t>(-2), Scalar(1.0f), Scalar(0.0f)}),
                absl::StatusCode::kInvalidArgument, "depth must be non-negative");
  EXPECT_STATUS(RunStatus(NodeBuilder("o", "OneHot").Attr("T", DT_FLOAT).Attr("axis", 3),
                          {Vec<int64_t>({1}), Scalar<int32_t>(2), Scalar(1.0f), Scalar(0.0f)}),
                absl::StatusCode::kInvalidArgument, "axis 3 must be -1 or in [0, 1]");
  EXPECT_STATUS(RunStatus(NodeBuilder("o", "OneHot").Attr("T", DT_FLOAT),
                          {Vec<int64_t>({1}), Scalar<int32_t>(2), Vec<float>({1}), Scalar(0.0f)}),
                absl::StatusCode::kInvalidArgument, "must be scalars");
}

}  // namespace
}  // namespace weft
