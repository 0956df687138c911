// AddGradients through Cond and WhileLoop (graph/builder/control_flow.h),
// against central differences (grad_check.h): both branches of a cond, a
// loop's variables and the outside tensors its body uses, stacked forward
// values (a tanh/matmul recurrence), zero iterations, conds in loops,
// loops in conds and in loops (also against their unrolled equivalents),
// and the conds and loops it refuses with UNIMPLEMENTED.
#include <cmath>
#include <string>

#include "absl/strings/match.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/control_flow.h"
#include "graph/builder/gradients.h"
#include "graph/builder/math_ops.h"
#include "gtest/gtest.h"
#include "tests/builder/builder_test_util.h"
#include "tests/builder/grad_check.h"
#include "tests/builder/loop_graphs.h"

namespace weft {
namespace {

using testing_builder::Check;
using testing_builder::NestedLoops;
using testing_builder::Power;
using testing_builder::Rnn;
using testing_builder::RunGraph;
using testing_builder::S;
using testing_builder::Values;
using testing_builder::X;
using Outs = std::vector<Output>;

TEST(CondGradientTest, BothBranches) {
  for (bool p : {true, false}) {
    // b only in the true branch: zeros for it when the false one runs.
    Check({{3}, {3}}, [p](S s, X x) {
      Outs y = Cond(
          s, Const(s, p), {x[0], x[1]},
          [](const Scope& t, const Outs& in) {
            return Outs{Mul(t, Tanh(t, in[0]), in[1])};
          },
          [](const Scope& t, const Outs& in) {
            return Outs{Sub(t, Mul(t, in[0], in[0]), Const(t, 3.0))};
          });
      return y.empty() ? Output() : Square(s, y[0]);
    });
  }
}

TEST(CondGradientTest, OutsideTensorsAndSeveralOutputs) {
  for (bool p : {true, false}) {
    Check({{2}, {2}}, [p](S s, X x) {
      // x[1] is used by both branches without being passed in.
      Outs y = Cond(
          s, Const(s, p), {x[0]},
          [&](const Scope& t, const Outs& in) {
            return Outs{Mul(t, in[0], x[1]), Exp(t, x[1])};
          },
          [&](const Scope& t, const Outs& in) {
            return Outs{Square(t, x[1]), Mul(t, in[0], Const(t, 2.0))};
          });
      return y.size() != 2 ? Output() : Mul(s, y[0], AddV2(s, y[1], x[0]));
    });
  }
}

TEST(CondGradientTest, NestedCond) {
  for (int which = 0; which < 3; ++which) {
    Check({{2}}, [which](S s, X x) {
      Outs y = Cond(
          s, Const(s, which > 0), {x[0]},
          [&](const Scope& t, const Outs& in) {
            return Cond(
                t, Const(t, which > 1), {in[0]},
                [](const Scope& u, const Outs& v) {
                  return Outs{Tanh(u, v[0])};
                },
                [](const Scope& u, const Outs& v) {
                  return Outs{Mul(u, v[0], v[0])};
                });
          },
          [](const Scope& t, const Outs& in) { return Outs{Exp(t, in[0])}; });
      return y.empty() ? Output() : y[0];
    });
  }
}

TEST(WhileGradientTest, PowerByRepeatedMultiplication) {
  for (int n : {0, 1, 4}) {
    // d/dp0 = x^n; d/dx = n p0 x^(n-1), accumulated over iterations.
    Check({{3}, {3}}, [n](S s, X x) {
      Outs out = Power(s, x[0], x[1], n);
      return out.empty() ? Output() : out[1];
    });
  }
}

TEST(WhileGradientTest, PowerValues) {
  Scope root = Scope::NewRoot();
  Output x = Const(root, {2.f, -1.f});
  Output p = Power(root, OnesLike(root, x), x, 3)[1];
  std::vector<Output> grads;
  ASSERT_TRUE(AddGradients(root, {p}, {x}, {}, &grads).ok()) << root.status();
  auto out = RunGraph(root, {}, {p, grads[0]});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{8, -1}));
  EXPECT_EQ(Values((*out)[1]), (std::vector<double>{12, 3}));
}

