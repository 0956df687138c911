// GatherV2, Select, SelectV2, Unique, UniqueWithCounts.
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

Tensor Iota(const std::vector<int64_t>& dims) {
  Tensor t(DT_INT32, TensorShape(dims));
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(i);
  return t;
}

NodeBuilder Gather(DataType t, DataType ti, int batch_dims = 0) {
  return NodeBuilder("g", "GatherV2")
      .Attr("Tparams", t)
      .Attr("Tindices", ti)
      .Attr("Taxis", DT_INT32)
      .Attr("batch_dims", batch_dims);
}

TEST(GatherV2Test, AxesAndBatchDims) {
  // Expected values from TensorFlow 2.21's tf.gather.
  Tensor p = Iota({2, 3, 4});
  auto out = RunOk(Gather(DT_INT32, DT_INT32), {p, Vec<int32_t>({2, 0}), Scalar<int32_t>(2)});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2, 3, 2}, {2, 0, 6, 4, 10, 8, 14, 12, 18, 16, 22, 20}));
  out = RunOk(Gather(DT_INT32, DT_INT64, 1),
              {p, MakeTensor<int64_t>({2, 2}, {1, 0, 2, 2}), Scalar<int32_t>(1)});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2, 2, 4}, {4, 5, 6, 7, 0, 1, 2, 3, 20, 21, 22, 23,
                                                            20, 21, 22, 23}));
  out = RunOk(Gather(DT_INT32, DT_INT32, -1),
              {p, MakeTensor<int32_t>({2, 1}, {1, 0}), Scalar<int32_t>(-1)});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2, 3, 1}, {1, 5, 9, 12, 16, 20}));
  // Axis 0 with matrix indices, strings, and a scalar index.
  Tensor s = Strings({3}, {"a", "b", "c"});
  out = RunOk(Gather(DT_STRING, DT_INT32), {s, MakeTensor<int32_t>({2, 2}, {2, 1, 0, 2}), Scalar<int32_t>(0)});
  ExpectTensorEqual(out[0], Strings({2, 2}, {"c", "b", "a", "c"}));
  out = RunOk(Gather(DT_INT32, DT_INT32), {p, Scalar<int32_t>(1), Scalar<int32_t>(0)});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({3, 4}, {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}));
  out = RunOk(Gather(DT_FLOAT, DT_INT32), {MakeTensor<float>({3}, {1, 2, 3}), Vec<int32_t>({}), Scalar<int32_t>(0)});
  EXPECT_EQ(out[0].shape().DebugString(), "[0]");
}

TEST(GatherV2Test, Errors) {
  Tensor p = Iota({2, 3});
  EXPECT_STATUS(RunStatus(Gather(DT_INT32, DT_INT32), {p, Vec<int32_t>({0, 3}), Scalar<int32_t>(1)}),
                absl::StatusCode::kInvalidArgument, "indices[1] = 3 is not in [0, 3)");
  EXPECT_STATUS(RunStatus(Gather(DT_INT32, DT_INT32), {p, Vec<int32_t>({-1}), Scalar<int32_t>(0)}),
                absl::StatusCode::kInvalidArgument, "indices[0] = -1 is not in [0, 2)");
  EXPECT_STATUS(RunStatus(Gather(DT_INT32, DT_INT32), {p, Vec<int32_t>({0}), Scalar<int32_t>(2)}),
                absl::StatusCode::kInvalidArgument, "out of range");
  EXPECT_STATUS(RunStatus(Gather(DT_INT32, DT_INT32, 1), {p, Vec<int32_t>({0, 1}), Scalar<int32_t>(0)}),
                absl::StatusCode::kInvalidArgument, "must be less than or equal to axis");
  EXPECT_STATUS(RunStatus(Gather(DT_INT32, DT_INT32), {Scalar<int32_t>(1), Vec<int32_t>({0}), Scalar<int32_t>(0)}),
                absl::StatusCode::kInvalidArgument, "at least 1 dimensional");
}

