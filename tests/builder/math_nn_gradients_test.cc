// Numeric checks (grad_check.h) of the gradients of BatchMatMulV2, the
// activations, ClipByValue, Div/DivNoNan/Abs, L2Loss, the dense softmax
// cross-entropy, the Max/Min/Prod reductions, the Cumsum/Cumprod scans and
// Einsum.
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/nn_ops.h"
#include "gtest/gtest.h"
#include "tests/builder/grad_check.h"

namespace weft {
namespace {

using testing_builder::Check;
using testing_builder::Range;
using testing_builder::S;
using testing_builder::X;

TEST(MathNnGradientsTest, BatchMatMulV2AllAdjoints) {
  for (bool ax : {false, true}) {
    for (bool ay : {false, true}) {
      TensorShape a = ax ? TensorShape({2, 3, 2}) : TensorShape({2, 2, 3});
      TensorShape b = ay ? TensorShape({2, 4, 3}) : TensorShape({2, 3, 4});
      Check({a, b}, [ax, ay](S s, X x) {
        Output m = BatchMatMulV2(s, x[0], x[1], ax, ay);
        return Mul(s, m, m);
      });
    }
  }
}

TEST(MathNnGradientsTest, Einsum) {
  const struct {
    const char* equation;
    std::vector<TensorShape> shapes;
  } cases[] = {
      {"abc,cd->abd", {{2, 3, 4}, {4, 5}}},
      {"aecd,abcd->acbe", {{2, 3, 2, 2}, {2, 4, 2, 2}}},
      {"i,j->ij", {{3}, {4}}},
      {"abc,abd->cd", {{2, 3, 2}, {2, 3, 4}}},
      {"ijk->kij", {{2, 3, 4}}},
  };
  for (const auto& c : cases) {
    Check(c.shapes, [&](S s, X x) {
      std::vector<Output> operands(x.begin(), x.end());
      Output y = AddNode1(s, "Einsum", {Input(operands)},
                          {{"equation", Attr(c.equation)}});
      return Mul(s, y, y);
    });
  }
}

TEST(MathNnGradientsTest, BatchMatMulV2Broadcasting) {
  // x's batch [2, 1] against y's [3]: both gradients sum over the copies.
  Check({{2, 1, 2, 3}, {3, 3, 2}}, [](S s, X x) {
    Output m = BatchMatMulV2(s, x[0], x[1]);
    return Mul(s, m, m);
  });
  Check({{2, 3}, {2, 3, 2}}, [](S s, X x) {  // a plain matrix times a batch
    Output m = BatchMatMulV2(s, x[0], x[1]);
    return Mul(s, m, m);
  });
  Check({{2, 3}, {3, 2}}, [](S s, X x) {  // no batch dims at all
    Output m = BatchMatMulV2(s, x[0], x[1], false, false);
    return Mul(s, m, m);
  });
}

// x scaled by 5 so the values (|x| in [0.2, 1.5]) cross Relu6's cap.
TEST(MathNnGradientsTest, Activations) {
  for (const char* op : {"Relu6", "Elu", "Selu", "Softplus", "Softsign"}) {
    Check({{2, 3}}, [op](S s, X x) {
      Output y = AddNode1(s, op, {Mul(s, x[0], Const(s, 5.0))});
      return Mul(s, y, x[0]);
    });
  }
  Check({{2, 3}}, [](S s, X x) {
    Output y = AddNode1(s, "LeakyRelu", {x[0]}, {{"alpha", Attr(0.3f)}});
    return Mul(s, y, x[0]);
  });
}

TEST(MathNnGradientsTest, ClipByValue) {
  Check({{2, 3}, {}, {}}, [](S s, X x) {  // scalar bounds
    Output lo = Neg(s, Square(s, x[1])), hi = Square(s, x[2]);
    return Square(s, AddNode1(s, "ClipByValue", {x[0], lo, hi}));
  });
  Check({{2, 3}, {2, 3}, {2, 3}}, [](S s, X x) {  // elementwise bounds
    Output lo = Neg(s, Square(s, x[1])), hi = Square(s, x[2]);
    return Square(s, AddNode1(s, "ClipByValue", {x[0], lo, hi}));
  });
}

void CheckBinary(const char* op, Range range) {
  auto f = [op](S s, X x) { return AddNode1(s, op, {x[0], x[1]}); };
  Check({{2, 3}, {2, 3}}, f, range);
  Check({{2, 3}, {3}}, f, range);
  Check({{}, {2, 3}}, f, range);
}

TEST(MathNnGradientsTest, DivAndDivNoNan) {
  CheckBinary("Div", Range::kSigned);
  CheckBinary("DivNoNan", Range::kSigned);
}

TEST(MathNnGradientsTest, DivNoNanHasNoGradientWhereYIsZero) {
  Scope root = Scope::NewRoot();
  Output x = Const(root, {1.0, 2.0}), y = Const(root, {0.0, 4.0});
  Output z = AddNode1(root, "DivNoNan", {x, y});
  std::vector<Output> grads;
  ASSERT_TRUE(AddGradients(root, {z}, {x, y}, {}, &grads).ok());
  auto out = testing_builder::RunGraph(root, {}, grads);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(testing_builder::Values((*out)[0]),
            (std::vector<double>{0, 0.25}));
  EXPECT_EQ(testing_builder::Values((*out)[1]),
            (std::vector<double>{0, -2.0 / 16}));
}

TEST(MathNnGradientsTest, AbsAndL2Loss) {
  Check({{2, 3}}, [](S s, X x) { return Mul(s, Abs(s, x[0]), x[0]); });
  Check({{2, 3}}, [](S s, X x) {
    return Square(s, AddNode1(s, "L2Loss", {x[0]}));
  });
}

TEST(MathNnGradientsTest, SoftmaxCrossEntropyWithLogits) {
  // Through both outputs, to the logits and to the (dense) labels, which
  // must be distributions (backprop is the logits' gradient only then).
  Check({{3, 4}, {3, 4}}, [](S s, X x) {
    std::vector<Output> o = AddNode(s, "SoftmaxCrossEntropyWithLogits",
                                    {x[0], Softmax(s, x[1])});
    if (o.size() != 2) return Output();
    return AddV2(s, Square(s, o[0]), Sum(s, Mul(s, o[1], x[0]), Const(s, 1)));
  });
}

TEST(MathNnGradientsTest, SparseSoftmaxCrossEntropyBackpropOutput) {
  Check({{3, 4}}, [](S s, X x) {
    Output labels = Const(s, {2, 0, 3});
    SoftmaxXent o = SparseSoftmaxCrossEntropyWithLogits(s, x[0], labels);
    return Mul(s, o.backprop, x[0]);
  });
}

TEST(MathNnGradientsTest, MaxMinProd) {
  for (auto op : {Max, Min, Prod}) {
    for (int axis : {0, 1, -1}) {
      for (bool keep : {false, true}) {
        Check({{2, 3}}, [op, axis, keep](S s, X x) {
          return Square(s, op(s, x[0], Const(s, axis), keep));
        });
      }
    }
    Check({{2, 3, 2}}, [op](S s, X x) {
      return Square(s, op(s, x[0], Const(s, {0, 2}), false));
    });
  }
}

TEST(MathNnGradientsTest, ReductionsOfAScalar) {
  for (auto op : {Sum, Mean, Max, Min, Prod}) {
    Check({{}}, [op](S s, X x) {
      Output none = Const(s, std::vector<int32_t>{}, TensorShape({0}));
      return Square(s, op(s, Mul(s, x[0], x[0]), none, false));
    });
  }
}

TEST(MathNnGradientsTest, MaxTiesShareTheGradient) {
  Scope root = Scope::NewRoot();
  Output x = Const(root, {3.f, 1.f, 3.f});
  std::vector<Output> grads;
  ASSERT_TRUE(
      AddGradients(root, {Max(root, x, Const(root, 0))}, {x}, {}, &grads).ok());
  auto out = testing_builder::RunGraph(root, {}, grads);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(testing_builder::Values((*out)[0]),
            (std::vector<double>{0.5, 0, 0.5}));
}

TEST(MathNnGradientsTest, CumsumAndCumprod) {
  for (const char* op : {"Cumsum", "Cumprod"}) {
    for (int axis : {0, 1}) {
      for (bool exclusive : {false, true}) {
        for (bool reverse : {false, true}) {
          Check({{3, 4}}, [=](S s, X x) {
            Output c = AddNode1(s, op, {x[0], Const(s, axis)},
                                {{"exclusive", Attr(exclusive)},
                                 {"reverse", Attr(reverse)}});
            return Mul(s, c, x[0]);
          });
        }
      }
    }
  }
}

}  // namespace
}  // namespace weft