TEST(WhileGradientTest, BodyUsesAnOutsideWeight) {
  // h <- h * w + c, three times: w's gradient sums over the iterations.
  Check({{2, 3}, {3}, {3}}, [](S s, X x) {
    Outs out = WhileLoop(
        s, {Const(s, 0), x[0]},
        [](const Scope& t, const Outs& v) { return Less(t, v[0], Const(t, 3)); },
        [&](const Scope& t, const Outs& v) {
          return Outs{AddV2(t, v[0], Const(t, 1)),
                      AddV2(t, Mul(t, v[1], x[1]), x[2])};
        });
    return out.empty() ? Output() : Square(s, out[1]);
  });
}

TEST(WhileGradientTest, MatMulTanhRecurrence) {
  for (int n : {0, 1, 3}) {
    Check({{2, 3}, {3, 3}, {3}}, [n](S s, X x) {
      Output h = Rnn(s, x[0], x[1], x[2], n);
      return h.valid() ? Mul(s, h, h) : Output();
    });
  }
}

TEST(WhileGradientTest, SeveralFloatVariables) {
  // (a, i, b) <- (a * b, i + 1, tanh(a + b)): two float variables around
  // an int one, each depending on both.
  Check({{2}, {2}}, [](S s, X x) {
    Outs out = WhileLoop(
        s, {x[0], Const(s, 0), x[1]},
        [](const Scope& t, const Outs& v) { return Less(t, v[1], Const(t, 3)); },
        [](const Scope& t, const Outs& v) {
          return Outs{Mul(t, v[0], v[2]), AddV2(t, v[1], Const(t, 1)),
                      Tanh(t, AddV2(t, v[0], v[2]))};
        });
    return out.size() != 3 ? Output() : AddV2(s, out[0], out[2]);
  });
}

TEST(WhileGradientTest, CondInsideLoop) {
  // Even iterations take tanh(h * w), odd ones h * h - w: the backward loop
  // pops each branch's values only in the iterations that took it.
  for (int n : {1, 4}) {
    Check({{2}, {2}}, [n](S s, X x) {
      Outs out = WhileLoop(
          s, {Const(s, 0), x[0]},
          [n](const Scope& t, const Outs& v) {
            return Less(t, v[0], Const(t, n));
          },
          [&](const Scope& t, const Outs& v) {
            Output even = Equal(
                t, AddNode1(t, "FloorMod", {v[0], Const(t, 2)}), Const(t, 0));
            Outs y = Cond(
                t, even, {v[1]},
                [&](const Scope& u, const Outs& in) {
                  return Outs{Tanh(u, Mul(u, in[0], x[1]))};
                },
                [&](const Scope& u, const Outs& in) {
                  return Outs{Sub(u, Mul(u, in[0], in[0]), x[1])};
                });
            return y.empty() ? Outs() : Outs{AddV2(t, v[0], Const(t, 1)), y[0]};
          });
      return out.empty() ? Output() : Square(s, out[1]);
    });
  }
}

TEST(WhileGradientTest, LoopInsideCond) {
  for (bool p : {true, false}) {
    Check({{2}, {2}}, [p](S s, X x) {
      Outs y = Cond(
          s, Const(s, p), {x[0]},
          [&](const Scope& t, const Outs& in) {
            return Outs{Power(t, in[0], x[1], 3)[1]};
          },
          [&](const Scope& t, const Outs& in) {
            return Outs{Mul(t, in[0], x[1])};
          });
      return y.empty() ? Output() : y[0];
    });
  }
}

TEST(WhileGradientTest, LoopInACondInALoop) {
  // Odd outer iterations run an inner loop (i + 1 steps), even ones a
  // plain step: the inner loop's count and values exist only for the odd.
  Check({{2}, {2}}, [](S s, X x) {
    Outs out = WhileLoop(
        s, {Const(s, 0), x[0]},
        [](const Scope& t, const Outs& v) { return Less(t, v[0], Const(t, 4)); },
        [&](const Scope& t, const Outs& v) {
          Output odd = Equal(
              t, AddNode1(t, "FloorMod", {v[0], Const(t, 2)}), Const(t, 1));
          Output bound = AddV2(t, v[0], Const(t, 1));
          Outs y = Cond(
              t, odd, {v[1]},
              [&](const Scope& u, const Outs& in) {
                Outs inner = WhileLoop(
                    u, {Const(u, 0), in[0]},
                    [&](const Scope& w, const Outs& iv) {
                      return Less(w, iv[0], bound);
                    },
                    [&](const Scope& w, const Outs& iv) {
                      return Outs{AddV2(w, iv[0], Const(w, 1)),
                                  Tanh(w, Mul(w, iv[1], x[1]))};
                    });
                return inner.empty() ? Outs() : Outs{inner[1]};
              },
              [&](const Scope& u, const Outs& in) {
                return Outs{Mul(u, in[0], x[1])};
              });
          if (y.empty()) return Outs();
          return Outs{AddV2(t, v[0], Const(t, 1)), y[0]};
        });
    return out.empty() ? Output() : Square(s, out[1]);
  });
}