TEST(SelectTest, ScalarVectorAndElementwiseConditions) {
  Tensor t = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  Tensor e = MakeTensor<float>({2, 2}, {5, 6, 7, 8});
  auto out = RunOk(NodeBuilder("s", "Select").Attr("T", DT_FLOAT), {Scalar(false), t, e});
  EXPECT_TRUE(out[0].SharesBufferWith(e));
  out = RunOk(NodeBuilder("s", "Select").Attr("T", DT_FLOAT), {MakeTensor<bool>({2}, {false, true}), t, e});
  ExpectTensorEqual(out[0], MakeTensor<float>({2, 2}, {5, 6, 3, 4}));
  out = RunOk(NodeBuilder("s", "Select").Attr("T", DT_FLOAT),
              {MakeTensor<bool>({2, 2}, {true, false, false, true}), t, e});
  ExpectTensorEqual(out[0], MakeTensor<float>({2, 2}, {1, 6, 7, 4}));
  out = RunOk(NodeBuilder("s", "Select").Attr("T", DT_STRING),
              {MakeTensor<bool>({2}, {true, false}), Strings({2}, {"a", "b"}), Strings({2}, {"c", "d"})});
  ExpectTensorEqual(out[0], Strings({2}, {"a", "d"}));
  EXPECT_STATUS(RunStatus(NodeBuilder("s", "Select").Attr("T", DT_FLOAT),
                          {MakeTensor<bool>({3}, {}), t, e}),
                absl::StatusCode::kInvalidArgument, "'condition' must be a scalar, a vector");
  EXPECT_STATUS(RunStatus(NodeBuilder("s", "Select").Attr("T", DT_FLOAT),
                          {Scalar(true), t, MakeTensor<float>({2}, {})}),
                absl::StatusCode::kInvalidArgument, "'then' and 'else' must have the same size");
}

TEST(SelectV2Test, Broadcasts) {
  // Expected values from TensorFlow 2.21.
  auto out = RunOk(NodeBuilder("s", "SelectV2").Attr("T", DT_INT32),
                   {MakeTensor<bool>({2, 1}, {true, false}), Vec<int32_t>({1, 2, 3}),
                    MakeTensor<int32_t>({2, 1}, {10, 20})});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2, 3}, {1, 2, 3, 20, 20, 20}));
  Tensor t = Vec<int64_t>({1, 2});
  out = RunOk(NodeBuilder("s", "SelectV2").Attr("T", DT_INT64), {Scalar(true), t, Vec<int64_t>({3, 4})});
  EXPECT_TRUE(out[0].SharesBufferWith(t));
  out = RunOk(NodeBuilder("s", "SelectV2").Attr("T", DT_BOOL),
              {MakeTensor<bool>({0, 2}, {}), Scalar(true), Scalar(false)});
  EXPECT_EQ(out[0].shape().DebugString(), "[0,2]");
  EXPECT_STATUS(RunStatus(NodeBuilder("s", "SelectV2").Attr("T", DT_INT64),
                          {MakeTensor<bool>({3}, {}), t, t}),
                absl::StatusCode::kInvalidArgument, "not broadcastable");
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

NodeBuilder UniqueNode(const char* op, DataType t, DataType out_idx) {
  return NodeBuilder("u", op).Attr("T", t).Attr("out_idx", out_idx);
}

TEST(UniqueTest, FirstAppearanceOrderIndicesAndCounts) {
  auto out = RunOk(UniqueNode("UniqueWithCounts", DT_INT32, DT_INT64),
                   {Vec<int32_t>({7, 3, 7, 7, 1, 3})});
  ExpectTensorEqual(out[0], Vec<int32_t>({7, 3, 1}));
  ExpectTensorEqual(out[1], Vec<int64_t>({0, 1, 0, 0, 2, 1}));
  ExpectTensorEqual(out[2], Vec<int64_t>({3, 2, 1}));
  // Floats compare with ==: 0.0 and -0.0 are one value.
  auto floats = RunOk(UniqueNode("Unique", DT_FLOAT, DT_INT32), {Vec<float>({0.0f, -0.0f, 2.5f})});
  EXPECT_EQ(floats[0].NumElements(), 2);
  ExpectTensorEqual(floats[1], Vec<int32_t>({0, 0, 1}));
  auto strings = RunOk(UniqueNode("Unique", DT_STRING, DT_INT32),
                       {Vec<std::string>({"b", "a", "b"})});
  EXPECT_EQ(strings[0].data<std::string>()[0], "b");
  EXPECT_EQ(strings[0].data<std::string>()[1], "a");
  ExpectTensorEqual(strings[1], Vec<int32_t>({0, 1, 0}));
  EXPECT_STATUS(RunStatus(UniqueNode("Unique", DT_INT32, DT_INT32),
                          {Tensor::Scalar<int32_t>(1)}),
                absl::StatusCode::kInvalidArgument, "unique expects a 1D vector");
}

}  // namespace
}  // namespace weft
