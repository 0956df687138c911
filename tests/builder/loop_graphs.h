// While loops that both the gradient tests and the graph TensorFlow runs
// (dump_control_flow_graph.cc) build: x^n by repeated multiplication, a
// tanh(h W + b) recurrence, and nested loops whose inner count varies.
#ifndef WEFT_TESTS_BUILDER_LOOP_GRAPHS_H_
#define WEFT_TESTS_BUILDER_LOOP_GRAPHS_H_

#include <vector>

#include "graph/builder/array_ops.h"
#include "graph/builder/control_flow.h"
#include "graph/builder/math_ops.h"

namespace weft {
namespace testing_builder {

using Outs = std::vector<Output>;

// (i, p) = (0, p0); while (i < n) (i, p) = (i + 1, p * x).
inline Outs Power(const Scope& s, const Output& p0, const Output& x, int n) {
  return WhileLoop(
      s, {Const(s, 0), p0},
      [n](const Scope& t, const Outs& v) { return Less(t, v[0], Const(t, n)); },
      [&](const Scope& t, const Outs& v) {
        return Outs{AddV2(t, v[0], Const(t, 1)), Mul(t, v[1], x)};
      });
}

// An RNN-like recurrence: h <- tanh(h W + b), n times. The backward body
// needs each iteration's h and tanh output: they come off stacks.
inline Output Rnn(const Scope& s, const Output& h0, const Output& w,
                  const Output& b, int n) {
  Outs out = WhileLoop(
      s, {Const(s, 0), h0},
      [n](const Scope& t, const Outs& v) { return Less(t, v[0], Const(t, n)); },
      [&](const Scope& t, const Outs& v) {
        return Outs{AddV2(t, v[0], Const(t, 1)),
                    Tanh(t, AddV2(t, MatMul(t, v[1], w), b))};
      });
  return out.empty() ? Output() : out[1];
}

// Outer iteration i runs the inner loop i + 1 times (its count differs per
// outer iteration), on the outer variable and a tensor from outside both.
inline Output NestedLoops(const Scope& s, const Output& h0,
                          const Output& w, const Output& c) {
  Outs out = WhileLoop(
      s, {Const(s, 0), h0},
      [](const Scope& t, const Outs& v) { return Less(t, v[0], Const(t, 3)); },
      [&](const Scope& t, const Outs& v) {
        Output bound = AddV2(t, v[0], Const(t, 1));
        Outs inner = WhileLoop(
            t, {Const(t, 0), v[1]},
            [&](const Scope& u, const Outs& iv) {
              return Less(u, iv[0], bound);
            },
            [&](const Scope& u, const Outs& iv) {
              return Outs{AddV2(u, iv[0], Const(u, 1)),
                          Tanh(u, Mul(u, iv[1], w))};
            });
        if (inner.empty()) return Outs();
        return Outs{AddV2(t, v[0], Const(t, 1)), AddV2(t, inner[1], c)};
      });
  return out.empty() ? Output() : out[1];
}

}  // namespace testing_builder
}  // namespace weft

#endif  // WEFT_TESTS_BUILDER_LOOP_GRAPHS_H_
