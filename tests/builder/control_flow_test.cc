// Cond and WhileLoop (graph/builder/control_flow.h): the graphs they build
// (names, frames, rewired outside tensors) and what they compute, both
// branches and loops of zero and several iterations, and their errors.
#include "graph/builder/control_flow.h"

#include <cmath>
#include <string>

#include "absl/strings/match.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "gtest/gtest.h"
#include "tests/builder/builder_test_util.h"

namespace weft {
namespace {

using testing_builder::RunGraph;
using testing_builder::Values;
using Outs = std::vector<Output>;

const tensorflow::NodeDef& Node(const Scope& s, const std::string& name) {
  static const tensorflow::NodeDef* const kNone = new tensorflow::NodeDef;
  const tensorflow::NodeDef* n = s.FindNode(name);
  EXPECT_NE(n, nullptr) << name;
  return n == nullptr ? *kNone : *n;
}

// y = pred ? tanh(a) * b : a * a - 3 (b used only by the true branch; the
// constant 3 only by the false one).
Outs TanhOrSquare(const Scope& root, const Output& pred, const Output& a,
                  const Output& b) {
  return Cond(
      root, pred, {a},
      [&](const Scope& s, const Outs& in) {
        return Outs{Mul(s, Tanh(s, in[0]), b)};  // b: from outside
      },
      [&](const Scope& s, const Outs& in) {
        return Outs{Sub(s, Mul(s, in[0], in[0]), Const(s, 3.f))};
      });
}

TEST(CondTest, RunsTheBranchThePredicateSelects) {
  for (bool p : {true, false}) {
    Scope root = Scope::NewRoot();
    Output pred = Placeholder(root.WithOpName("pred"), DT_BOOL);
    Output a = Const(root, {0.5f, -1.f});
    Output b = Const(root, {2.f, 3.f});
    Outs y = TanhOrSquare(root, pred, a, b);
    ASSERT_TRUE(root.ok()) << root.status();
    ASSERT_EQ(y.size(), 1u);
    auto out = RunGraph(root, {{"pred:0", Tensor::Scalar<bool>(p)}}, y);
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<double> want =
        p ? std::vector<double>{std::tanh(0.5f) * 2, std::tanh(-1.f) * 3}
          : std::vector<double>{0.25 - 3, 1 - 3};
    std::vector<double> got = Values((*out)[0]);
    ASSERT_EQ(got.size(), 2u);
    for (int i = 0; i < 2; ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << p;
  }
}

TEST(CondTest, BuildsTensorFlowShapedNodes) {
  Scope root = Scope::NewRoot();
  Output pred = Placeholder(root.WithOpName("pred"), DT_BOOL);
  Output a = Const(root.WithOpName("a"), 1.f);
  Output b = Const(root.WithOpName("b"), 2.f);
  Outs y = TanhOrSquare(root, pred, a, b);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(y[0].node, "cond/Merge");
  EXPECT_EQ(Node(root, "cond/Merge").op(), "Merge");
  EXPECT_EQ(Node(root, "cond/switch_t").op(), "Identity");
  EXPECT_EQ(Node(root, "cond/pred_id").input(0), "pred");
  // The input's Switch, then b's, made when the true branch used it.
  EXPECT_EQ(Node(root, "cond/Switch_1").input(0), "a");
  EXPECT_EQ(Node(root, "cond/Switch_2").input(0), "b");
  EXPECT_EQ(Node(root, "cond/Switch_2").input(1), "cond/pred_id");
  // The true branch's Mul takes b through its Switch's true output.
  EXPECT_EQ(Node(root, "cond/Mul").input(1), "cond/Switch_2:1");
  // The false branch's constant waits for the false pivot.
  const tensorflow::NodeDef& three = Node(root, "cond/Const");
  ASSERT_EQ(three.input_size(), 1);
  EXPECT_EQ(three.input(0), "^cond/switch_f");
}

TEST(CondTest, BranchReturningAnOutsideTensorOrAConstant) {
  for (bool p : {true, false}) {
    Scope root = Scope::NewRoot();
    Output pred = Const(root, p);
    Output a = Const(root, {1.f, 2.f});
    Outs y = Cond(
        root, pred, {},
        [&](const Scope&, const Outs&) { return Outs{a}; },
        [&](const Scope& s, const Outs&) {
          return Outs{Const(s, {7.f, 8.f})};
        });
    ASSERT_TRUE(root.ok()) << root.status();
    auto out = RunGraph(root, {}, y);
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> want =
        p ? std::vector<double>{1, 2} : std::vector<double>{7, 8};
    EXPECT_EQ(Values((*out)[0]), want);
  }
}

TEST(CondTest, NestedCond) {
  for (int which = 0; which < 3; ++which) {
    Scope root = Scope::NewRoot();
    Output outer = Const(root, which > 0);
    Output inner = Const(root, which > 1);
    Output x = Const(root, 3.f);
    Outs y = Cond(
        root, outer, {x},
        [&](const Scope& s, const Outs& in) {
          return Cond(
              s, inner, {in[0]},
              [](const Scope& t, const Outs& v) {
                return Outs{Mul(t, v[0], Const(t, 10.f))};
              },
              [](const Scope& t, const Outs& v) {
                return Outs{AddV2(t, v[0], Const(t, 1.f))};
              });
        },
        [](const Scope& s, const Outs& in) { return Outs{Neg(s, in[0])}; });
    ASSERT_TRUE(root.ok()) << root.status();
    auto out = RunGraph(root, {}, y);
    ASSERT_TRUE(out.ok()) << out.status();
    const double want[] = {-3, 4, 30};
    EXPECT_EQ(Values((*out)[0]), std::vector<double>{want[which]});
  }
}

TEST(CondTest, Errors) {
  {
    Scope root = Scope::NewRoot();
    Outs y = Cond(
        root, Const(root, 1.f), {},
        [&](const Scope& s, const Outs&) { return Outs{Const(s, 1.f)}; },
        [&](const Scope& s, const Outs&) { return Outs{Const(s, 1.f)}; });
    EXPECT_TRUE(y.empty());
    EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(root.status().message(), "bool"))
        << root.status();
  }
  {
    Scope root = Scope::NewRoot();
    Outs y = Cond(
        root, Const(root, true), {},
        [&](const Scope& s, const Outs&) { return Outs{Const(s, 1.f)}; },
        [&](const Scope& s, const Outs&) { return Outs{Const(s, 1)}; });
    EXPECT_TRUE(y.empty());
    EXPECT_TRUE(absl::StrContains(root.status().message(), "false branch"))
        << root.status();
  }
}

// (i, p) = (0, 1); while (i < n) (i, p) = (i + 1, p * x).
Outs PowerLoop(const Scope& root, const Output& n, const Output& x) {
  return WhileLoop(
      root, {Const(root, 0), OnesLike(root, x)},
      [&](const Scope& s, const Outs& v) { return Less(s, v[0], n); },
      [&](const Scope& s, const Outs& v) {
        return Outs{AddV2(s, v[0], Const(s, 1)), Mul(s, v[1], x)};
      });
}

TEST(WhileLoopTest, PowerByRepeatedMultiplication) {
  for (int n : {0, 1, 5}) {
    Scope root = Scope::NewRoot();
    Output nn = Placeholder(root.WithOpName("n"), DT_INT32);
    Outs out = PowerLoop(root, nn, Const(root, {2.f, -1.5f}));
    ASSERT_TRUE(root.ok()) << root.status();
    ASSERT_EQ(out.size(), 2u);
    auto got = RunGraph(root, {{"n:0", Tensor::Scalar<int32_t>(n)}}, {out[1]});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(Values((*got)[0]),
              (std::vector<double>{std::pow(2.0, n), std::pow(-1.5, n)}));
  }
}

TEST(WhileLoopTest, BuildsTensorFlowShapedFrame) {
  Scope root = Scope::NewRoot();
  Output x = Const(root.WithOpName("x"), 2.f);
  Output n = Const(root.WithOpName("n"), 3);
  WhileOptions options;
  options.parallel_iterations = 4;
  Outs out = WhileLoop(
      root, {Const(root, 0), x},
      [&](const Scope& s, const Outs& v) { return Less(s, v[0], n); },
      [&](const Scope& s, const Outs& v) {
        return Outs{AddV2(s, v[0], Const(s, 1)), Mul(s, v[1], x)};
      },
      "power", options);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(out[0].node, "while/Exit");
  EXPECT_EQ(out[1].node, "while/Exit_1");
  const tensorflow::NodeDef& enter = Node(root, "while/Enter");
  EXPECT_EQ(enter.attr().at("frame_name").s(), "power");
  EXPECT_FALSE(enter.attr().at("is_constant").b());
  EXPECT_EQ(enter.attr().at("parallel_iterations").i(), 4);
  // The Merge's back edge comes from the NextIteration.
  EXPECT_EQ(Node(root, "while/Merge").input(1), "while/NextIteration");
  EXPECT_EQ(Node(root, "while/Switch").input(1), "while/LoopCond");
  // n (in the condition) and x (in the body) enter as constants.
  int constant_enters = 0;
  for (const tensorflow::NodeDef& node : root.graph().node()) {
    if (node.op() != "Enter" || !node.attr().at("is_constant").b()) continue;
    ++constant_enters;
    EXPECT_TRUE(node.input(0) == "n" || node.input(0) == "x") << node.input(0);
  }
  EXPECT_EQ(constant_enters, 2);
  // The body's constant waits for the body's pivot.
  const tensorflow::NodeDef& one = Node(root, "while/Const");
  ASSERT_EQ(one.input_size(), 1);
  EXPECT_EQ(one.input(0), "^while/Identity");
  auto got = RunGraph(root, {}, out);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Values((*got)[1]), std::vector<double>{16});
}

TEST(WhileLoopTest, LoopInsideCondAndCondInsideLoop) {
  for (bool p : {true, false}) {
    Scope root = Scope::NewRoot();
    Output x = Const(root, 3.f);
    Outs y = Cond(
        root, Const(root, p), {x},
        [&](const Scope& s, const Outs& in) {
          return Outs{PowerLoop(s, Const(s, 2), in[0])[1]};
        },
        [](const Scope& s, const Outs& in) { return Outs{Neg(s, in[0])}; });
    // Adds x or subtracts 1, by the sign of the running value, 4 times.
    Outs z = WhileLoop(
        root, {Const(root, 0), y[0]},
        [](const Scope& s, const Outs& v) { return Less(s, v[0], Const(s, 4)); },
        [&](const Scope& s, const Outs& v) {
          Outs step = Cond(
              s, Greater(s, v[1], Const(s, 0.f)), {v[1]},
              [&](const Scope& t, const Outs& w) {
                return Outs{Sub(t, w[0], Const(t, 1.f))};
              },
              [&](const Scope& t, const Outs& w) {
                return Outs{AddV2(t, w[0], x)};
              });
          return Outs{AddV2(s, v[0], Const(s, 1)), step[0]};
        });
    ASSERT_TRUE(root.ok()) << root.status();
    auto got = RunGraph(root, {}, {y[0], z[1]});
    ASSERT_TRUE(got.ok()) << got.status();
    // p: 9 -> 8, 7, 6, 5. !p: -3 -> 0, 3, 2, 1.
    EXPECT_EQ(Values((*got)[0]), std::vector<double>{p ? 9.0 : -3.0});
    EXPECT_EQ(Values((*got)[1]), std::vector<double>{p ? 5.0 : 1.0});
  }
}

TEST(WhileLoopTest, NestedLoops) {
  // sum over i < 3 of (sum over j < 4 of 1) = 12, the inner bound captured
  // from outside both loops.
  Scope root = Scope::NewRoot();
  Output four = Const(root, 4.f);
  Outs out = WhileLoop(
      root, {Const(root, 0), Const(root, 0.f)},
      [](const Scope& s, const Outs& v) { return Less(s, v[0], Const(s, 3)); },
      [&](const Scope& s, const Outs& v) {
        Outs inner = WhileLoop(
            s, {Const(s, 0.f), v[1]},
            [&](const Scope& t, const Outs& w) { return Less(t, w[0], four); },
            [](const Scope& t, const Outs& w) {
              return Outs{AddV2(t, w[0], Const(t, 1.f)),
                          AddV2(t, w[1], Const(t, 1.f))};
            });
        return Outs{AddV2(s, v[0], Const(s, 1)), inner[1]};
      });
  ASSERT_TRUE(root.ok()) << root.status();
  auto got = RunGraph(root, {}, {out[1]});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Values((*got)[0]), std::vector<double>{12});
}

TEST(WhileLoopTest, Errors) {
  {
    Scope root = Scope::NewRoot();
    Outs out = WhileLoop(
        root, {Const(root, 0)},
        [](const Scope& s, const Outs& v) { return Less(s, v[0], Const(s, 3)); },
        [](const Scope& s, const Outs& v) {
          return Outs{v[0], Const(s, 1)};
        });
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(root.status().message(), "2 tensors for 1"))
        << root.status();
  }
  {
    Scope root = Scope::NewRoot();
    Outs out = WhileLoop(
        root, {Const(root, 0)},
        [](const Scope& s, const Outs& v) { return v[0]; },
        [](const Scope&, const Outs& v) { return v; });
    EXPECT_TRUE(out.empty());
    EXPECT_TRUE(absl::StrContains(root.status().message(), "bool"))
        << root.status();
  }
}

}  // namespace
}  // namespace weft
