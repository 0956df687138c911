// For the dump_* binaries that tf_compare_test.py replays in TensorFlow:
// writes a built graph and the values Weft computes for it.
#ifndef WEFT_TESTS_BUILDER_DUMP_GRAPH_VALUES_H_
#define WEFT_TESTS_BUILDER_DUMP_GRAPH_VALUES_H_

#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/scope.h"
#include "runtime/session.h"

namespace weft {
namespace testing_builder {

// sum(t * t) over every dim: a scalar term with a distinct weight per
// element.
inline Output SumOfSquares(const Scope& s, const Output& t) {
  Output sq = Mul(s, t, t);
  return Sum(s, sq, AddNode1(s, "Range", {Const(s, 0), AddNode1(s, "Rank", {sq}),
                                          Const(s, 1)}));
}

// Writes the scope's GraphDef (binary) to `graph_path`, runs `fetches`
// (float tensors; the gradients `grads` are fetched too) in Weft, and
// writes `values_path`: a line "grad X G Y" per gradient (G is Weft's
// gradient of Y, ys[i] or "loss" when ys is empty, with respect to X =
// xs[i]), then "name v0 v1 ..." per fetched tensor. Returns the exit code
// for main (errors are printed).
inline int DumpGraphAndValues(const Scope& root, std::vector<Output> fetches,
                              const std::vector<Output>& xs,
                              const std::vector<Output>& grads,
                              const char* graph_path, const char* values_path,
                              const std::vector<Output>& ys = {}) {
  absl::StatusOr<tensorflow::GraphDef> graph = root.ToGraphDef();
  if (!graph.ok()) {
    std::cerr << "error: " << graph.status() << "\n";
    return 1;
  }
  std::ofstream(graph_path, std::ios::binary) << graph->SerializeAsString();
  fetches.insert(fetches.end(), grads.begin(), grads.end());
  std::vector<std::string> names;
  for (const Output& o : fetches) names.push_back(o.name());
  std::unique_ptr<Session> session = NewLocalSession(SessionOptions());
  std::vector<Tensor> out;
  absl::Status st = session->Create(*graph);
  if (st.ok()) st = session->Run({}, names, {}, &out);
  if (!st.ok()) {
    std::cerr << "error: " << st << "\n";
    return 1;
  }
  std::ofstream values(values_path);
  for (size_t i = 0; i < xs.size() && i < grads.size(); ++i) {
    values << "grad " << xs[i].name() << " " << grads[i].name() << " "
           << (i < ys.size() ? ys[i].name() : std::string("loss:0")) << "\n";
  }
  values.precision(9);
  for (size_t i = 0; i < out.size(); ++i) {
    values << names[i];
    for (int64_t k = 0; k < out[i].NumElements(); ++k) {
      values << " " << out[i].flat<float>()[k];
    }
    values << "\n";
  }
  return 0;
}

}  // namespace testing_builder
}  // namespace weft

#endif  // WEFT_TESTS_BUILDER_DUMP_GRAPH_VALUES_H_
