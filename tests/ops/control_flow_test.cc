// NoOp, Switch, Merge, Enter/Exit/NextIteration/LoopCond, _Arg, _Retval.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/framework/call_frame.h"
#include "ops/testing/kernel_runner.h"
#include "tests/ops/array_test_util.h"

namespace weft {
namespace {

using testing_util::RunOk;
using testing_util::RunStatus;
using testing_util::Scalar;
using testing_util::Strings;
using testing_util::Vec;

TEST(NoOpTest, DoesNothing) {
  auto out = RunOk(NodeBuilder("n", "NoOp"), {});
  EXPECT_TRUE(out.empty());
}

TEST(SwitchTest, SetsOnlyTheTakenSide) {
  Tensor data = Vec<float>({1, 2});
  auto out = RunOk(NodeBuilder("s", "Switch").Attr("T", DT_FLOAT), {data, Scalar(true)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].IsInitialized());  // output_false: dead
  EXPECT_TRUE(out[1].SharesBufferWith(data));
  out = RunOk(NodeBuilder("s", "Switch").Attr("T", DT_STRING), {Strings({}, {"x"}), Scalar(false)});
  ExpectTensorEqual(out[0], Strings({}, {"x"}));
  EXPECT_FALSE(out[1].IsInitialized());
}

TEST(SwitchTest, PredicateMustBeAScalar) {
  EXPECT_STATUS(RunStatus(NodeBuilder("s", "Switch").Attr("T", DT_FLOAT),
                          {Vec<float>({1}), MakeTensor<bool>({1}, {true})}),
                absl::StatusCode::kInvalidArgument, "must be a scalar bool, but it has shape [1]");
}

TEST(SwitchTest, ForwardsRefs) {
  Tensor var = Vec<int32_t>({4});
  KernelRunner r(NodeBuilder("s", "Switch").Attr("T", DT_INT32).Build());
  // The runner hands refs to the first input only; a ref Switch forwards it.
  auto out = r.RunWithRefInput(&var, {Scalar(false)});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(out->at(0), var);
  EXPECT_FALSE(out->at(1).IsInitialized());
}

TEST(MergeTest, ForwardsTheFirstLiveInput) {
  Tensor dead;  // an uninitialized input is passed as dead
  Tensor live = Vec<int64_t>({5});
  auto out = RunOk(NodeBuilder("m", "Merge").Attr("T", DT_INT64).Attr("N", 3), {dead, live, dead});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].SharesBufferWith(live));
  ExpectTensorEqual(out[1], Scalar<int32_t>(1));
  out = RunOk(NodeBuilder("m", "Merge").Attr("T", DT_INT64).Attr("N", 2), {live, Vec<int64_t>({6})});
  ExpectTensorEqual(out[0], live);
  ExpectTensorEqual(out[1], Scalar<int32_t>(0));
}

TEST(MergeTest, AllInputsDeadMeansDeadOutputs) {
  auto out = RunOk(NodeBuilder("m", "Merge").Attr("T", DT_FLOAT).Attr("N", 2), {Tensor(), Tensor()});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].IsInitialized());
  EXPECT_FALSE(out[1].IsInitialized());
}

TEST(LoopOpsTest, PassDataThrough) {
  Tensor x = Vec<double>({1.5});
  for (const char* op : {"Exit", "NextIteration"}) {
    auto out = RunOk(NodeBuilder("l", op).Attr("T", DT_DOUBLE), {x});
    EXPECT_TRUE(out[0].SharesBufferWith(x)) << op;
  }
  auto out = RunOk(NodeBuilder("e", "Enter").Attr("T", DT_DOUBLE).Attr("frame_name", "while"), {x});
  EXPECT_TRUE(out[0].SharesBufferWith(x));
  out = RunOk(NodeBuilder("c", "LoopCond"), {Scalar(true)});
  ExpectTensorEqual(out[0], Scalar(true));
}

TEST(ArgRetvalTest, MoveValuesThroughTheCallFrame) {
  SimpleCallFrame frame({Vec<float>({1, 2}), Scalar<int32_t>(3)}, 2);
  KernelRunner arg(NodeBuilder("a", "_Arg").Attr("T", DT_INT32).Attr("index", 1).Build());
  arg.set_call_frame(&frame);
  auto out = arg.Run({});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(out->at(0), Scalar<int32_t>(3));

  for (int i = 0; i < 2; ++i) {
    KernelRunner ret(NodeBuilder("r", "_Retval").Attr("T", DT_STRING).Attr("index", i).Build());
    ret.set_call_frame(&frame);
    ASSERT_TRUE(ret.Run({Strings({}, {i == 0 ? "zero" : "one"})}).ok());
  }
  std::vector<Tensor> results;
  ASSERT_TRUE(frame.TakeRetvals(&results).ok());
  ASSERT_EQ(results.size(), 2u);
  ExpectTensorEqual(results[1], Strings({}, {"one"}));
}

TEST(ArgRetvalTest, Errors) {
  SimpleCallFrame frame({Vec<float>({1, 2})}, 1);
  KernelRunner wrong_type(NodeBuilder("a", "_Arg").Attr("T", DT_INT32).Attr("index", 0).Build());
  wrong_type.set_call_frame(&frame);
  EXPECT_STATUS(wrong_type.Run({}).status(), absl::StatusCode::kInvalidArgument,
                "Type mismatch: actual float vs. expect int32");
  KernelRunner out_of_range(NodeBuilder("a", "_Arg").Attr("T", DT_FLOAT).Attr("index", 4).Build());
  out_of_range.set_call_frame(&frame);
  EXPECT_EQ(out_of_range.Run({}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STATUS(RunStatus(NodeBuilder("a", "_Arg").Attr("T", DT_FLOAT).Attr("index", 0), {}),
                absl::StatusCode::kFailedPrecondition, "without a call frame");
  KernelRunner ret(NodeBuilder("r", "_Retval").Attr("T", DT_FLOAT).Attr("index", 3).Build());
  ret.set_call_frame(&frame);
  EXPECT_EQ(ret.Run({Vec<float>({1})}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunStatus(NodeBuilder("a", "_Arg").Attr("T", DT_FLOAT).Attr("index", -1), {}).code(),
            absl::StatusCode::kInvalidArgument);  // index >= 0
}

}  // namespace
}  // namespace weft