TEST(WhileGradientTest, NestedLoops) {
  Check({{2}, {2}, {2}}, [](S s, X x) {
    Output h = NestedLoops(s, x[0], x[1], x[2]);
    return h.valid() ? Square(s, h) : Output();
  });
}

// Runs `looped` and `unrolled` (the same function of xs, one built with
// loops) and the gradients of their weighted sums with respect to xs; the
// values must agree.
void ExpectSameValuesAndGradients(const Scope& root, const Output& looped,
                                  const Output& unrolled,
                                  const Output& weights,
                                  const std::vector<Output>& xs) {
  std::vector<Output> g_loop, g_unrolled;
  ASSERT_TRUE(
      AddGradients(root, {Mul(root, looped, weights)}, xs, {}, &g_loop).ok())
      << root.status();
  ASSERT_TRUE(AddGradients(root, {Mul(root, unrolled, weights)}, xs, {},
                           &g_unrolled)
                  .ok())
      << root.status();
  std::vector<Output> fetches = {looped, unrolled};
  for (size_t i = 0; i < xs.size(); ++i) {
    fetches.push_back(g_loop[i]);
    fetches.push_back(g_unrolled[i]);
  }
  auto out = RunGraph(root, {}, fetches);
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t k = 0; k < fetches.size(); k += 2) {
    std::vector<double> a = Values((*out)[k]), u = Values((*out)[k + 1]);
    ASSERT_EQ(a.size(), u.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(a[i], u[i], 1e-5 * (1 + std::fabs(u[i])))
          << "fetch " << k << " element " << i;
    }
  }
}

// The recurrence over many iterations, several in flight at once, against
// the same computation unrolled (no loop, no stacks): the stacks must give
// each backward iteration its own forward values, in order. Repeated, as
// an ordering bug shows only sometimes.
TEST(WhileGradientTest, LongRecurrenceMatchesUnrolled) {
  constexpr int kSteps = 40;
  for (int repeat = 0; repeat < 5; ++repeat) {
    Scope root = Scope::NewRoot();
    Output h0 = Const(root, {{0.5f, -0.2f, 0.1f}, {0.3f, 0.9f, -0.7f}});
    Output w = Const(root, {{0.6f, 0.1f, -0.3f},
                            {-0.4f, 0.8f, 0.2f},
                            {0.5f, -0.6f, 0.7f}});
    Output b = Const(root, {0.1f, -0.2f, 0.05f});
    Output looped = Rnn(root, h0, w, b, kSteps);
    Output unrolled = h0;
    for (int i = 0; i < kSteps; ++i) {
      unrolled = Tanh(root, AddV2(root, MatMul(root, unrolled, w), b));
    }
    // Weights that differ per element, so a swapped value would show.
    Output weights = Const(root, {{1.f, -2.f, 3.f}, {0.5f, 4.f, -1.f}});
    ExpectSameValuesAndGradients(root, looped, unrolled, weights, {h0, w, b});
  }
}

// Nested loops against their unrolling: inner runs of different lengths
// must push and pop their own values, outer iteration by outer iteration.
TEST(WhileGradientTest, NestedLoopsMatchUnrolled) {
  for (int repeat = 0; repeat < 5; ++repeat) {
    Scope root = Scope::NewRoot();
    Output h0 = Const(root, {0.5f, -0.3f});
    Output w = Const(root, {0.9f, 1.1f});
    Output c = Const(root, {0.2f, -0.1f});
    Output looped = NestedLoops(root, h0, w, c);
    Output unrolled = h0;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j <= i; ++j) unrolled = Tanh(root, Mul(root, unrolled, w));
      unrolled = AddV2(root, unrolled, c);
    }
    Output weights = Const(root, {1.5f, -2.f});
    ExpectSameValuesAndGradients(root, looped, unrolled, weights, {h0, w, c});
  }
}

