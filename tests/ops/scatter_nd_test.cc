// GatherNd, ScatterNd, TensorScatter{Update,Add,Sub,Min,Max} and
// ScatterNdNonAliasingAdd: values as TensorFlow computes them (slices and
// single elements, repeated indices, int16/int32/int64 indices), the
// errors TensorFlow words the same way, and bad_indices_policy "IGNORE".
// The variable forms are checked against TensorFlow in
// tests/conformance/state_ops_test.py.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "tests/ops/array_test_util.h"

namespace weft {
namespace {

using testing_util::Vec;

Tensor Shaped(Tensor t, std::vector<int64_t> dims) { return t.Reshaped(TensorShape(dims)); }

// [[0, 1], [2, 3], [4, 5]]
Tensor Params() { return Shaped(Vec<float>({0, 1, 2, 3, 4, 5}), {3, 2}); }

absl::StatusOr<std::vector<Tensor>> RunOp(const std::string& op, const std::vector<Tensor>& in,
                                        DataType index_type,
                                        const std::string& policy = "") {
  NodeBuilder b("n", op);
  b.Attr("Tindices", index_type).Attr("bad_indices_policy", policy);
  if (op == "GatherNd") {
    b.Attr("Tparams", in[0].dtype());
  } else {
    b.Attr("T", op == "ScatterNd" ? in[1].dtype() : in[0].dtype());
  }
  KernelRunner r(b.Build());
  return r.Run(in);
}

TEST(GatherNdTest, SlicesAndElements) {
  auto rows = RunOp("GatherNd", {Params(), Shaped(Vec<int32_t>({2, 0, 2}), {3, 1})}, DT_INT32);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ExpectTensorEqual(rows->at(0), Shaped(Vec<float>({4, 5, 0, 1, 4, 5}), {3, 2}));
  auto elems = RunOp("GatherNd", {Params(), Shaped(Vec<int64_t>({1, 1, 2, 0}), {2, 2})}, DT_INT64);
  ASSERT_TRUE(elems.ok()) << elems.status();
  ExpectTensorEqual(elems->at(0), Vec<float>({3, 4}));
  // A batch of index rows keeps its shape; int16 indices.
  auto batch = RunOp("GatherNd", {Params(), Shaped(Vec<int16_t>({0, 1, 2, 0}), {2, 1, 2})},
                   DT_INT16);
  ASSERT_TRUE(batch.ok()) << batch.status();
  ExpectTensorEqual(batch->at(0), Shaped(Vec<float>({1, 4}), {2, 1}));
  // K = 0: every row is the whole tensor.
  auto whole = RunOp("GatherNd", {Params(), Tensor(DT_INT32, TensorShape({2, 0}))}, DT_INT32);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->at(0).shape().DebugString(), "[2,3,2]");
  // Strings move too.
  auto strings = RunOp("GatherNd", {Vec<std::string>({"a", "b", "c"}),
                                  Shaped(Vec<int32_t>({2, 0}), {2, 1})}, DT_INT32);
  ASSERT_TRUE(strings.ok()) << strings.status();
  EXPECT_EQ(strings->at(0).data<std::string>()[0], "c");
}

TEST(GatherNdTest, ErrorsAndIgnore) {
  EXPECT_STATUS(RunOp("GatherNd", {Params(), Shaped(Vec<int32_t>({1, 5}), {1, 2})}, DT_INT32)
                    .status(),
                absl::StatusCode::kInvalidArgument,
                "indices[0] = [1, 5] does not index into param shape [3,2]");
  EXPECT_STATUS(RunOp("GatherNd", {Params(), Shaped(Vec<int32_t>({1, 1, 1}), {1, 3})}, DT_INT32)
                    .status(),
                absl::StatusCode::kInvalidArgument,
                "index innermost dimension length must be <= params rank; saw: 3 vs. 2");
  auto ignored = RunOp("GatherNd", {Params(), Shaped(Vec<int32_t>({3, 1}), {2, 1})}, DT_INT32,
                     "IGNORE");
  ASSERT_TRUE(ignored.ok()) << ignored.status();
  ExpectTensorEqual(ignored->at(0), Shaped(Vec<float>({0, 0, 2, 3}), {2, 2}));
  EXPECT_STATUS(RunOp("GatherNd", {Params(), Shaped(Vec<int32_t>({1}), {1, 1})}, DT_INT32,
                    "SOMETIMES").status(),
                absl::StatusCode::kInvalidArgument, "bad_indices_policy");
}

TEST(ScatterNdTest, RepeatedIndicesAdd) {
  auto out = RunOp("ScatterNd", {Shaped(Vec<int32_t>({1, 1, 3}), {3, 1}), Vec<float>({1, 2, 5}),
                               Vec<int32_t>({4})}, DT_INT32);
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(out->at(0), Vec<float>({0, 3, 0, 5}));
  auto rows = RunOp("ScatterNd", {Shaped(Vec<int64_t>({2}), {1, 1}),
                                Shaped(Vec<int32_t>({7, 8}), {1, 2}), Vec<int64_t>({3, 2})},
                  DT_INT64);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ExpectTensorEqual(rows->at(0), Shaped(Vec<int32_t>({0, 0, 0, 0, 7, 8}), {3, 2}));
  EXPECT_STATUS(RunOp("ScatterNd", {Shaped(Vec<int32_t>({3}), {1, 1}), Vec<float>({1}),
                                  Vec<int32_t>({3})}, DT_INT32).status(),
                absl::StatusCode::kInvalidArgument, "indices[0] = [3] does not index into shape [3]");
  EXPECT_STATUS(RunOp("ScatterNd", {Shaped(Vec<int32_t>({1}), {1, 1}), Vec<float>({1, 2}),
                                  Vec<int32_t>({3})}, DT_INT32).status(),
                absl::StatusCode::kInvalidArgument,
                "Dimensions [0,1) of indices[shape=[1,1]] must match dimensions [0,1) of "
                "updates[shape=[2]]");
}

TEST(TensorScatterTest, EachKind) {
  const Tensor idx = Shaped(Vec<int32_t>({1, 2, 1}), {3, 1});
  const Tensor upd = Shaped(Vec<float>({10, 10, 1, 1, 3, -3}), {3, 2});
  struct Case {
    const char* op;
    std::vector<float> want;
  };
  for (const Case& c : {Case{"TensorScatterUpdate", {0, 1, 3, -3, 1, 1}},
                        Case{"TensorScatterAdd", {0, 1, 15, 10, 5, 6}},
                        Case{"ScatterNdNonAliasingAdd", {0, 1, 15, 10, 5, 6}},
                        Case{"TensorScatterSub", {0, 1, -11, -4, 3, 4}},
                        Case{"TensorScatterMin", {0, 1, 2, -3, 1, 1}},
                        Case{"TensorScatterMax", {0, 1, 10, 10, 4, 5}}}) {
    SCOPED_TRACE(c.op);
    auto out = RunOp(c.op, {Params(), idx, upd}, DT_INT32);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectTensorEqual(out->at(0), Shaped(Vec<float>(c.want), {3, 2}));
  }
  EXPECT_STATUS(RunOp("TensorScatterAdd", {Params(), Shaped(Vec<int32_t>({1}), {1, 1}),
                                         Shaped(Vec<float>({1, 2, 3}), {1, 3})}, DT_INT32)
                    .status(),
                absl::StatusCode::kInvalidArgument,
                "The inner 1 dimensions of output.shape=[3,2] must match the inner 1 "
                "dimensions of updates.shape=[1,3]");
  // IGNORE skips the row outside and applies the others.
  auto ignored = RunOp("TensorScatterAdd", {Params(), Shaped(Vec<int32_t>({3, 1}), {2, 1}),
                                          Shaped(Vec<float>({1, 1, 2, 2}), {2, 2})},
                     DT_INT32, "IGNORE");
  ASSERT_TRUE(ignored.ok()) << ignored.status();
  ExpectTensorEqual(ignored->at(0), Shaped(Vec<float>({0, 1, 4, 5, 4, 5}), {3, 2}));
  // The input is not changed.
  const Tensor in = Params();
  ASSERT_TRUE(RunOp("TensorScatterUpdate", {in, idx, upd}, DT_INT32).ok());
  ExpectTensorEqual(in, Params());
}

}  // namespace
}  // namespace weft
