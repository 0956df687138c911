// Slice and StridedSlice. StridedSlice is checked against 120 random specs
// (masks included) whose results TensorFlow 2.21 computed
// (array_strided_slice_cases.inc).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

TEST(SliceTest, BeginAndSize) {
  Tensor x = Iota({3, 4});
  auto out = RunOk(NodeBuilder("s", "Slice").Attr("T", DT_INT32).Attr("Index", DT_INT32),
                   {x, Vec<int32_t>({1, 1}), Vec<int32_t>({2, -1})});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({2, 3}, {5, 6, 7, 9, 10, 11}));
  out = RunOk(NodeBuilder("s", "Slice").Attr("T", DT_INT32).Attr("Index", DT_INT64),
              {x, Vec<int64_t>({0, 0}), Vec<int64_t>({3, 4})});
  EXPECT_TRUE(out[0].SharesBufferWith(x));  // everything
  out = RunOk(NodeBuilder("s", "Slice").Attr("T", DT_INT32).Attr("Index", DT_INT32),
              {x, Vec<int32_t>({2, 0}), Vec<int32_t>({0, 4})});
  EXPECT_EQ(out[0].shape().DebugString(), "[0,4]");
  out = RunOk(NodeBuilder("s", "Slice").Attr("T", DT_STRING).Attr("Index", DT_INT32),
              {Strings({3}, {"a", "b", "c"}), Vec<int32_t>({1}), Vec<int32_t>({2})});
  ExpectTensorEqual(out[0], Strings({2}, {"b", "c"}));
  out = RunOk(NodeBuilder("s", "Slice").Attr("T", DT_FLOAT).Attr("Index", DT_INT32),
              {Scalar(1.0f), Vec<int32_t>({}), Vec<int32_t>({})});
  ExpectTensorEqual(out[0], Scalar(1.0f));
}

TEST(SliceTest, AlignedLeadingRowsAlias) {
  Tensor x(DT_FLOAT, TensorShape({8, 16}));  // rows of 64 bytes
  auto out = RunOk(NodeBuilder("s", "Slice").Attr("T", DT_FLOAT).Attr("Index", DT_INT32),
                   {x, Vec<int32_t>({2, 0}), Vec<int32_t>({3, -1})});
  EXPECT_EQ(out[0].shape().DebugString(), "[3,16]");
  EXPECT_TRUE(out[0].SharesBufferWith(x));
}

TEST(SliceTest, Errors) {
  Tensor x = Iota({3, 4});
  auto node = NodeBuilder("s", "Slice").Attr("T", DT_INT32).Attr("Index", DT_INT32);
  EXPECT_STATUS(RunStatus(node, {x, Vec<int32_t>({4, 0}), Vec<int32_t>({1, 1})}),
                absl::StatusCode::kInvalidArgument, "Expected begin[0] in [0, 3], but got 4");
  EXPECT_STATUS(RunStatus(node, {x, Vec<int32_t>({1, 0}), Vec<int32_t>({3, 1})}),
                absl::StatusCode::kInvalidArgument, "Expected size[0] in [0, 2], but got 3");
  EXPECT_STATUS(RunStatus(node, {x, Vec<int32_t>({1}), Vec<int32_t>({1, 1})}),
                absl::StatusCode::kInvalidArgument, "1-D tensors of size 2");
}

struct Case {
  std::vector<int32_t> begin, end, strides;
  std::vector<int64_t> masks;  // begin, end, ellipsis, new_axis, shrink
  std::vector<int64_t> shape;
  bool error;
  std::vector<int32_t> values;
};

const Case kCases[] = {
#include "tests/ops/array_strided_slice_cases.inc"
};

TEST(StridedSliceTest, MatchesTensorFlowOnRandomSpecs) {
  const Tensor x = Iota({3, 4, 5});
  int errors = 0;
  for (const Case& c : kCases) {
    SCOPED_TRACE(absl::StrCat("begin [", absl::StrJoin(c.begin, ","), "] end [",
                              absl::StrJoin(c.end, ","), "] strides [",
                              absl::StrJoin(c.strides, ","), "] masks [",
                              absl::StrJoin(c.masks, ","), "]"));
    auto node = NodeBuilder("ss", "StridedSlice")
                    .Attr("T", DT_INT32)
                    .Attr("Index", DT_INT32)
                    .Attr("begin_mask", c.masks[0])
                    .Attr("end_mask", c.masks[1])
                    .Attr("ellipsis_mask", c.masks[2])
                    .Attr("new_axis_mask", c.masks[3])
                    .Attr("shrink_axis_mask", c.masks[4]);
    KernelRunner runner(node.Build());
    auto out = runner.Run({x, Vec(c.begin), Vec(c.end), Vec(c.strides)});
    if (c.error) {
      ++errors;
      EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
      continue;
    }
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectTensorEqual(out->at(0), MakeTensor<int32_t>(c.shape, c.values));
  }
  EXPECT_GT(errors, 5);  // the table covers error cases too
}

