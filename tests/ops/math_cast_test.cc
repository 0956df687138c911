// Cast between every supported pair of types, and AddN.
#include <cmath>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::Random;
using testing_util::RunOk;
using testing_util::RunStatus;
using testing_util::Scalar;

NodeBuilder CastNode(DataType src, DataType dst, bool truncate = false) {
  return NodeBuilder("cast", "Cast")
      .Attr("SrcT", src)
      .Attr("DstT", dst)
      .Attr("Truncate", truncate);
}

TEST(CastTest, FloatToIntTruncatesTowardZero) {
  const Tensor x = MakeTensor<float>({4}, {1.7f, -1.7f, 0.2f, -0.0f});
  ExpectTensorEqual(RunOk(CastNode(DT_FLOAT, DT_INT32), {x}),
                    MakeTensor<int32_t>({4}, {1, -1, 0, 0}));
  ExpectTensorEqual(RunOk(CastNode(DT_FLOAT, DT_INT64), {x}),
                    MakeTensor<int64_t>({4}, {1, -1, 0, 0}));
}

TEST(CastTest, FloatToIntSaturatesAndNanIsZero) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = MakeTensor<float>(
      {7}, {nan, inf, -inf, 1e30f, -1e30f, 2147483648.0f, -2147483648.0f});
  ExpectTensorEqual(
      RunOk(CastNode(DT_FLOAT, DT_INT32), {x}),
      MakeTensor<int32_t>({7}, {0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN,
                                INT32_MAX, INT32_MIN}));
  ExpectTensorEqual(RunOk(CastNode(DT_FLOAT, DT_UINT8),
                          {MakeTensor<float>({5}, {nan, -1.0f, -0.5f, 255.9f, 256.0f})}),
                    MakeTensor<uint8_t>({5}, {0, 0, 0, 255, 255}));
  ExpectTensorEqual(
      RunOk(CastNode(DT_DOUBLE, DT_INT64),
            {MakeTensor<double>({3}, {9.3e18, -9.3e18, -9223372036854775808.0})}),
      MakeTensor<int64_t>({3}, {INT64_MAX, INT64_MIN, INT64_MIN}));
  ExpectTensorEqual(RunOk(CastNode(DT_DOUBLE, DT_UINT64),
                          {MakeTensor<double>({2}, {1.9e19, 1.8e19})}),
                    MakeTensor<uint64_t>({2}, {UINT64_MAX, 18000000000000000000u}));
}

TEST(CastTest, BoolConversions) {
  ExpectTensorEqual(
      RunOk(CastNode(DT_FLOAT, DT_BOOL), {MakeTensor<float>({3}, {0, -0.5f, 2})}),
      MakeTensor<bool>({3}, {false, true, true}));
  ExpectTensorEqual(RunOk(CastNode(DT_BOOL, DT_FLOAT),
                          {MakeTensor<bool>({2}, {true, false})}),
                    MakeTensor<float>({2}, {1, 0}));
  ExpectTensorEqual(RunOk(CastNode(DT_INT64, DT_BOOL),
                          {MakeTensor<int64_t>({2}, {0, 7})}),
                    MakeTensor<bool>({2}, {false, true}));
}

TEST(CastTest, IntegerWidths) {
  ExpectTensorEqual(RunOk(CastNode(DT_INT32, DT_UINT8),
                          {MakeTensor<int32_t>({3}, {1, 255, 256})}),
                    MakeTensor<uint8_t>({3}, {1, 255, 0}));
  ExpectTensorEqual(RunOk(CastNode(DT_INT64, DT_INT32),
                          {MakeTensor<int64_t>({2}, {-5, int64_t{1} << 33})}),
                    MakeTensor<int32_t>({2}, {-5, 0}));
  ExpectTensorEqual(RunOk(CastNode(DT_INT32, DT_DOUBLE),
                          {MakeTensor<int32_t>({2}, {-5, 1 << 30})}),
                    MakeTensor<double>({2}, {-5, 1 << 30}));
}

TEST(CastTest, HalfAndBfloat16RoundTrip) {
  const Tensor x = MakeTensor<float>({4}, {1.0f, -2.5f, 0.099975586f, 65504});
  const Tensor h = RunOk(CastNode(DT_FLOAT, DT_HALF), {x});
  EXPECT_EQ(h.dtype(), DT_HALF);
  ExpectTensorEqual(RunOk(CastNode(DT_HALF, DT_FLOAT), {h}), x);
  const Tensor b = RunOk(CastNode(DT_FLOAT, DT_BFLOAT16), {x});
  ExpectTensorNear(RunOk(CastNode(DT_BFLOAT16, DT_FLOAT), {b}), x, 4e-3);
  // Half to bfloat16 and back through int.
  ExpectTensorEqual(
      RunOk(CastNode(DT_HALF, DT_INT32), {h}),
      MakeTensor<int32_t>({4}, {1, -2, 0, 65504}));
}

