// Builds a graph with conds (both branches taken) and while loops (x^n by
// repeated multiplication, a tanh(h W + b) recurrence whose gradient needs
// stacked forward values, a cond inside a loop, a loop inside a cond,
// nested loops, a loop in a cond in a loop),
// sums them into "loss", adds Weft's
// gradients of the loss, and writes the GraphDef and Weft's values of the
// forward results and the gradients (argv[1], argv[2];
// dump_graph_values.h). tf_compare_test.py then runs the same GraphDef in
// TensorFlow, which must load it (v1 control flow, stacks) and compute the
// same numbers.
#include <cmath>
#include <iostream>

#include "graph/builder/array_ops.h"
#include "graph/builder/control_flow.h"
#include "graph/builder/gradients.h"
#include "graph/builder/math_ops.h"
#include "tests/builder/dump_graph_values.h"
#include "tests/builder/loop_graphs.h"

namespace weft {
namespace {

using Outs = std::vector<Output>;

Output Wavy(const Scope& s, const char* name, const TensorShape& shape,
            double phase, double scale) {
  std::vector<float> v;
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    v.push_back(static_cast<float>(scale * std::sin(1.7 * i + phase)));
  }
  return Const(s.WithOpName(name), v, shape);
}

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: dump_control_flow_graph GRAPH_OUT VALUES_OUT\n";
    return 2;
  }
  Scope root = Scope::NewRoot();
  Output x = Wavy(root, "x", {3}, 0.3, 1.2);
  Output h0 = Wavy(root, "h0", {2, 3}, 1.1, 0.8);
  Output w = Wavy(root, "w", {3, 3}, 2.0, 0.6);
  Output b = Wavy(root, "b", {3}, 0.7, 0.2);
  std::vector<Output> terms, fetches;
  for (bool p : {true, false}) {
    Outs y = Cond(
        root, Const(root, p), {x},
        [&](const Scope& s, const Outs& in) {
          return Outs{Mul(s, Tanh(s, in[0]), b)};
        },
        [&](const Scope& s, const Outs& in) {
          return Outs{Sub(s, Mul(s, in[0], in[0]), Const(s, 1.f))};
        });
    if (y.empty()) break;
    fetches.push_back(y[0]);
    terms.push_back(testing_builder::SumOfSquares(root, y[0]));
  }
  Outs power = testing_builder::Power(root, OnesLike(root, x), x, 4);
  Output rnn = testing_builder::Rnn(root, h0, w, b, 3);
  if (power.size() == 2 && rnn.valid()) {
    fetches.push_back(power[1]);
    fetches.push_back(rnn);
    terms.push_back(testing_builder::SumOfSquares(root, power[1]));
    terms.push_back(testing_builder::SumOfSquares(root, rnn));
  }
  // A cond inside a loop (even iterations take one branch, odd ones the
  // other), and a loop inside a cond.
  Outs mixed = WhileLoop(
      root, {Const(root, 0), x},
      [](const Scope& s, const Outs& v) { return Less(s, v[0], Const(s, 4)); },
      [&](const Scope& s, const Outs& v) {
        Output even = Equal(
            s, AddNode1(s, "FloorMod", {v[0], Const(s, 2)}), Const(s, 0));
        Outs y = Cond(
            s, even, {v[1]},
            [&](const Scope& t, const Outs& in) {
              return Outs{Tanh(t, Mul(t, in[0], b))};
            },
            [&](const Scope& t, const Outs& in) {
              return Outs{Sub(t, Mul(t, in[0], in[0]), b)};
            });
        if (y.empty()) return Outs();
        return Outs{AddV2(s, v[0], Const(s, 1)), y[0]};
      });
  Outs looped_branch = Cond(
      root, Const(root, true), {x},
      [&](const Scope& s, const Outs& in) {
        Outs p = WhileLoop(
            s, {Const(s, 0), in[0]},
            [](const Scope& t, const Outs& v) {
              return Less(t, v[0], Const(t, 2));
            },
            [&](const Scope& t, const Outs& v) {
              return Outs{AddV2(t, v[0], Const(t, 1)), Mul(t, v[1], b)};
            });
        return p.empty() ? Outs() : Outs{p[1]};
      },
      [](const Scope& s, const Outs& in) { return Outs{Neg(s, in[0])}; });
  if (mixed.size() == 2 && looped_branch.size() == 1) {
    fetches.push_back(mixed[1]);
    fetches.push_back(looped_branch[0]);
    terms.push_back(testing_builder::SumOfSquares(root, mixed[1]));
    terms.push_back(testing_builder::SumOfSquares(root, looped_branch[0]));
  }
  // Nested loops: outer iteration i runs the inner loop i + 1 times.
  Output nested = testing_builder::NestedLoops(root, x, b, x);
  // A loop in a cond in a loop: only odd outer iterations run the inner one.
  Outs deep = WhileLoop(
      root, {Const(root, 0), x},
      [](const Scope& s, const Outs& v) { return Less(s, v[0], Const(s, 4)); },
      [&](const Scope& s, const Outs& v) {
        Output odd = Equal(
            s, AddNode1(s, "FloorMod", {v[0], Const(s, 2)}), Const(s, 1));
        Outs y = Cond(
            s, odd, {v[1]},
            [&](const Scope& t, const Outs& in) {
              Outs inner = WhileLoop(
                  t, {Const(t, 0), in[0]},
                  [](const Scope& u, const Outs& iv) {
                    return Less(u, iv[0], Const(u, 2));
                  },
                  [&](const Scope& u, const Outs& iv) {
                    return Outs{AddV2(u, iv[0], Const(u, 1)),
                                Tanh(u, Mul(u, iv[1], b))};
                  });
              return inner.empty() ? Outs() : Outs{inner[1]};
            },
            [&](const Scope& t, const Outs& in) {
              return Outs{Mul(t, in[0], b)};
            });
        if (y.empty()) return Outs();
        return Outs{AddV2(s, v[0], Const(s, 1)), y[0]};
      });
  if (nested.valid() && deep.size() == 2) {
    fetches.push_back(nested);
    fetches.push_back(deep[1]);
    terms.push_back(testing_builder::SumOfSquares(root, nested));
    terms.push_back(testing_builder::SumOfSquares(root, deep[1]));
  }
  Output loss = AddN(root.WithOpName("loss"), terms);
  std::vector<Output> grads;
  if (!AddGradients(root, {loss}, {x, h0, w, b}, {}, &grads).ok()) {
    std::cerr << "error: " << root.status() << "\n";
    return 1;
  }
  fetches.insert(fetches.begin(), loss);
  fetches.insert(fetches.end(), grads.begin(), grads.end());
  // No "grad" lines: TensorFlow cannot take tf.gradients through a loop of
  // an imported GraphDef (it has no while context for it), so the check is
  // that TensorFlow runs Weft's gradient graph to the same values.
  return testing_builder::DumpGraphAndValues(root, fetches, {}, {}, argv[1],
                                             argv[2]);
}

}  // namespace
}  // namespace weft

int main(int argc, char** argv) { return weft::Main(argc, argv); }
