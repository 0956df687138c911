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

namespace weft {
namespace {

using ::testing::HasSubstr;
using testing::GraphDefBuilder;
using testing::Harness;
using testing::RunCount;

// The loop variables as the body sees them.
struct LoopVars {
  std::string i;      // this iteration's counter (also the loop's pivot)
  std::string acc;    // the accumulator
  std::string pivot;  // "^i": a control input for the body's constants
};
// Adds the body's nodes; returns the name of the next accumulator value.
using Body = std::function<std::string(GraphDefBuilder&, const LoopVars&)>;

struct LoopOutputs {
  std::string i, acc;  // Exit nodes
};

// A scalar int32 constant, ordered after `ctrl` when it is not empty (a
// constant inside a loop must hang off the loop's pivot, as TensorFlow
// builds them, or it would sit in the enclosing frame).
void Const(GraphDefBuilder& b, const std::string& name, int32_t value,
           const std::string& ctrl) {
  b.Const(name, value);
  if (!ctrl.empty()) {
    tensorflow::GraphDef* def = b.mutable_def();
    def->mutable_node(def->node_size() - 1)->add_input(ctrl);
  }
}

// Adds the loop   i = 0; acc = acc_init; while (i < n) { acc = body(i, acc);
// ++i; }   as TensorFlow's v1 while_loop builds it, with `p` as its frame
// name and node prefix. `n` and `acc_init` are int32 producers in the
// enclosing frame; `ctrl` orders the loop's constants ("^outer_pivot" for a
// loop inside another loop's body, empty at top level).
LoopOutputs AddLoop(GraphDefBuilder& b, const std::string& p,
                    const std::string& n, const std::string& acc_init,
                    int parallel, const std::string& ctrl, const Body& body) {
  auto name = [&](const char* s) { return p + "/" + s; };
  const std::vector<std::pair<std::string, testing::Attr>> enter_attrs = {
      {"T", DT_INT32},
      {"frame_name", p.c_str()},
      {"parallel_iterations", parallel}};
  auto constant_attrs = enter_attrs;
  constant_attrs.push_back({"is_constant", true});
  Const(b, name("zero"), 0, ctrl);
  b.Op(name("enter_i"), "Enter", {name("zero")}, enter_attrs);
  b.Op(name("enter_acc"), "Enter", {acc_init}, enter_attrs);
  b.Op(name("enter_n"), "Enter", {n}, constant_attrs);
  b.Op(name("merge_i"), "Merge", {name("enter_i"), name("next_i")},
       {{"T", DT_INT32}, {"N", 2}});
  b.Op(name("merge_acc"), "Merge", {name("enter_acc"), name("next_acc")},
       {{"T", DT_INT32}, {"N", 2}});
  b.Op(name("less"), "Less", {name("merge_i"), name("enter_n")});
  b.Op(name("cond"), "LoopCond", {name("less")});
  b.Op(name("switch_i"), "Switch", {name("merge_i"), name("cond")},
       {{"T", DT_INT32}});
  b.Op(name("switch_acc"), "Switch", {name("merge_acc"), name("cond")},
       {{"T", DT_INT32}});
  b.Op(name("exit_i"), "Exit", {name("switch_i")}, {{"T", DT_INT32}});
  b.Op(name("exit_acc"), "Exit", {name("switch_acc")}, {{"T", DT_INT32}});
  b.Op(name("i"), "Identity", {name("switch_i") + ":1"}, {{"T", DT_INT32}});
  b.Op(name("acc"), "Identity", {name("switch_acc") + ":1"},
       {{"T", DT_INT32}});
  Const(b, name("one"), 1, "^" + name("i"));
  b.Op(name("inc"), "AddV2", {name("i"), name("one")}, {{"T", DT_INT32}});
  const std::string acc_next =
      body(b, LoopVars{name("i"), name("acc"), "^" + name("i")});
  b.Op(name("next_i"), "NextIteration", {name("inc")}, {{"T", DT_INT32}});
  b.Op(name("next_acc"), "NextIteration", {acc_next}, {{"T", DT_INT32}});
  return LoopOutputs{name("exit_i"), name("exit_acc")};
}

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

}  // namespace
}  // namespace weft
