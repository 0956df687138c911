// Segment reductions: the sorted V2 forms (which TensorFlow runs only
// under XLA, so the conformance test cannot compare them) against the V1
// forms, and the error paths of every family: unsorted or negative ids,
// ids past num_segments, indices outside data, mismatched sizes, with
// TensorFlow's wording and the offending value named.
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::Node;
using testing_util::RunOk;
using testing_util::RunStatus;
using testing_util::Scalar;

const Tensor kData = MakeTensor<float>({4, 2}, {1, 2, 3, -4, 5, 6, 7, 8});

void ExpectError(const absl::Status& s, const std::string& text) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find(text), std::string::npos) << s;
}

NodeBuilder Sorted(const std::string& op) {
  return Node(op, DT_FLOAT).Attr("Tindices", DT_INT32);
}
NodeBuilder Sparse(const std::string& op) {
  return Node(op, DT_FLOAT).Attr("Tidx", DT_INT32).Attr("Tsegmentids", DT_INT32);
}

TEST(SegmentTest, SortedReducesRunsAndFillsGaps) {
  const Tensor ids = MakeTensor<int32_t>({4}, {0, 0, 2, 2});
  ExpectTensorEqual(RunOk(Sorted("SegmentSum"), {kData, ids}),
                    MakeTensor<float>({3, 2}, {4, -2, 0, 0, 12, 14}));
  ExpectTensorEqual(RunOk(Sorted("SegmentMean"), {kData, ids}),
                    MakeTensor<float>({3, 2}, {2, -1, 0, 0, 6, 7}));
  ExpectTensorEqual(RunOk(Sorted("SegmentProd"), {kData, ids}),
                    MakeTensor<float>({3, 2}, {3, -8, 1, 1, 35, 48}));
  ExpectTensorEqual(RunOk(Sorted("SegmentMax"), {kData, ids}),
                    MakeTensor<float>({3, 2}, {3, 2, 0, 0, 7, 8}));
}

TEST(SegmentTest, V2FormsTakeNumSegments) {
  const Tensor ids = MakeTensor<int32_t>({4}, {0, 0, 2, 2});
  for (const char* op : {"SegmentSum", "SegmentProd", "SegmentMin", "SegmentMax"}) {
    SCOPED_TRACE(op);
    const Tensor v1 = RunOk(Sorted(op), {kData, ids});
    const Tensor v2 = RunOk(Sorted(std::string(op) + "V2"), {kData, ids, Scalar<int32_t>(5)});
    ASSERT_EQ(v2.shape(), TensorShape({5, 2}));
    for (int64_t i = 0; i < v1.NumElements(); ++i) {
      EXPECT_EQ(v2.data<float>()[i], v1.data<float>()[i]) << i;
    }
    EXPECT_EQ(v2.data<float>()[6], std::string(op) == "SegmentProd" ? 1.0f : 0.0f);
  }
  ExpectError(RunStatus(Sorted("SegmentSumV2"), {kData, ids, Scalar<int32_t>(2)}),
              "Segment id 2 out of range [0, 2)");
}

TEST(SegmentTest, SortedErrorsAsTensorFlow) {
  ExpectError(RunStatus(Sorted("SegmentSum"), {kData, MakeTensor<int32_t>({4}, {1, 0, 2, 2})}),
              "segment ids are not increasing");
  ExpectError(RunStatus(Sorted("SegmentSum"), {kData, MakeTensor<int32_t>({4}, {-1, 0, 2, 2})}),
              "Segment id -1 out of range [0, 3), possibly because 'segment_ids' input is "
              "not sorted.");
  ExpectError(RunStatus(Sorted("SegmentMax"), {kData, MakeTensor<int32_t>({4}, {-3, -2, -1, -1})}),
              "segment ids must be >= 0");
  ExpectError(RunStatus(Sorted("SegmentMean"), {kData, MakeTensor<int32_t>({3}, {0, 1, 2})}),
              "segment_ids should be the same size as dimension 0 of input.");
}