TEST(CastTest, Bfloat16TruncateDropsLowBits) {
  // TensorFlow 2.21: cast(1.00390625 + 2^-9, bfloat16) = 1.0078125 (rounded)
  // and 1.0 with Truncate=True.
  const Tensor x = Scalar<float>(1.00390625f + 1.0f / 512);
  const Tensor rounded = RunOk(CastNode(DT_FLOAT, DT_BFLOAT16), {x});
  const Tensor truncated = RunOk(CastNode(DT_FLOAT, DT_BFLOAT16, true), {x});
  ExpectTensorEqual(RunOk(CastNode(DT_BFLOAT16, DT_FLOAT), {rounded}),
                    Scalar<float>(1.0078125f));
  ExpectTensorEqual(RunOk(CastNode(DT_BFLOAT16, DT_FLOAT), {truncated}),
                    Scalar<float>(1.0f));
  // NaN stays NaN when truncated.
  const Tensor nan = RunOk(CastNode(DT_FLOAT, DT_BFLOAT16, true),
                           {Scalar<float>(std::numeric_limits<float>::quiet_NaN())});
  EXPECT_TRUE(std::isnan(
      RunOk(CastNode(DT_BFLOAT16, DT_FLOAT), {nan}).scalar<float>()));
}

TEST(CastTest, SameTypeSharesTheBuffer) {
  const Tensor x = Random<float>({3, 2}, 0, 1);
  const Tensor y = RunOk(CastNode(DT_FLOAT, DT_FLOAT), {x});
  EXPECT_TRUE(y.SharesBufferWith(x));
}

TEST(CastTest, EveryPairRoundTripsSmallIntegers) {
  const DataTypeVector types = {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64,
                                DT_UINT8, DT_INT8,   DT_INT16, DT_UINT16,
                                DT_UINT32, DT_UINT64, DT_HALF, DT_BFLOAT16};
  const Tensor x = MakeTensor<int32_t>({4}, {0, 1, 7, 100});
  for (DataType a : types) {
    for (DataType b : types) {
      SCOPED_TRACE(DataTypeString(a) + " -> " + DataTypeString(b));
      const Tensor xa = RunOk(CastNode(DT_INT32, a), {x});
      const Tensor xb = RunOk(CastNode(a, b), {xa});
      ExpectTensorEqual(RunOk(CastNode(b, DT_INT32), {xb}), x);
    }
  }
}

TEST(CastTest, LargeTensor) {
  const Tensor x = Random<double>({400000}, -1000, 1000);
  const Tensor y = RunOk(CastNode(DT_DOUBLE, DT_INT64), {x});
  for (int64_t i = 0; i < x.NumElements(); i += 997) {
    ASSERT_EQ(y.data<int64_t>()[i], static_cast<int64_t>(x.data<double>()[i]));
  }
}

TEST(CastTest, UnsupportedTypeIsAnError) {
  const absl::Status s =
      RunStatus(CastNode(DT_FLOAT, DT_STRING), {Scalar<float>(1)});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Cast"), std::string::npos) << s;
}

NodeBuilder AddN(DataType dt, int n) {
  return NodeBuilder("sum", "AddN").Attr("T", dt).Attr("N", n);
}

template <typename T>
class AddNTest : public ::testing::Test {};
using AddNTypes = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(AddNTest, AddNTypes);

TYPED_TEST(AddNTest, SumsAnyNumberOfInputs) {
  using T = TypeParam;
  const DataType dt = DataTypeToEnum<T>::value;
  for (int n : {1, 2, 3, 9}) {
    SCOPED_TRACE(n);
    std::vector<Tensor> inputs;
    Tensor expected(dt, TensorShape({3, 5}));
    for (int64_t i = 0; i < 15; ++i) expected.data<T>()[i] = 0;
    for (int k = 0; k < n; ++k) {
      inputs.push_back(Random<T>({3, 5}, -100, 100, k + 1));
      for (int64_t i = 0; i < 15; ++i) {
        expected.data<T>()[i] += inputs.back().data<T>()[i];
      }
    }
    ExpectTensorNear(RunOk(AddN(dt, n), inputs), expected, 1e-6);
  }
}

TEST(AddNTest, LargeInputsUseThreads) {
  std::vector<Tensor> inputs;
  for (int k = 0; k < 4; ++k) inputs.push_back(Random<float>({300, 1000}, -1, 1, k));
  const Tensor sum = RunOk(AddN(DT_FLOAT, 4), inputs);
  for (int64_t i = 0; i < sum.NumElements(); i += 101) {
    float want = 0;
    for (int k = 0; k < 4; ++k) want += inputs[k].data<float>()[i];
    ASSERT_NEAR(sum.data<float>()[i], want, 1e-5);
  }
}

TEST(AddNTest, ShapesMustMatch) {
  const absl::Status s =
      RunStatus(AddN(DT_FLOAT, 2),
                {Random<float>({2}, 0, 1), Random<float>({3}, 0, 1)});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("Input 0: [2] != input 1: [3]"), std::string::npos)
      << s;
}

}  // namespace
}  // namespace weft
