// Builds a small MLP (forward, loss and gradients) with the graph builder,
// writes its GraphDef (binary) to argv[1], runs it in Weft and writes the
// fetched values to argv[2], one line per fetch: "name v0 v1 ...".
// tf_compare_test.py runs the same GraphDef in TensorFlow and compares.
#include <iostream>

#include "graph/builder/array_ops.h"
#include "graph/builder/gradients.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "tests/builder/dump_graph_values.h"

namespace weft {
namespace {

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: dump_mlp_graph GRAPH_OUT VALUES_OUT\n";
    return 2;
  }
  Scope root = Scope::NewRoot();
  Output x = Const(root.WithOpName("x"),
                   {{0.5f, -1.f, 2.f}, {1.f, 0.25f, -0.5f},
                    {-1.5f, 1.f, 0.f}, {0.3f, 0.7f, -0.2f}});
  Output labels = Const(root.WithOpName("labels"),
                        {int64_t{0}, int64_t{1}, int64_t{1}, int64_t{0}});
  Scope l1 = root.NewSubScope("layer1");
  Output w1 = Const(l1.WithOpName("w"), {{0.1f, -0.2f, 0.3f, 0.4f},
                                         {-0.5f, 0.6f, 0.7f, -0.8f},
                                         {0.9f, 0.1f, -0.3f, 0.2f}});
  Output b1 = Const(l1.WithOpName("b"), {0.01f, -0.02f, 0.03f, 0.f});
  Output h = Tanh(l1, BiasAdd(l1, MatMul(l1, x, w1), b1));
  Scope l2 = root.NewSubScope("layer2");
  Output w2 = Const(l2.WithOpName("w"),
                    {{0.3f, -0.1f}, {0.2f, 0.5f}, {-0.4f, 0.1f}, {0.6f, -0.7f}});
  Output b2 = Const(l2.WithOpName("b"), {0.1f, -0.1f});
  Output logits = BiasAdd(l2, MatMul(l2, Relu(l2, h), w2), b2);
  Output xent = SparseSoftmaxCrossEntropyWithLogits(root, logits, labels).loss;
  Output reg = Mul(root, Const(root, 0.01f), Sum(root, Square(root, w1),
                                                  Const(root, {0, 1})));
  Output loss = AddV2(root.WithOpName("loss"),
                      Mean(root, xent, Const(root, 0)), reg);
  Output probs = Softmax(root.WithOpName("probs"), logits);
  std::vector<Output> grads;
  const std::vector<Output> xs = {w1, b1, w2, b2};
  absl::Status st = AddGradients(root, {loss}, xs, {}, &grads);
  if (!st.ok()) {
    std::cerr << "error: " << st << "\n";
    return 1;
  }
  return testing_builder::DumpGraphAndValues(root, {loss, probs}, xs, grads,
                                             argv[1], argv[2]);
}

}  // namespace
}  // namespace weft

int main(int argc, char** argv) { return weft::Main(argc, argv); }
