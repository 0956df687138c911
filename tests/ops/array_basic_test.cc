// Const, Placeholder(WithDefault), Identity(N), StopGradient, Reshape,
// Shape, Size, Rank, ExpandDims, Squeeze, BroadcastGradientArgs.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "tests/ops/array_test_util.h"

namespace weft {
namespace {

using testing_util::RunOk;
using testing_util::RunStatus;
using testing_util::Scalar;
using testing_util::Strings;
using testing_util::Vec;

// ---- Const ------------------------------------------------------------------

TEST(ConstTest, OutputsItsValueWithoutCopying) {
  Tensor value = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  KernelRunner runner(
      NodeBuilder("c", "Const").Attr("dtype", DT_FLOAT).Attr("value", value).Build());
  auto a = runner.Run({});
  auto b = runner.Run({});
  ASSERT_TRUE(a.ok() && b.ok());
  ExpectTensorEqual(a->at(0), value);
  EXPECT_TRUE(a->at(0).SharesBufferWith(b->at(0)));  // one buffer, every step
}

TEST(ConstTest, StringsAndScalars) {
  Tensor s = Strings({2}, {"a", "bc"});
  auto out = RunOk(NodeBuilder("c", "Const").Attr("dtype", DT_STRING).Attr("value", s), {});
  ASSERT_EQ(out.size(), 1u);
  ExpectTensorEqual(out[0], s);
  out = RunOk(NodeBuilder("c", "Const").Attr("dtype", DT_BOOL).Attr("value", Scalar(true)), {});
  ExpectTensorEqual(out[0], Scalar(true));
}

TEST(ConstTest, DtypeMismatchIsAnError) {
  EXPECT_STATUS(RunStatus(NodeBuilder("c", "Const")
                              .Attr("dtype", DT_INT32)
                              .Attr("value", Scalar(1.5f)),
                          {}),
                absl::StatusCode::kInvalidArgument, "type mismatch");
}

// ---- Placeholder ------------------------------------------------------------

TEST(PlaceholderTest, UnfedFailsNamingDtypeAndShape) {
  EXPECT_STATUS(
      RunStatus(NodeBuilder("x", "Placeholder").Attr("dtype", DT_FLOAT).ShapeAttr("shape", {-1, 3}),
                {}),
      absl::StatusCode::kInvalidArgument,
      "You must feed a value for placeholder tensor 'x' with dtype float and shape [?,3]");
}

TEST(PlaceholderTest, UnknownShapeIsNotMentioned) {
  absl::Status s = RunStatus(NodeBuilder("p", "Placeholder").Attr("dtype", DT_INT64), {});
  EXPECT_STATUS(s, absl::StatusCode::kInvalidArgument,
                "placeholder tensor 'p' with dtype int64");
  EXPECT_FALSE(absl::StrContains(s.message(), "shape"));
}

TEST(PlaceholderWithDefaultTest, PassesTheDefaultThrough) {
  Tensor d = MakeTensor<int32_t>({3}, {1, 2, 3});
  auto out = RunOk(NodeBuilder("p", "PlaceholderWithDefault")
                       .Attr("dtype", DT_INT32)
                       .ShapeAttr("shape", {-1}),
                   {d});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].SharesBufferWith(d));
}

// ---- Identity family ----------------------------------------------------------

TEST(IdentityTest, AliasesEveryDtype) {
  for (const Tensor& t : {MakeTensor<float>({2}, {1, 2}), MakeTensor<double>({1}, {3}),
                          MakeTensor<int32_t>({0}, {}), Vec<int64_t>({7, 8}),
                          MakeTensor<bool>({2}, {true, false}), Strings({1}, {"s"})}) {
    for (const char* op : {"Identity", "StopGradient"}) {
      auto out = RunOk(NodeBuilder("i", op).Attr("T", t.dtype()), {t});
      ASSERT_EQ(out.size(), 1u);
      ExpectTensorEqual(out[0], t);
      if (t.NumElements() > 0) {
        EXPECT_TRUE(out[0].SharesBufferWith(t)) << op;
      }
    }
  }
}