TEST(WhileGradientTest, ForwardStillRunsAloneAfterGradients) {
  Scope root = Scope::NewRoot();
  Output x = Const(root, {2.f, 3.f});
  Output p = Power(root, OnesLike(root, x), x, 3)[1];
  std::vector<Output> grads;
  ASSERT_TRUE(AddGradients(root, {p}, {x}, {}, &grads).ok()) << root.status();
  // Only the forward loop: the counter and the pushes are pruned away.
  auto out = RunGraph(root, {}, {p});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{8, 27}));
}

TEST(WhileGradientTest, TwoGradientsOfOneLoop) {
  // Each AddGradients builds its own backward loop and stacks.
  Scope root = Scope::NewRoot();
  Output h0 = Const(root, {{0.5f, -0.2f}});
  Output w = Const(root, {{0.3f, 0.1f}, {-0.4f, 0.8f}});
  Output b = Const(root, {0.1f, 0.2f});
  Output h = Rnn(root, h0, w, b, 3);
  Output loss = Sum(root, Square(root, h), Const(root, {0, 1}));
  std::vector<Output> g1, g2;
  ASSERT_TRUE(AddGradients(root, {loss}, {w}, {}, &g1).ok()) << root.status();
  ASSERT_TRUE(AddGradients(root, {loss}, {w, h0}, {}, &g2).ok())
      << root.status();
  auto out = RunGraph(root, {}, {g1[0], g2[0], g2[1]});
  ASSERT_TRUE(out.ok()) << out.status();
  // The same gradient (up to the order AddN sums in).
  std::vector<double> a = Values((*out)[0]), b2 = Values((*out)[1]);
  ASSERT_EQ(a.size(), b2.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b2[i], 1e-6);
  EXPECT_NE(Values((*out)[2]), (std::vector<double>{0, 0}));
}

TEST(WhileGradientTest, LoopNotBuiltByTheBuilderIsUnimplemented) {
  // The nodes of a loop, as a loaded GraphDef would have them.
  Scope root = Scope::NewRoot();
  Output x = Const(root, 2.f);
  Output enter = AddNode1(root.WithOpName("loop/Enter"), "Enter", {x},
                          {{"frame_name", Attr("loop")}});
  Output exit = AddNode1(root.WithOpName("loop/Exit"), "Exit", {enter});
  Output y = Square(root, exit);
  std::vector<Output> grads;
  absl::Status st = AddGradients(root, {y}, {x}, {}, &grads);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "'loop/Exit'")) << st;
  for (const char* op : {"Enter", "NextIteration"}) {
    Scope s = Scope::NewRoot();
    Output a = Const(s, 2.f);
    AttrList attrs;
    if (std::string(op) == "Enter") attrs = {{"frame_name", Attr("loop")}};
    Output b = AddNode1(s.WithOpName("lone"), op, {a}, attrs);
    st = AddGradients(s, {Square(s, b)}, {a}, {}, &grads);
    EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
    EXPECT_TRUE(absl::StrContains(st.message(), "'lone'")) << st;
  }
}

TEST(WhileGradientTest, CondNotBuiltByTheBuilderIsUnimplemented) {
  Scope root = Scope::NewRoot();
  Output x = Const(root, 2.f);
  Outs sw = AddNode(root.WithOpName("sw"), "Switch", {x, Const(root, true)});
  Outs merge = AddNode(root.WithOpName("m"), "Merge",
                       {Input({Neg(root, sw[0]), Square(root, sw[1])})});
  std::vector<Output> grads;
  absl::Status st = AddGradients(root, {merge[0]}, {x}, {}, &grads);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "'m'")) << st;
}

TEST(WhileGradientTest, TensorInsideALoopIsUnimplemented) {
  Scope root = Scope::NewRoot();
  Output x = Const(root, 2.f);
  Output inside;
  Outs out = WhileLoop(
      root, {Const(root, 0), x},
      [](const Scope& t, const Outs& v) { return Less(t, v[0], Const(t, 3)); },
      [&](const Scope& t, const Outs& v) {
        inside = Mul(t, v[1], v[1]);
        return Outs{AddV2(t, v[0], Const(t, 1)), inside};
      });
  std::vector<Output> grads;
  absl::Status st = AddGradients(root, {inside}, {x}, {}, &grads);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), inside.name())) << st;
}

}  // namespace
}  // namespace weft
