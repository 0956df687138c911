// Numeric gradient checks for the graph builder's gradient functions:
// d(sum y)/dx from AddGradients against central differences, in double
// where the kernels have it, else in float with a loose tolerance.
//
//   Check({{2, 3}, {3}}, [](S s, X x) { return Mul(s, x[0], x[1]); });
#ifndef WEFT_TESTS_BUILDER_GRAD_CHECK_H_
#define WEFT_TESTS_BUILDER_GRAD_CHECK_H_

#include <cmath>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "graph/builder/array_ops.h"
#include "graph/builder/gradients.h"
#include "gtest/gtest.h"
#include "runtime/core/status.h"
#include "tests/builder/builder_test_util.h"

namespace weft {
namespace testing_builder {

enum class Range { kSigned, kPositive };

// Builds y = f(xs) from placeholders of the given shapes.
using BuildFn = std::function<Output(const Scope&, const std::vector<Output>&)>;

inline std::vector<double> RandomValues(int64_t n, Range range, std::mt19937* rng) {
  std::uniform_real_distribution<double> mag(0.2, 1.5);
  std::bernoulli_distribution sign(0.5);
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) {
    double x = mag(*rng);
    if (range == Range::kSigned && sign(*rng)) x = -x;
    v.push_back(x);
  }
  return v;
}

// Checks d(sum y)/dx for each x against central differences. Returns an
// error if the graph does not run in `dtype`.
inline absl::Status CheckIn(DataType dtype, const std::vector<TensorShape>& shapes,
                     const BuildFn& f, Range range) {
  Scope root = Scope::NewRoot();
  std::vector<Output> xs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    xs.push_back(Placeholder(root.WithOpName("x"), dtype));
  }
  Output y = f(root, xs);
  std::vector<Output> grads;
  absl::Status st = AddGradients(root, {y}, xs, {}, &grads);
  if (!st.ok()) return st;
  auto session = SessionFor(root);
  if (!session.ok()) return session.status();
  std::mt19937 rng(42);
  std::vector<std::vector<double>> values;
  for (const TensorShape& s : shapes) {
    values.push_back(RandomValues(s.num_elements(), range, &rng));
  }
  auto feeds = [&](const std::vector<std::vector<double>>& v) {
    std::vector<std::pair<std::string, Tensor>> out;
    for (size_t i = 0; i < shapes.size(); ++i) {
      out.push_back({xs[i].name(), MakeTensor(dtype, shapes[i], v[i])});
    }
    return out;
  };
  std::vector<std::string> grad_names;
  for (const Output& g : grads) grad_names.push_back(g.name());
  std::vector<Tensor> analytic;
  WEFT_RETURN_IF_ERROR((*session)->Run(feeds(values), grad_names, {}, &analytic));
  auto total = [&](const std::vector<std::vector<double>>& v,
                   double* out) -> absl::Status {
    std::vector<Tensor> ys;
    WEFT_RETURN_IF_ERROR((*session)->Run(feeds(v), {y.name()}, {}, &ys));
    *out = 0;
    for (double e : Values(ys[0])) *out += e;
    return absl::OkStatus();
  };
  const bool dbl = dtype == DT_DOUBLE;
  const double h = dbl ? 1e-6 : 1e-3, tol = dbl ? 1e-5 : 3e-2;
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<double> got = Values(analytic[i]);
    EXPECT_EQ(analytic[i].shape(), shapes[i]) << "x" << i;
    for (size_t k = 0; k < values[i].size(); ++k) {
      auto v = values;
      v[i][k] += h;
      double plus, minus;
      WEFT_RETURN_IF_ERROR(total(v, &plus));
      v[i][k] -= 2 * h;
      WEFT_RETURN_IF_ERROR(total(v, &minus));
      double numeric = (plus - minus) / (2 * h);
      EXPECT_NEAR(got[k], numeric, tol * (1 + std::fabs(numeric)))
          << "x" << i << "[" << k << "] in " << DataTypeString(dtype);
    }
  }
  return absl::OkStatus();
}

// Tries double first; falls back to float if a kernel lacks double.
inline void Check(const std::vector<TensorShape>& shapes, const BuildFn& f,
           Range range = Range::kSigned) {
  absl::Status st = CheckIn(DT_DOUBLE, shapes, f, range);
  if (!st.ok()) {
    std::cout << "not checkable in double (" << st.message()
              << "); checking in float\n";
    st = CheckIn(DT_FLOAT, shapes, f, range);
  }
  EXPECT_TRUE(st.ok()) << st;
}


using X = const std::vector<Output>&;
using S = const Scope&;

}  // namespace testing_builder
}  // namespace weft

#endif  // WEFT_TESTS_BUILDER_GRAD_CHECK_H_
