// Scope, AddNode and the op wrappers: names, attrs, errors, and running the
// built graphs in a LocalSession.
#include "graph/builder/scope.h"

#include "absl/strings/match.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "graph/builder/state_ops.h"
#include "gtest/gtest.h"
#include "tests/builder/builder_test_util.h"

namespace weft {
namespace {

using testing_builder::RunGraph;
using testing_builder::Values;

TEST(ScopeTest, NamesAreScopedAndUnique) {
  Scope root = Scope::NewRoot();
  Output a = Const(root.WithOpName("a"), 1.f);
  Output a1 = Const(root.WithOpName("a"), 2.f);
  Output c = Const(root, 3.f);
  Scope layer = root.NewSubScope("layer1");
  Output m = MatMul(layer, Const(layer, {{1.f}}), Const(layer, {{2.f}}));
  Scope layer_again = root.NewSubScope("layer1");
  Output m2 = Add(layer_again, a, c);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(a.node, "a");
  EXPECT_EQ(a1.node, "a_1");
  EXPECT_EQ(c.node, "Const");
  EXPECT_EQ(m.node, "layer1/MatMul");
  EXPECT_EQ(m2.node, "layer1_1/Add");
  EXPECT_EQ(m.dtype, DT_FLOAT);
}

TEST(ScopeTest, DeviceControlDepsAndColocation) {
  Scope root = Scope::NewRoot();
  Output a = Const(root.WithOpName("a"), 1.f);
  Operation init = NoOp(root.WithOpName("init"));
  Output b = Identity(root.WithOpName("b")
                          .WithDevice("/device:CPU:1")
                          .WithControlDependencies({init})
                          .ColocateWith(a.op()),
                      a);
  ASSERT_TRUE(root.ok()) << root.status();
  const tensorflow::NodeDef* node = root.FindNode(b.node);
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->device(), "/device:CPU:1");
  ASSERT_EQ(node->input_size(), 2);
  EXPECT_EQ(node->input(0), "a");
  EXPECT_EQ(node->input(1), "^init");
  EXPECT_EQ(node->attr().at("_class").list().s(0), "loc:@a");
  EXPECT_EQ(node->attr().at("T").type(), DT_FLOAT);
}

TEST(ScopeTest, UnknownOpIsAnErrorNamingTheNode) {
  Scope root = Scope::NewRoot();
  Output x = AddNode1(root.WithOpName("bad"), "NoSuchOp", {});
  EXPECT_FALSE(x.valid());
  EXPECT_EQ(root.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(root.status().message(), "'bad'"))
      << root.status();
  EXPECT_FALSE(root.ToGraphDef().ok());
}

TEST(ScopeTest, WrongInputDtypeNamesTheNodeAndFirstErrorWins) {
  Scope root = Scope::NewRoot();
  Output f = Const(root, 1.f);
  Output i = Const(root, 2);
  Output bad = MatMul(root.WithOpName("mm"), Reshape(root, f, Const(root, {1, 1})),
                      Reshape(root, i, Const(root, {1, 1})));
  EXPECT_FALSE(bad.valid());
  absl::Status first = root.status();
  EXPECT_EQ(first.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(first.message(), "'mm'")) << first;
  EXPECT_TRUE(absl::StrContains(first.message(), "int32")) << first;
  // A node fed by the failed one fails too, but the first error stays.
  Output later = Relu(root, bad);
  EXPECT_FALSE(later.valid());
  EXPECT_EQ(root.status(), first);
}

TEST(ScopeTest, WrongNumberOfInputs) {
  Scope root = Scope::NewRoot();
  Output x = AddNode1(root.WithOpName("add"), "AddV2", {Const(root, 1.f)});
  EXPECT_FALSE(x.valid());
  EXPECT_TRUE(absl::StrContains(root.status().message(), "'add'"));
}

TEST(ScopeTest, RunsArithmetic) {
  Scope root = Scope::NewRoot();
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT, {2, 2});
  Output w = Const(root, {{1.f, 2.f}, {3.f, 4.f}});
  Output y = Relu(root, Sub(root, MatMul(root, x, w), Const(root, 5.f)));
  Output s = Sum(root, y, Const(root, {0, 1}));
  Output m = Mean(root, Softmax(root, w), Const(root, 1));
  Output am = ArgMax(root, w, Const(root, 1));
  Output cat = ConcatV2(root, {w, w}, Const(root, 0));
  Output t = Transpose(root, w, Const(root, {1, 0}));
  Output sh = Shape(root, cat);
  Output filled = Fill(root, Const(root, {2}), Const(root, 7.f));
  Output an = AddN(root, {w, w, OnesLike(root, w)});
  auto out = RunGraph(
      root,
      {{"x:0", testing_builder::MakeTensor(DT_FLOAT, {2, 2}, {1, 0, 0, 1})}},
      {y, s, m, am, t, sh, filled, an});
  ASSERT_TRUE(out.ok()) << out.status();
  // x = I: y = relu(w - 5) = 0 everywhere.
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(Values((*out)[1]), (std::vector<double>{0}));
  EXPECT_NEAR(Values((*out)[2])[0], 0.5, 1e-6);
  EXPECT_EQ((*out)[3].flat<int64_t>()[0], 1);
  EXPECT_EQ(Values((*out)[4]), (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ((*out)[5].flat<int32_t>()[0], 4);
  EXPECT_EQ(Values((*out)[6]), (std::vector<double>{7, 7}));
  EXPECT_EQ(Values((*out)[7]), (std::vector<double>{3, 5, 7, 9}));
}

TEST(ScopeTest, SparseSoftmaxCrossEntropy) {
  Scope root = Scope::NewRoot();
  SoftmaxXent xent = SparseSoftmaxCrossEntropyWithLogits(
      root, Const(root, {{0.f, 0.f}}), Const(root, {int64_t{1}}));
  auto out = RunGraph(root, {}, {xent.loss, xent.backprop});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR(Values((*out)[0])[0], std::log(2.0), 1e-6);
  EXPECT_NEAR(Values((*out)[1])[1], -0.5, 1e-6);
}

TEST(ScopeTest, Variables) {
  Scope root = Scope::NewRoot();
  Variable v = NewVariable(root.WithOpName("w"), {2}, DT_FLOAT,
                           Const(root, {1.f, 2.f}));
  ResourceVariable r = NewResourceVariable(root.WithOpName("r"), {2},
                                           DT_FLOAT, Const(root, {3.f, 4.f}));
  Output u = RandomUniform(root.WithOpName("u"), {3, 2}, DT_FLOAT, 1, 2);
  Output n = TruncatedNormal(root.WithOpName("n"), {5}, DT_FLOAT, 10.f, 0.1f);
  Output sum = Add(root, v.value, r.value);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(v.ref.node, "w");
  EXPECT_EQ(v.initializer.node, "w/Assign");
  EXPECT_EQ(v.value.node, "w/read");
  EXPECT_EQ(r.handle.node, "r");
  EXPECT_EQ(u.node, "u");
  EXPECT_EQ(n.node, "n");
  auto out = RunGraph(root, {}, {sum, u, n},
                      {v.initializer.node, r.initializer.node});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{4, 6}));
  EXPECT_EQ((*out)[1].shape(), TensorShape({3, 2}));
  for (double x : Values((*out)[1])) EXPECT_TRUE(x >= 0 && x < 1);
  for (double x : Values((*out)[2])) EXPECT_NEAR(x, 10.0, 0.25);
}

}  // namespace
}  // namespace weft
