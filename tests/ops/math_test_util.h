// Helpers shared by the math_* and nn_* kernel tests.
//
//   Tensor z = RunOk(Node("AddV2", DT_FLOAT), {x, y});
//   absl::Status s = RunStatus(Node("Div", DT_INT32), {x, zero});
//
// Values for checks come from independent reference loops in each test, or
// from TensorFlow 2.21 where a comment says so.
#ifndef WEFT_TESTS_OPS_MATH_TEST_UTIL_H_
#define WEFT_TESTS_OPS_MATH_TEST_UTIL_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"

namespace weft {
namespace testing_util {

// A node of `op` with attr T = dtype (the usual case).
inline NodeBuilder Node(const std::string& op, DataType dtype) {
  return NodeBuilder("n", op).Attr("T", dtype);
}

// Runs the node's CPU kernel; a failed run fails the test and returns {}.
inline std::vector<Tensor> RunAll(const NodeBuilder& node,
                                  const std::vector<Tensor>& inputs) {
  KernelRunner runner(node.Build());
  absl::StatusOr<std::vector<Tensor>> out = runner.Run(inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>();
}

// Output 0 of a successful run (an empty Tensor if it failed).
inline Tensor RunOk(const NodeBuilder& node, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out = RunAll(node, inputs);
  return out.empty() ? Tensor() : out[0];
}

inline absl::Status RunStatus(const NodeBuilder& node,
                              const std::vector<Tensor>& inputs) {
  KernelRunner runner(node.Build());
  return runner.Run(inputs).status();
}

// A tensor of `shape` with uniform values in [lo, hi) (integers for
// integer T), from a fixed seed.
template <typename T>
Tensor Random(const std::vector<int64_t>& shape, double lo, double hi,
              uint32_t seed = 1) {
  Tensor t(DataTypeToEnum<T>::value, TensorShape(shape));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    t.data<T>()[i] = static_cast<T>(dist(gen));
  }
  return t;
}

template <typename T>
Tensor Scalar(T v) {
  return Tensor::Scalar<T>(v);
}

}  // namespace testing_util
}  // namespace weft

#endif  // WEFT_TESTS_OPS_MATH_TEST_UTIL_H_
