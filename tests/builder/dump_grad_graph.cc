// Builds one graph that uses every op whose gradient the builder gained
// with the gradient registry's second batch (StridedSlice, GatherV2,
// BatchMatMulV2, the activations, ClipByValue, scans, Pad, Split, the
// reductions, the dense cross-entropy, ...), sums them into "loss", adds
// Weft's symbolic gradients, and writes the GraphDef and Weft's values in
// dump_mlp_graph's format (argv[1], argv[2]). tf_compare_test.py then runs
// the graph in TensorFlow and checks Weft's gradients against
// tf.gradients.
#include <cmath>
#include <iostream>

#include "graph/builder/array_ops.h"
#include "graph/builder/gradients.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "tests/builder/dump_graph_values.h"

namespace weft {
namespace {

// Distinct, deterministic values in about [-1.3, 1.3] (no ties).
Output Wavy(const Scope& s, const char* name, const TensorShape& shape,
              double phase) {
  std::vector<float> v;
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    v.push_back(static_cast<float>(1.3 * std::sin(1.7 * i + phase) +
                                   0.01 * i));
  }
  return Const(s.WithOpName(name), v, shape);
}

Output Vec(const Scope& s, std::vector<int32_t> v) {
  return Const(s, v, TensorShape({static_cast<int64_t>(v.size())}));
}

Output Total(const Scope& s, const Output& t) {
  // sum(t * t) over every dim: a non-trivial weight per element.
  Output sq = Mul(s, t, t);
  return Sum(s, sq, AddNode1(s, "Range", {Const(s, 0), AddNode1(s, "Rank", {sq}),
                                          Const(s, 1)}));
}

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: dump_grad_graph GRAPH_OUT VALUES_OUT\n";
    return 2;
  }
  Scope root = Scope::NewRoot();
  Output x = Wavy(root, "x", {3, 4}, 0.3);
  Output batch = Wavy(root, "batch", {2, 3, 4}, 1.1);
  Output w = Wavy(root, "w", {4, 5}, 2.0);
  Output row = Wavy(root, "row", {4}, 0.7);
  Output lo = Const(root.WithOpName("lo"), -0.6f);
  Output hi = Const(root.WithOpName("hi"), 0.8f);
  Output label_logits = Wavy(root, "label_logits", {3, 4}, 2.9);
  Scope s = root.NewSubScope("terms");
  std::vector<Output> terms;
  auto add = [&](const Output& t) { terms.push_back(Total(s, t)); };
  add(AddNode1(s, "StridedSlice",
               {x, Vec(s, {0, 3}), Vec(s, {3, 0}), Vec(s, {1, -2})}));
  add(GatherV2(s, Mul(s, x, x), Const(s, {2, 0, 2}), Const(s, 0)));
  add(GatherV2(s, batch, Const(s, {{1, 3}, {0, 0}}), Const(s, -1)));
  add(BatchMatMulV2(s, batch, w));
  add(BatchMatMulV2(s, batch, batch, /*adj_x=*/true, /*adj_y=*/false));
  for (const char* op : {"Relu6", "Elu", "Selu", "Softplus", "Softsign"}) {
    add(AddNode1(s, op, {Mul(s, x, Const(s, 5.f))}));
  }
  add(AddNode1(s, "LeakyRelu", {x}, {{"alpha", Attr(0.3f)}}));
  add(AddNode1(s, "ClipByValue", {x, lo, hi}));
  add(AddNode1(s, "Cumsum", {x, Const(s, 1)},
               {{"exclusive", Attr(true)}, {"reverse", Attr(true)}}));
  add(AddNode1(s, "Cumprod", {x, Const(s, 0)}));
  add(Pad(s, x, Const(s, {{1, 0}, {0, 2}})));
  std::vector<Output> parts = AddNode(s, "SplitV",
      {batch, Const(s, {1, 3}), Const(s, 2)}, {{"num_split", Attr(2)}});
  if (parts.size() == 2) add(Mul(s, parts[0], Const(s, 3.f)));
  parts = AddNode(s, "Split", {Const(s, 1), x}, {{"num_split", Attr(2)}});
  if (parts.size() == 2) add(Exp(s, parts[1]));
  add(AddNode1(s, "BroadcastTo", {row, Const(s, {3, 4})}));
  std::vector<Output> xent = AddNode(s, "SoftmaxCrossEntropyWithLogits",
                                     {x, Softmax(s, label_logits)});
  if (xent.size() == 2) add(xent[0]);
  add(AddNode1(s, "L2Loss", {w}));
  add(AddNode1(s, "DivNoNan", {x, AddV2(s, Abs(s, row), Const(s, 0.5f))}));
  add(Abs(s, Sub(s, x, row)));
  for (auto reduce : {Max, Min, Prod}) {
    add(reduce(s, batch, Const(s, {0, 2}), false));
  }
  add(Max(s, x, Const(s, -1), true));
  add(Transpose(s, batch, Const(s, {2, 0, 1})));
  Output loss = AddN(root.WithOpName("loss"), terms);
  const std::vector<Output> xs = {x, batch, w, row, lo, hi, label_logits};
  std::vector<Output> grads;
  absl::Status st = AddGradients(root, {loss}, xs, {}, &grads);
  if (!st.ok()) {
    std::cerr << "error: " << st << "\n";
    return 1;
  }
  return testing_builder::DumpGraphAndValues(root, {loss}, xs, grads, argv[1],
                                             argv[2]);
}

}  // namespace
}  // namespace weft

int main(int argc, char** argv) { return weft::Main(argc, argv); }