TEST(SegmentTest, UnsortedEmptySegmentsAndErrors) {
  const Tensor ids = MakeTensor<int64_t>({4}, {2, -1, 2, 0});
  auto node = [](const char* op) {
    return Node(op, DT_FLOAT).Attr("Tindices", DT_INT64).Attr("Tnumsegments", DT_INT64);
  };
  const float lowest = std::numeric_limits<float>::lowest();
  ExpectTensorEqual(RunOk(node("UnsortedSegmentMax"), {kData, ids, Scalar<int64_t>(3)}),
                    MakeTensor<float>({3, 2}, {7, 8, lowest, lowest, 5, 6}));
  ExpectTensorEqual(RunOk(node("UnsortedSegmentProd"), {kData, ids, Scalar<int64_t>(3)}),
                    MakeTensor<float>({3, 2}, {7, 8, 1, 1, 5, 12}));
  ExpectError(RunStatus(node("UnsortedSegmentMin"),
                        {kData, MakeTensor<int64_t>({4}, {0, 1, 7, 0}), Scalar<int64_t>(3)}),
              "segment_ids[2] = 7 is out of range [0, 3)");
}

TEST(SparseSegmentTest, ReducesGatheredRows) {
  const Tensor idx = MakeTensor<int32_t>({4}, {3, 0, 3, 1});
  const Tensor seg = MakeTensor<int32_t>({4}, {0, 0, 0, 2});
  ExpectTensorEqual(RunOk(Sparse("SparseSegmentSum"), {kData, idx, seg}),
                    MakeTensor<float>({3, 2}, {15, 18, 0, 0, 3, -4}));
  ExpectTensorEqual(RunOk(Sparse("SparseSegmentMean"), {kData, idx, seg}),
                    MakeTensor<float>({3, 2}, {5, 6, 0, 0, 3, -4}));
  ExpectTensorEqual(RunOk(Sparse("SparseSegmentSumWithNumSegments")
                              .Attr("Tnumsegments", DT_INT32),
                          {kData, idx, seg, Scalar<int32_t>(4)}),
                    MakeTensor<float>({4, 2}, {15, 18, 0, 0, 3, -4, 0, 0}));
}

TEST(SparseSegmentTest, ErrorsAsTensorFlow) {
  const Tensor seg = MakeTensor<int32_t>({2}, {0, 0});
  ExpectError(RunStatus(Sparse("SparseSegmentSum"),
                        {kData, MakeTensor<int32_t>({2}, {0, 5}), seg}),
              "Bad: indices[1] == 5 out of range [0, 4)");
  ExpectError(RunStatus(Sparse("SparseSegmentMean"),
                        {kData, MakeTensor<int32_t>({2}, {0, 1}), MakeTensor<int32_t>({2}, {1, 0})}),
              "segment ids are not increasing");
  ExpectError(RunStatus(Sparse("SparseSegmentSqrtN"),
                        {kData, MakeTensor<int32_t>({2}, {0, 1}), MakeTensor<int32_t>({1}, {0})}),
              "segment_ids and indices should have same size.");
  ExpectError(RunStatus(Sparse("SparseSegmentSumWithNumSegments").Attr("Tnumsegments", DT_INT32),
                        {kData, MakeTensor<int32_t>({2}, {0, 1}),
                         MakeTensor<int32_t>({2}, {0, 4}), Scalar<int32_t>(3)}),
              "segment ids must be < num_segments");
}

TEST(SparseSegmentTest, GradScattersWeightedRows) {
  const Tensor grad = MakeTensor<float>({2, 2}, {4, 8, 1, 2});
  const Tensor idx = MakeTensor<int32_t>({3}, {2, 0, 2});
  const Tensor seg = MakeTensor<int32_t>({3}, {0, 0, 1});
  // Mean: segment 0 has two rows (weight 1/2), segment 1 one.
  ExpectTensorEqual(RunOk(Sparse("SparseSegmentMeanGrad"), {grad, idx, seg, Scalar<int32_t>(3)}),
                    MakeTensor<float>({3, 2}, {2, 4, 0, 0, 3, 6}));
  std::vector<Tensor> v2 = testing_util::RunAll(Sparse("SparseSegmentMeanGradV2"),
                                                {grad, idx, seg, Scalar<int32_t>(3)});
  ASSERT_EQ(v2.size(), 2u);
  ExpectTensorEqual(v2[0], MakeTensor<float>({2, 2}, {2, 4, 3, 6}));
  ExpectTensorEqual(v2[1], MakeTensor<int32_t>({2}, {0, 2}));
  ExpectError(RunStatus(Sparse("SparseSegmentSumGrad"),
                        {grad, MakeTensor<int32_t>({3}, {2, 7, 2}), seg, Scalar<int32_t>(3)}),
              "Index 7 out of range [0, 3).");
  ExpectError(RunStatus(Sparse("SparseSegmentSumGrad"),
                        {grad, idx, MakeTensor<int32_t>({3}, {0, 0, 9}), Scalar<int32_t>(3)}),
              "Segment id 9 out of range [0, 2)");
}

}  // namespace
}  // namespace weft
