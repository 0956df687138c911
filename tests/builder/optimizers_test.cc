// Optimizers on a tiny problem, loss = sum((w - t)^2), checked against the
// update rules written out by hand; graph layout (slots, names, global step)
// and errors.
#include "graph/builder/optimizers.h"

#include <cmath>
#include <memory>

#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "tests/builder/builder_test_util.h"

namespace weft {
namespace {

using testing_builder::SessionFor;
using testing_builder::Values;

struct Problem {
  Scope root = Scope::NewRoot();
  TrainableVariable w, unused, step;
  Output loss;
  Operation train;
};

// w starts at {1, -2}; target {3, 3}; gradient 2 (w - t).
void Build(Problem* p, Optimizer* opt, VariableKind kind) {
  p->w = NewTrainableVariable(p->root.WithOpName("w"), {2}, DT_FLOAT,
                              Const(p->root, {1.f, -2.f}), kind);
  p->unused = NewTrainableVariable(p->root.WithOpName("unused"), {1},
                                   DT_FLOAT, Const(p->root, {5.f}), kind);
  p->step = NewGlobalStep(p->root, kind);
  p->loss = Sum(p->root, Square(p->root, Sub(p->root, p->w.value,
                                             Const(p->root, {3.f, 3.f}))),
                Const(p->root, 0));
  auto train = opt->Minimize(p->root, p->loss, {p->w, p->unused}, &p->step);
  ASSERT_TRUE(train.ok()) << train.status();
  p->train = *train;
}

// Runs init and `steps` updates; returns w, unused and the global step.
void Train(Problem* p, Optimizer* opt, int steps, std::vector<double>* w,
           double* unused, int64_t* step) {
  auto session = SessionFor(p->root);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<std::string> init = {p->w.initializer.node,
                                   p->unused.initializer.node,
                                   p->step.initializer.node};
  for (const Operation& op : opt->initializers()) init.push_back(op.node);
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({}, {}, init, &out).ok());
  for (int i = 0; i < steps; ++i) {
    absl::Status st = (*session)->Run({}, {}, {p->train.node}, &out);
    ASSERT_TRUE(st.ok()) << st;
  }
  ASSERT_TRUE((*session)
                  ->Run({}, {p->w.value.name(), p->unused.value.name(),
                             p->step.value.name()},
                        {}, &out)
                  .ok());
  *w = Values(out[0]);
  *unused = Values(out[1])[0];
  *step = out[2].flat<int64_t>()[0];
}

// The same rules in double, by hand.
std::vector<double> Expected(const std::string& name, int steps) {
  std::vector<double> w = {1, -2}, m = {0, 0}, v = {0, 0};
  double b1p = 0.9, b2p = 0.999;
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < 2; ++i) {
      const double g = 2 * (w[i] - 3);
      if (name == "sgd") {
        w[i] -= 0.1 * g;
      } else if (name == "momentum") {
        m[i] = 0.9 * m[i] + g;
        w[i] -= 0.1 * m[i];
      } else if (name == "nesterov") {
        m[i] = 0.9 * m[i] + g;
        w[i] -= 0.1 * (g + 0.9 * m[i]);
      } else {  // adam
        m[i] = 0.9 * m[i] + 0.1 * g;
        v[i] = 0.999 * v[i] + 0.001 * g * g;
        const double lr = 0.1 * std::sqrt(1 - b2p) / (1 - b1p);
        w[i] -= lr * m[i] / (std::sqrt(v[i]) + 1e-8);
      }
    }
    b1p *= 0.9;
    b2p *= 0.999;
  }
  return w;
}

TEST(OptimizersTest, UpdateRulesForBothVariableKinds) {
  for (const char* name : {"sgd", "momentum", "nesterov", "adam"}) {
    for (VariableKind kind : {VariableKind::kRef, VariableKind::kResource}) {
      auto opt = NewOptimizerByName(name, 0.1f);
      ASSERT_TRUE(opt.ok());
      Problem p;
      Build(&p, opt->get(), kind);
      std::vector<double> w;
      double unused = 0;
      int64_t step = 0;
      Train(&p, opt->get(), 4, &w, &unused, &step);
      std::vector<double> want = Expected(name, 4);
      ASSERT_EQ(w.size(), 2u);
      for (int i = 0; i < 2; ++i) {
        EXPECT_NEAR(w[i], want[i], 1e-4 * (1 + std::fabs(want[i])))
            << name << " w[" << i << "]";
      }
      EXPECT_EQ(unused, 5.0) << name << ": a variable the loss ignores";
      EXPECT_EQ(step, 4) << name;
    }
  }
}

TEST(OptimizersTest, GraphLayoutFollowsTensorFlow) {
  auto opt = NewOptimizerByName("adam", 0.1f);
  ASSERT_TRUE(opt.ok());
  Problem p;
  Build(&p, opt->get(), VariableKind::kRef);
  for (const char* node : {"w/Adam", "w/Adam_1", "unused/Adam", "beta1_power",
                           "beta2_power", "Adam/update_w/ApplyAdam", "Adam",
                           "Adam/update"}) {
    EXPECT_NE(p.root.FindNode(node), nullptr) << node;
  }
  EXPECT_EQ(p.train.node, "Adam");
  EXPECT_EQ(p.root.FindNode("Adam")->op(), "AssignAdd");
  ASSERT_NE((*opt)->slot("w", "m"), nullptr);
  EXPECT_EQ((*opt)->slot("w", "m")->name, "w/Adam");
  EXPECT_EQ((*opt)->initializers().size(), 6u);  // 2 powers + 2 x 2 slots

  // A second ApplyGradients reuses the slots, in a new name scope.
  auto gvs = (*opt)->ComputeGradients(p.root, p.loss, {p.w});
  ASSERT_TRUE(gvs.ok());
  auto again = (*opt)->ApplyGradients(p.root, *gvs);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->node, "Adam_1");
  EXPECT_EQ(p.root.FindNode("Adam_1")->op(), "NoOp");  // no global step
  EXPECT_EQ((*opt)->initializers().size(), 6u);
}

TEST(OptimizersTest, Errors) {
  auto opt = NewOptimizerByName("sgd", 0.1f);
  ASSERT_TRUE(opt.ok());
  Scope root = Scope::NewRoot();
  EXPECT_EQ((*opt)->ApplyGradients(root, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  TrainableVariable w = NewTrainableVariable(
      root.WithOpName("w"), {1}, DT_FLOAT, Const(root, {1.f}),
      VariableKind::kResource);
  auto bad = (*opt)->ApplyGradients(root, {{Const(root, {1.0}), w}});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'w'"), std::string::npos)
      << bad.status();
  VariableKind kind;
  EXPECT_FALSE(ParseVariableKind("mirrored", &kind).ok());
}

}  // namespace
}  // namespace weft
