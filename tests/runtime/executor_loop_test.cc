// The executor's while-loop frames over the test ops: counter loops,
// iteration ids, nested loops, conds inside a loop, constant Enters, errors
// inside a loop, and that a long loop recycles its iterations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/executor_frames.h"
#include "tests/runtime/executor_harness.h"
#include "tests/runtime/executor_test_ops.h"
#include "tests/runtime/loop_builder.h"

namespace weft {
namespace {

using ::testing::HasSubstr;
using testing::GraphDefBuilder;
using testing::Harness;
using testing::LoopOutputs;
using testing::LoopVars;
using testing::AddLoop;
using testing::Const;
using testing::RunCount;

Tensor I32(int32_t v) { return Tensor::Scalar<int32_t>(v); }
int32_t Int(const Tensor& t) { return t.scalar<int32_t>(); }

// acc += i
std::string AddCounter(GraphDefBuilder& b, const LoopVars& v) {
  const std::string out = v.i + "_plus_acc";
  b.Op(out, "AddV2", {v.acc, v.i}, {{"T", DT_INT32}});
  return out;
}

// In loop "w"'s body: w/sw = Switch(acc, i < 3).
void SwitchOnIBelowThree(GraphDefBuilder& b, const LoopVars& v) {
  Const(b, "w/three", 3, v.pivot);
  b.Op("w/lt", "Less", {v.i, "w/three"});
  b.Op("w/sw", "Switch", {v.acc, "w/lt"}, {{"T", DT_INT32}});
}

TEST(ExecutorLoopTest, CounterLoop) {
  for (int parallel : {1, 10}) {
    GraphDefBuilder b;
    b.Placeholder("n", DT_INT32).Const("acc0", 0);
    LoopOutputs loop = AddLoop(b, "w", "n", "acc0", parallel, "", AddCounter);
    for (bool pool : {false, true}) {
      Harness h(b.Build(), {"n"}, {loop.i, loop.acc}, {}, pool);
      ASSERT_TRUE(h.status().ok()) << h.status();
      for (int32_t n : {0, 1, 5, 100, 5}) {
        auto out = h.Run({I32(n)});
        ASSERT_TRUE(out.ok()) << out.status();
        EXPECT_EQ(Int(out->at(0)), n) << "parallel " << parallel;
        EXPECT_EQ(Int(out->at(1)), n * (n - 1) / 2) << "parallel " << parallel;
      }
    }
  }
}

TEST(ExecutorLoopTest, ExpensiveBodiesOnThePool) {
  GraphDefBuilder b;
  b.Placeholder("n", DT_INT32).Const("acc0", 0);
  LoopOutputs loop =
      AddLoop(b, "w", "n", "acc0", 4, "",
              [](GraphDefBuilder& b, const LoopVars& v) {
                b.Op("w/slow", "SlowIdentity", {v.i},
                     {{"T", DT_INT32}, {"micros", 100}});
                b.Op("w/sum", "AddV2", {v.acc, "w/slow"}, {{"T", DT_INT32}});
                return std::string("w/sum");
              });
  Harness h(b.Build(), {"n"}, {loop.acc}, {}, /*use_pool=*/true);
  ASSERT_TRUE(h.status().ok()) << h.status();
  auto out = h.Run({I32(50)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Int(out->at(0)), 50 * 49 / 2);
}

TEST(ExecutorLoopTest, KernelsSeeTheirIteration) {
  GraphDefBuilder b;
  b.Placeholder("n", DT_INT32).Const("acc0", 0);
  b.Op("outside", "IterId", {"n"}, {{"T", DT_INT32}});
  LoopOutputs loop = AddLoop(b, "w", "n", "acc0", 10, "",
                             [](GraphDefBuilder& b, const LoopVars& v) {
                               b.Op("w/id", "IterId", {v.i}, {{"T", DT_INT32}});
                               b.Op("w/sum", "AddV2", {v.acc, "w/id"},
                                    {{"T", DT_INT32}});
                               return std::string("w/sum");
                             });
  Harness h(b.Build(), {"n"}, {loop.acc, "outside"}, {});
  ASSERT_TRUE(h.status().ok()) << h.status();
  auto out = h.Run({I32(10)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Int(out->at(0)), 45);  // iteration ids 0..9
  EXPECT_EQ(Int(out->at(1)), -1);  // outside any loop
}

TEST(ExecutorLoopTest, NestedLoops) {
  // for i < n: for j < i: acc += j   (the inner trip count is the outer i)
  GraphDefBuilder b;
  b.Placeholder("n", DT_INT32).Const("acc0", 0);
  LoopOutputs outer = AddLoop(
      b, "outer", "n", "acc0", 10, "",
      [](GraphDefBuilder& b, const LoopVars& ov) {
        LoopOutputs inner =
            AddLoop(b, "inner", ov.i, ov.acc, 10, ov.pivot, AddCounter);
        return inner.acc;
      });
  for (bool pool : {false, true}) {
    Harness h(b.Build(), {"n"}, {outer.i, outer.acc}, {}, pool);
    ASSERT_TRUE(h.status().ok()) << h.status();
    for (int32_t n : {0, 1, 2, 6, 20}) {
      int32_t want = 0;
      for (int32_t i = 0; i < n; ++i) {
        for (int32_t j = 0; j < i; ++j) want += j;
      }
      auto out = h.Run({I32(n)});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(Int(out->at(0)), n);
      EXPECT_EQ(Int(out->at(1)), want) << "n = " << n;
    }
  }
}

TEST(ExecutorLoopTest, CondInsideTheLoopIsDeadPerIteration) {
  // acc = i < 3 ? acc + i : -acc, with the branches counted.
  GraphDefBuilder b;
  b.Placeholder("n", DT_INT32).Const("acc0", 7);
  LoopOutputs loop = AddLoop(
      b, "w", "n", "acc0", 10, "", [](GraphDefBuilder& b, const LoopVars& v) {
        SwitchOnIBelowThree(b, v);
        b.Op("w/taken_true", "CountRuns", {"w/sw:1"}, {{"T", DT_INT32}});
        b.Op("w/plus", "AddV2", {"w/taken_true", v.i}, {{"T", DT_INT32}});
        b.Op("w/taken_false", "CountRuns", {"w/sw:0"}, {{"T", DT_INT32}});
        b.Op("w/neg", "Neg", {"w/taken_false"}, {{"T", DT_INT32}});
        b.Op("w/m", "Merge", {"w/plus", "w/neg"}, {{"T", DT_INT32}, {"N", 2}});
        return std::string("w/m");
      });
  Harness h(b.Build(), {"n"}, {loop.acc}, {});
  ASSERT_TRUE(h.status().ok()) << h.status();
  for (int32_t n : {0, 2, 3, 8}) {
    testing::ResetRunCounts();
    int32_t want = 7;
    for (int32_t i = 0; i < n; ++i) want = i < 3 ? want + i : -want;
    auto out = h.Run({I32(n)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Int(out->at(0)), want) << "n = " << n;
    EXPECT_EQ(RunCount("w/taken_true"), std::min(n, 3));
    EXPECT_EQ(RunCount("w/taken_false"), std::max(n - 3, 0));
  }
}

TEST(ExecutorLoopTest, ConstantEnterReachesEveryIteration) {
  // acc += k, with k entered once as a loop invariant.
  GraphDefBuilder b;
  b.Placeholder("n", DT_INT32).Placeholder("k", DT_INT32).Const("acc0", 0);
  LoopOutputs loop = AddLoop(
      b, "w", "n", "acc0", 3, "", [](GraphDefBuilder& b, const LoopVars& v) {
        b.Op("w/enter_k", "Enter", {"k"},
             {{"T", DT_INT32}, {"frame_name", "w"}, {"is_constant", true}});
        b.Op("w/sum", "AddV2", {v.acc, "w/enter_k"}, {{"T", DT_INT32}});
        return std::string("w/sum");
      });
  for (bool pool : {false, true}) {
    Harness h(b.Build(), {"n", "k"}, {loop.acc}, {}, pool);
    ASSERT_TRUE(h.status().ok()) << h.status();
    auto out = h.Run({I32(25), I32(4)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Int(out->at(0)), 100);
  }
}

TEST(ExecutorLoopTest, ErrorInsideTheLoopAbortsCleanly) {
  // Iteration 3 takes the branch that fails.
  GraphDefBuilder b;
  b.Placeholder("n", DT_INT32).Const("acc0", 0);
  LoopOutputs loop = AddLoop(
      b, "w", "n", "acc0", 10, "", [](GraphDefBuilder& b, const LoopVars& v) {
        SwitchOnIBelowThree(b, v);
        b.Op("w/ok", "AddV2", {"w/sw:1", v.i}, {{"T", DT_INT32}});
        b.Op("w/bad", "Fail", {"w/sw:0"}, {{"T", DT_INT32}, {"code", 9}});
        b.Op("w/m", "Merge", {"w/ok", "w/bad"}, {{"T", DT_INT32}, {"N", 2}});
        return std::string("w/m");
      });
  for (bool pool : {false, true}) {
    Harness h(b.Build(), {"n"}, {loop.acc}, {}, pool);
    ASSERT_TRUE(h.status().ok()) << h.status();
    for (int rep = 0; rep < 3; ++rep) {
      auto out = h.Run({I32(10)});
      ASSERT_FALSE(out.ok());
      EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_THAT(std::string(out.status().message()),
                  HasSubstr("[[{{node w/bad}}]]"));
      // The step state left by the abort does not leak into the next step.
      out = h.Run({I32(3)});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(Int(out->at(0)), 0 + 1 + 2);
    }
  }
}

TEST(ExecutorLoopTest, LongLoopsRecycleTheirIterations) {
  for (int parallel : {1, 4}) {
    GraphDefBuilder b;
    b.Placeholder("n", DT_INT32).Const("acc0", 0);
    LoopOutputs loop = AddLoop(b, "w", "n", "acc0", parallel, "",
                               [](GraphDefBuilder& b, const LoopVars& v) {
                                 b.Op("w/next", "Identity", {v.i},
                                      {{"T", DT_INT32}});
                                 return std::string("w/next");
                               });
    Harness h(b.Build(), {"n"}, {loop.i, loop.acc}, {});
    ASSERT_TRUE(h.status().ok()) << h.status();
    const int64_t before = IterationStatesCreated();
    auto out = h.Run({I32(20000)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Int(out->at(0)), 20000);
    EXPECT_EQ(Int(out->at(1)), 19999);
    // The step's root iteration plus at most `parallel` live loop iterations.
    const int64_t first = IterationStatesCreated() - before;
    EXPECT_LE(first, parallel + 1);
    out = h.Run({I32(20000)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(IterationStatesCreated() - before, first);  // all reused
  }
}

TEST(ExecutorLoopTest, NodeReachedFromTwoFramesIsRejected) {
  // A constant without a control edge from the pivot sits in the root frame
  // and cannot feed the loop body directly.
  GraphDefBuilder b;
  b.Placeholder("n", DT_INT32).Const("acc0", 0).Const("outside", 5);
  LoopOutputs loop = AddLoop(
      b, "w", "n", "acc0", 10, "", [](GraphDefBuilder& b, const LoopVars& v) {
        b.Op("w/sum", "AddV2", {v.acc, "outside"}, {{"T", DT_INT32}});
        return std::string("w/sum");
      });
  Harness h(b.Build(), {"n"}, {loop.acc}, {});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(h.status().message()), HasSubstr("two frames"));
}

TEST(ExecutorLoopTest, LoopNodesOutsideALoopAreRejected) {
  // NextIteration and Exit move values between iterations and frames; in the
  // root frame there is no next iteration and no parent to move to.
  for (const char* op : {"NextIteration", "Exit"}) {
    GraphDefBuilder b;
    b.Const("c", 1).Op("x", op, {"c"}, {{"T", DT_INT32}});
    Harness h(b.Build(), {}, {"x"}, {});
    EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument) << op;
    EXPECT_THAT(std::string(h.status().message()),
                HasSubstr(std::string(op) + " is not inside a while loop"));
  }
}

}  // namespace
}  // namespace weft
