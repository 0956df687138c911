// Helpers for the graph-builder tests: run a built graph, make tensors.
#ifndef WEFT_TESTS_BUILDER_BUILDER_TEST_UTIL_H_
#define WEFT_TESTS_BUILDER_BUILDER_TEST_UTIL_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/builder/scope.h"
#include "runtime/session.h"
#include "runtime/core/tensor.h"

namespace weft {
namespace testing_builder {

// A tensor of `dtype` (float or double) holding `values`.
inline Tensor MakeTensor(DataType dtype, const TensorShape& shape,
                         const std::vector<double>& values) {
  Tensor t(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DT_DOUBLE) {
      t.flat<double>()[i] = values[i];
    } else {
      t.flat<float>()[i] = static_cast<float>(values[i]);
    }
  }
  return t;
}

// Elements of a float or double tensor as doubles.
inline std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    v.push_back(t.dtype() == DT_DOUBLE ? t.flat<double>()[i]
                                       : t.flat<float>()[i]);
  }
  return v;
}

// Creates a session on the scope's graph.
inline absl::StatusOr<std::unique_ptr<Session>> SessionFor(const Scope& s) {
  absl::StatusOr<tensorflow::GraphDef> graph = s.ToGraphDef();
  if (!graph.ok()) return graph.status();
  SessionOptions options;
  options.config.set_inter_op_parallelism_threads(-1);
  std::unique_ptr<Session> session = NewLocalSession(options);
  absl::Status st = session->Create(*graph);
  if (!st.ok()) return st;
  return session;
}

// Runs the scope's graph once.
inline absl::StatusOr<std::vector<Tensor>> RunGraph(
    const Scope& s, const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<Output>& fetches,
    const std::vector<std::string>& targets = {}) {
  absl::StatusOr<std::unique_ptr<Session>> session = SessionFor(s);
  if (!session.ok()) return session.status();
  std::vector<std::string> names;
  for (const Output& o : fetches) names.push_back(o.name());
  std::vector<Tensor> out;
  if (!targets.empty()) {
    std::vector<Tensor> none;
    absl::Status st = (*session)->Run({}, {}, targets, &none);
    if (!st.ok()) return st;
  }
  absl::Status st = (*session)->Run(feeds, names, {}, &out);
  if (!st.ok()) return st;
  return out;
}

}  // namespace testing_builder
}  // namespace weft

#endif  // WEFT_TESTS_BUILDER_BUILDER_TEST_UTIL_H_