TEST(StridedSliceTest, CommonIdioms) {
  Tensor x = Iota({3, 4});
  auto ss = [](int64_t begin_mask, int64_t end_mask, int64_t shrink, int64_t new_axis = 0,
               int64_t ellipsis = 0) {
    return NodeBuilder("ss", "StridedSlice")
        .Attr("T", DT_INT32)
        .Attr("Index", DT_INT32)
        .Attr("begin_mask", begin_mask)
        .Attr("end_mask", end_mask)
        .Attr("shrink_axis_mask", shrink)
        .Attr("new_axis_mask", new_axis)
        .Attr("ellipsis_mask", ellipsis);
  };
  // x[-1]: the last row.
  auto out = RunOk(ss(0, 0, 1), {x, Vec<int32_t>({-1}), Vec<int32_t>({0}), Vec<int32_t>({1})});
  ExpectTensorEqual(out[0], Vec<int32_t>({8, 9, 10, 11}));
  // x[:, 1]: a column.
  out = RunOk(ss(1, 1, 2), {x, Vec<int32_t>({0, 1}), Vec<int32_t>({0, 2}), Vec<int32_t>({1, 1})});
  ExpectTensorEqual(out[0], Vec<int32_t>({1, 5, 9}));
  // x[::-1, ::2]
  out = RunOk(ss(3, 3, 0), {x, Vec<int32_t>({0, 0}), Vec<int32_t>({0, 0}), Vec<int32_t>({-1, 2})});
  ExpectTensorEqual(out[0], MakeTensor<int32_t>({3, 2}, {8, 10, 4, 6, 0, 2}));
  // x[..., tf.newaxis]
  out = RunOk(ss(0, 0, 0, 2, 1), {x, Vec<int32_t>({0, 0}), Vec<int32_t>({0, 0}), Vec<int32_t>({1, 1})});
  EXPECT_EQ(out[0].shape().DebugString(), "[3,4,1]");
  EXPECT_TRUE(out[0].SharesBufferWith(x));
  // x[0:1]: leading rows alias.
  out = RunOk(ss(0, 0, 0), {x, Vec<int32_t>({0}), Vec<int32_t>({1}), Vec<int32_t>({1})});
  EXPECT_TRUE(out[0].SharesBufferWith(x));
  // Scalar input: only new axes are allowed.
  out = RunOk(ss(0, 0, 0, 1), {Tensor::Scalar<int32_t>(4), Vec<int32_t>({0}), Vec<int32_t>({0}),
                               Vec<int32_t>({1})});
  ExpectTensorEqual(out[0], Vec<int32_t>({4}));
  EXPECT_STATUS(RunStatus(ss(0, 0, 0), {Tensor::Scalar<int32_t>(4), Vec<int32_t>({0}),
                                        Vec<int32_t>({1}), Vec<int32_t>({1})}),
                absl::StatusCode::kInvalidArgument, "Attempting to slice scalar input");
}

TEST(StridedSliceTest, Errors) {
  Tensor x = Iota({3, 4});
  auto node = NodeBuilder("ss", "StridedSlice").Attr("T", DT_INT32).Attr("Index", DT_INT32);
  EXPECT_STATUS(RunStatus(node, {x, Vec<int32_t>({0}), Vec<int32_t>({1}), Vec<int32_t>({0})}),
                absl::StatusCode::kInvalidArgument, "strides[0] must be non-zero");
  EXPECT_STATUS(RunStatus(node, {x, Vec<int32_t>({0}), Vec<int32_t>({1, 2}), Vec<int32_t>({1})}),
                absl::StatusCode::kInvalidArgument, "1D equal size");
  EXPECT_STATUS(RunStatus(NodeBuilder("ss", "StridedSlice")
                              .Attr("T", DT_INT32)
                              .Attr("Index", DT_INT32)
                              .Attr("shrink_axis_mask", 1),
                          {x, Vec<int32_t>({3}), Vec<int32_t>({4}), Vec<int32_t>({1})}),
                absl::StatusCode::kInvalidArgument, "slice index 3 of dimension 0 out of bounds");
  EXPECT_STATUS(RunStatus(NodeBuilder("ss", "StridedSlice")
                              .Attr("T", DT_INT32)
                              .Attr("Index", DT_INT32)
                              .Attr("ellipsis_mask", 3),
                          {x, Vec<int32_t>({0, 0}), Vec<int32_t>({1, 1}), Vec<int32_t>({1, 1})}),
                absl::StatusCode::kInvalidArgument, "Multiple ellipses");
  EXPECT_STATUS(RunStatus(node, {x, Vec<int32_t>({0, 0, 0}), Vec<int32_t>({1, 1, 1}),
                                 Vec<int32_t>({1, 1, 1})}),
                absl::StatusCode::kInvalidArgument, "Index out of range using input dim 2");
}

}  // namespace
}  // namespace weft