TEST(IdentityTest, ReadsARefInput) {
  Tensor var = MakeTensor<float>({2}, {5, 6});
  KernelRunner runner(NodeBuilder("read", "Identity").Input("v").Attr("T", DT_FLOAT).Build());
  auto out = runner.RunWithRefInput(&var, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(out->at(0), var);
}

TEST(IdentityTest, UninitializedRefIsAFailedPrecondition) {
  Tensor var;  // never assigned
  KernelRunner runner(NodeBuilder("read", "Identity").Input("v").Attr("T", DT_FLOAT).Build());
  EXPECT_STATUS(runner.RunWithRefInput(&var, {}).status(),
                absl::StatusCode::kFailedPrecondition,
                "Attempting to use uninitialized value v");
}

TEST(IdentityNTest, ForwardsEachInput) {
  Tensor a = Vec<float>({1, 2});
  Tensor b = Strings({}, {"x"});
  auto out = RunOk(NodeBuilder("n", "IdentityN").Attr("T", DataTypeVector{DT_FLOAT, DT_STRING}),
                   {a, b});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensorEqual(out[0], a);
  ExpectTensorEqual(out[1], b);
}

// ---- Reshape ------------------------------------------------------------------

NodeBuilder Reshape(DataType t = DT_FLOAT) {
  return NodeBuilder("r", "Reshape").Attr("T", t);
}

TEST(ReshapeTest, InfersOneDimAndAliases) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = RunOk(Reshape(), {x, Vec<int32_t>({3, -1})});
  ASSERT_EQ(out.size(), 1u);
  ExpectTensorEqual(out[0], MakeTensor<float>({3, 2}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(out[0].SharesBufferWith(x));
  out = RunOk(Reshape().Attr("Tshape", DT_INT64), {x, Vec<int64_t>({-1})});
  EXPECT_EQ(out[0].shape().DebugString(), "[6]");
}

TEST(ReshapeTest, ScalarsAndEmptyTensors) {
  auto out = RunOk(Reshape(DT_INT32), {MakeTensor<int32_t>({1, 1}, {9}), Vec<int32_t>({})});
  ExpectTensorEqual(out[0], Scalar<int32_t>(9));
  out = RunOk(Reshape(), {MakeTensor<float>({0, 4}, {}), Vec<int32_t>({2, 0, 3})});
  EXPECT_EQ(out[0].shape().DebugString(), "[2,0,3]");
  EXPECT_STATUS(RunStatus(Reshape(), {MakeTensor<float>({0, 4}, {}), Vec<int32_t>({-1, 0})}),
                absl::StatusCode::kInvalidArgument, "cannot infer the missing input size");
}

TEST(ReshapeTest, MismatchNamesBothShapes) {
  EXPECT_STATUS(RunStatus(Reshape(), {MakeTensor<float>({2, 3}, {}), Vec<int32_t>({4})}),
                absl::StatusCode::kInvalidArgument,
                "tensor with shape [2,3] (6 values), but the requested shape [4] has 4");
  EXPECT_STATUS(RunStatus(Reshape(), {MakeTensor<float>({2, 3}, {}), Vec<int32_t>({4, -1})}),
                absl::StatusCode::kInvalidArgument, "requires a multiple of 4");
  EXPECT_STATUS(RunStatus(Reshape(), {MakeTensor<float>({6}, {}), Vec<int32_t>({-1, -1})}),
                absl::StatusCode::kInvalidArgument, "only one input size may be -1");
  EXPECT_STATUS(RunStatus(Reshape(), {MakeTensor<float>({6}, {}), Vec<int32_t>({-2, -3})}),
                absl::StatusCode::kInvalidArgument, "must be non-negative");
  EXPECT_STATUS(RunStatus(Reshape(), {MakeTensor<float>({6}, {}), MakeTensor<int32_t>({1, 1}, {6})}),
                absl::StatusCode::kInvalidArgument, "must be a vector");
}

// ---- Shape, Size, Rank ----------------------------------------------------------

TEST(ShapeTest, Int32AndInt64) {
  Tensor x = MakeTensor<float>({2, 0, 5}, {});
  auto out = RunOk(NodeBuilder("s", "Shape").Attr("T", DT_FLOAT), {x});
  ExpectTensorEqual(out[0], Vec<int32_t>({2, 0, 5}));
  out = RunOk(NodeBuilder("s", "Shape").Attr("T", DT_FLOAT).Attr("out_type", DT_INT64), {x});
  ExpectTensorEqual(out[0], Vec<int64_t>({2, 0, 5}));
  out = RunOk(NodeBuilder("s", "Shape").Attr("T", DT_STRING), {Strings({}, {"a"})});
  ExpectTensorEqual(out[0], Vec<int32_t>({}));
}

TEST(SizeRankTest, Counts) {
  Tensor x = MakeTensor<bool>({2, 3}, {});
  ExpectTensorEqual(RunOk(NodeBuilder("s", "Size").Attr("T", DT_BOOL), {x})[0],
                    Scalar<int32_t>(6));
  ExpectTensorEqual(
      RunOk(NodeBuilder("s", "Size").Attr("T", DT_BOOL).Attr("out_type", DT_INT64), {x})[0],
      Scalar<int64_t>(6));
  ExpectTensorEqual(RunOk(NodeBuilder("r", "Rank").Attr("T", DT_BOOL), {x})[0],
                    Scalar<int32_t>(2));
  ExpectTensorEqual(RunOk(NodeBuilder("r", "Rank").Attr("T", DT_FLOAT), {Scalar(1.0f)})[0],
                    Scalar<int32_t>(0));
  ExpectTensorEqual(RunOk(NodeBuilder("s", "Size").Attr("T", DT_FLOAT), {Scalar(1.0f)})[0],
                    Scalar<int32_t>(1));
}

// ---- ExpandDims, Squeeze --------------------------------------------------------

TEST(ExpandDimsTest, PositiveNegativeAndScalar) {
  Tensor x = MakeTensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto node = NodeBuilder("e", "ExpandDims").Attr("T", DT_INT64);
  EXPECT_EQ(RunOk(node, {x, Scalar<int32_t>(0)})[0].shape().DebugString(), "[1,2,3]");
  EXPECT_EQ(RunOk(node, {x, Scalar<int32_t>(-1)})[0].shape().DebugString(), "[2,3,1]");
  EXPECT_EQ(RunOk(node, {x, Scalar<int32_t>(-3)})[0].shape().DebugString(), "[1,2,3]");
  auto out = RunOk(node, {x, Vec<int32_t>({1})});  // a 1-element vector is accepted
  EXPECT_EQ(out[0].shape().DebugString(), "[2,1,3]");
  EXPECT_TRUE(out[0].SharesBufferWith(x));
  EXPECT_EQ(RunOk(node.Attr("Tdim", DT_INT64), {Scalar<int64_t>(5), Scalar<int64_t>(0)})[0]
                .shape()
                .DebugString(),
            "[1]");
  EXPECT_STATUS(RunStatus(NodeBuilder("e", "ExpandDims").Attr("T", DT_INT64),
                          {x, Scalar<int32_t>(3)}),
                absl::StatusCode::kInvalidArgument, "out of range");
  EXPECT_STATUS(RunStatus(NodeBuilder("e", "ExpandDims").Attr("T", DT_INT64),
                          {x, Vec<int32_t>({0, 1})}),
                absl::StatusCode::kInvalidArgument, "must be a scalar");
}

TEST(SqueezeTest, AllOrChosenDims) {
  Tensor x = MakeTensor<float>({1, 2, 1, 3, 1}, {1, 2, 3, 4, 5, 6});
  auto out = RunOk(NodeBuilder("s", "Squeeze").Attr("T", DT_FLOAT), {x});
  EXPECT_EQ(out[0].shape().DebugString(), "[2,3]");
  EXPECT_TRUE(out[0].SharesBufferWith(x));
  out = RunOk(NodeBuilder("s", "Squeeze").Attr("T", DT_FLOAT).Attr(
                  "squeeze_dims", std::vector<int64_t>{0, -1}),
              {x});
  EXPECT_EQ(out[0].shape().DebugString(), "[2,1,3]");
  EXPECT_STATUS(RunStatus(NodeBuilder("s", "Squeeze").Attr("T", DT_FLOAT).Attr(
                              "squeeze_dims", std::vector<int64_t>{1}),
                          {x}),
                absl::StatusCode::kInvalidArgument,
                "Can not squeeze dim[1], expected a dimension of 1, got 2");
  EXPECT_STATUS(RunStatus(NodeBuilder("s", "Squeeze").Attr("T", DT_FLOAT).Attr(
                              "squeeze_dims", std::vector<int64_t>{5}),
                          {x}),
                absl::StatusCode::kInvalidArgument, "out of range");
  out = RunOk(NodeBuilder("s", "Squeeze").Attr("T", DT_FLOAT), {Scalar(2.0f)});
  EXPECT_EQ(out[0].shape().DebugString(), "[]");
}

// ---- BroadcastGradientArgs --------------------------------------------------------

TEST(BroadcastGradientArgsTest, MatchesTensorFlow) {
  struct Case {
    std::vector<int32_t> a, b, r0, r1;
  };
  // Expected values computed with TensorFlow 2.21.
  const Case cases[] = {
      {{2, 3}, {3}, {}, {0}},
      {{2, 1}, {1, 3}, {1}, {0}},
      {{1}, {1, 1}, {0, 1}, {0, 1}},
      {{2, 3}, {2, 3}, {}, {}},
      {{}, {4}, {0}, {}},
      {{5, 1, 3}, {1, 4, 1}, {1}, {0, 2}},
      {{1, 1}, {1}, {0, 1}, {0, 1}},
  };
  for (const Case& c : cases) {
    auto out = RunOk(NodeBuilder("b", "BroadcastGradientArgs"), {Vec(c.a), Vec(c.b)});
    ASSERT_EQ(out.size(), 2u);
    ExpectTensorEqual(out[0], Vec(c.r0));
    ExpectTensorEqual(out[1], Vec(c.r1));
  }
  auto out = RunOk(NodeBuilder("b", "BroadcastGradientArgs").Attr("T", DT_INT64),
                   {Vec<int64_t>({2, 1}), Vec<int64_t>({3})});
  ExpectTensorEqual(out[0], Vec<int64_t>({1}));
  ExpectTensorEqual(out[1], Vec<int64_t>({0}));
  EXPECT_STATUS(RunStatus(NodeBuilder("b", "BroadcastGradientArgs"),
                          {Vec<int32_t>({2, 3}), Vec<int32_t>({4})}),
                absl::StatusCode::kInvalidArgument, "Incompatible shapes: [2,3] vs. [4]");
}

}  // namespace
}  // namespace weft
