// Shape functions of the math and nn ops: what a graph loader learns before
// running anything, and the errors it reports for graphs that cannot work.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/framework/node_def_util.h"
#include "ops/framework/op_registry.h"
#include "ops/framework/shape_inference.h"
#include "ops/testing/kernel_runner.h"

namespace weft {
namespace {

struct Result {
  absl::Status status;
  std::vector<PartialShape> outputs;
};

// Runs the op's shape function on `shapes`; `consts[i]`, when set, is the
// constant value of input i.
Result Infer(const NodeBuilder& builder, std::vector<PartialShape> shapes,
             std::vector<const Tensor*> consts = {}) {
  tensorflow::NodeDef node = builder.Build();
  const OpRegistration* reg = *GlobalOpRegistry().LookUp(node.op());
  AddDefaultsToNodeDef(reg->op_def, &node);
  DataTypeVector in_types, out_types;
  EXPECT_TRUE(InOutTypesForNode(node, reg->op_def, &in_types, &out_types).ok());
  consts.resize(shapes.size(), nullptr);
  InferenceContext c(node, std::move(shapes), std::move(consts), in_types,
                     static_cast<int>(out_types.size()));
  Result r;
  r.status = reg->shape_fn(&c);
  for (int i = 0; i < c.num_outputs(); ++i) r.outputs.push_back(c.output(i));
  return r;
}

NodeBuilder Node(const std::string& op, DataType t = DT_FLOAT) {
  return NodeBuilder("n", op).Attr("T", t);
}

std::string Str(const Result& r, int i = 0) {
  return r.status.ok() ? r.outputs[i].DebugString() : r.status.ToString();
}

const PartialShape kUnknown = PartialShape::UnknownRank();
// (A bare {} in a list of shapes would be an unknown shape, not a scalar.)
const PartialShape kScalar = PartialShape(absl::Span<const int64_t>());

TEST(MathShapeFnTest, Broadcasting) {
  EXPECT_EQ(Str(Infer(Node("AddV2"), {{2, 1, 3}, {4, 1}})), "[2,4,3]");
  EXPECT_EQ(Str(Infer(Node("Mul"), {{-1, 3}, {3}})), "[?,3]");
  EXPECT_EQ(Str(Infer(Node("Less"), {kScalar, {5}})), "[5]");
  EXPECT_EQ(Str(Infer(Node("Sub"), {kUnknown, {5}})), "<unknown>");
  const Result bad = Infer(Node("AddV2"), {{2, 3}, {4}});
  EXPECT_EQ(bad.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status.message().find(
                "shapes [2,3] and [4] cannot be broadcast together"),
            std::string::npos)
      << bad.status;
}

TEST(MathShapeFnTest, EqualityWithoutShapeError) {
  NodeBuilder eq = Node("Equal").Attr("incompatible_shape_error", false);
  // TensorFlow 2.21: a scalar for shapes that cannot broadcast, unknown when
  // unknown dims might not.
  EXPECT_EQ(Str(Infer(eq, {{2, 3}, {4}})), "[]");
  EXPECT_EQ(Str(Infer(eq, {{2, -1}, {4}})), "<unknown>");
  EXPECT_EQ(Str(Infer(eq, {{2, 3}, {3}})), "[2,3]");
  EXPECT_FALSE(Infer(Node("Equal"), {{2, 3}, {4}}).status.ok());
}

TEST(MathShapeFnTest, UnaryCastAndAddN) {
  EXPECT_EQ(Str(Infer(Node("Exp"), {{2, -1}})), "[2,?]");
  EXPECT_EQ(Str(Infer(NodeBuilder("c", "Cast").Attr("SrcT", DT_INT32).Attr(
                          "DstT", DT_FLOAT),
                      {{7}})),
            "[7]");
  NodeBuilder addn = Node("AddN").Attr("N", 2);
  EXPECT_EQ(Str(Infer(addn, {{2, -1}, {-1, 3}})), "[2,3]");
  EXPECT_EQ(Infer(addn, {{2, 3}, {3, 3}}).status.code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MathShapeFnTest, MatMul) {
  EXPECT_EQ(Str(Infer(Node("MatMul"), {{2, 3}, {3, 5}})), "[2,5]");
  EXPECT_EQ(Str(Infer(Node("MatMul").Attr("transpose_a", true).Attr(
                          "transpose_b", true),
                      {{3, 2}, {5, 3}})),
            "[2,5]");
  EXPECT_EQ(Str(Infer(Node("MatMul"), {kUnknown, {3, -1}})), "[?,?]");
  const Result bad = Infer(Node("MatMul"), {{2, 3}, {4, 5}});
  EXPECT_EQ(bad.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status.message().find("inner dimensions 3 and 4"),
            std::string::npos)
      << bad.status;
  EXPECT_FALSE(Infer(Node("MatMul"), {{2, 3, 1}, {3, 5}}).status.ok());
}

TEST(MathShapeFnTest, Reductions) {
  const Tensor axes = MakeTensor<int32_t>({2}, {0, -1});
  const Tensor axis2 = MakeTensor<int32_t>({1}, {2});
  const Tensor scalar_axis = Tensor::Scalar<int64_t>(1);
  EXPECT_EQ(Str(Infer(Node("Sum"), {{2, 3, 4}, {2}}, {nullptr, &axes})), "[3]");
  EXPECT_EQ(Str(Infer(Node("Max").Attr("keep_dims", true), {{2, 3, 4}, {2}},
                      {nullptr, &axes})),
            "[1,3,1]");
  EXPECT_EQ(Str(Infer(Node("Mean").Attr("Tidx", DT_INT64), {{2, 3}, kScalar},
                      {nullptr, &scalar_axis})),
            "[2]");
  // Axes unknown until run time.
  EXPECT_EQ(Str(Infer(Node("Sum"), {{2, 3}, {-1}})), "<unknown>");
  EXPECT_EQ(Str(Infer(Node("Sum").Attr("keep_dims", true), {{2, 3}, {-1}})),
            "[?,?]");
  EXPECT_EQ(Str(Infer(Node("Prod"), {{2, 3}, {0}})), "[2,3]");
  const Result bad = Infer(Node("Sum"), {{2, 3, 4}, {1}}, {nullptr, &axis2});
  EXPECT_TRUE(bad.status.ok());
  const Result out_of_range = Infer(Node("Sum"), {{2, 3}, {1}}, {nullptr, &axis2});
  EXPECT_EQ(out_of_range.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out_of_range.status.message().find(
                "Invalid reduction dimension 2 for input with 2 dimension(s)"),
            std::string::npos)
      << out_of_range.status;
  EXPECT_EQ(Str(Infer(NodeBuilder("n", "All"), {{2, 3}, {2}}, {nullptr, &axes})),
            "[]");
}

TEST(MathShapeFnTest, ArgMax) {
  const Tensor dim = Tensor::Scalar<int32_t>(-1);
  const Tensor bad_dim = Tensor::Scalar<int32_t>(2);
  EXPECT_EQ(Str(Infer(Node("ArgMax"), {{2, 3, 4}, kScalar}, {nullptr, &dim})),
            "[2,3]");
  EXPECT_EQ(Str(Infer(Node("ArgMin"), {{2, 3, 4}, kScalar})), "[?,?]");
  const Result bad = Infer(Node("ArgMax"), {{2, 3}, kScalar}, {nullptr, &bad_dim});
  EXPECT_EQ(bad.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status.message().find("Expected dimension in the range [-2, 2)"),
            std::string::npos);
}

// Every Tidx type is read as what it is (an int16 dimension was read as
// int64: found by the shape_inference fuzzer); a constant of another dtype
// is an unknown dimension, not memory read as int64.
TEST(MathShapeFnTest, ArgMaxReadsEveryIndexType) {
  Tensor dim16(DT_INT16, TensorShape({}));
  dim16.data<int16_t>()[0] = 1;
  Tensor dim64(DT_INT64, TensorShape({}));
  dim64.data<int64_t>()[0] = -3;
  EXPECT_EQ(Str(Infer(Node("ArgMax").Attr("Tidx", DT_INT16), {{2, 3, 4}, kScalar},
                      {nullptr, &dim16})),
            "[2,4]");
  EXPECT_EQ(Str(Infer(Node("ArgMax").Attr("Tidx", DT_INT64), {{2, 3, 4}, kScalar},
                      {nullptr, &dim64})),
            "[3,4]");
  const Tensor float_dim = Tensor::Scalar<float>(1);
  EXPECT_EQ(Str(Infer(Node("ArgMax"), {{2, 3, 4}, kScalar}, {nullptr, &float_dim})),
            "[?,?]");
}

TEST(NnShapeFnTest, BiasAdd) {
  EXPECT_EQ(Str(Infer(Node("BiasAdd"), {{-1, 3}, {3}})), "[?,3]");
  EXPECT_EQ(Str(Infer(Node("BiasAdd"), {{2, -1}, {3}})), "[2,3]");
  NodeBuilder nchw = Node("BiasAdd").Attr("data_format", "NCHW");
  EXPECT_EQ(Str(Infer(nchw, {{2, -1, 4, 5}, {3}})), "[2,3,4,5]");
  // TensorFlow 2.21 rejects these at graph construction.
  EXPECT_FALSE(Infer(Node("BiasAdd"), {{2, 3}, {4}}).status.ok());
  EXPECT_FALSE(Infer(Node("BiasAdd"), {{3}, {3}}).status.ok());
  EXPECT_FALSE(Infer(nchw, {{2, 3}, {3}}).status.ok());
  EXPECT_FALSE(Infer(Node("BiasAdd"), {{2, 3}, {1, 3}}).status.ok());
  EXPECT_EQ(Str(Infer(Node("BiasAddGrad").Attr("data_format", "NCHW"),
                      {{2, 3, 4, 5}})),
            "[3]");
  EXPECT_EQ(Str(Infer(Node("BiasAddGrad"), {{2, 3, 4, 5}})), "[5]");
}

TEST(NnShapeFnTest, SoftmaxAndCrossEntropy) {
  EXPECT_EQ(Str(Infer(Node("Softmax"), {{2, 5}})), "[2,5]");
  EXPECT_FALSE(Infer(Node("Softmax"), {kScalar}).status.ok());
  NodeBuilder xent = Node("SparseSoftmaxCrossEntropyWithLogits")
                         .Attr("Tlabels", DT_INT32);
  const Result r = Infer(xent, {{-1, 10}, {32}});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(Str(r, 0), "[32]");
  EXPECT_EQ(Str(r, 1), "[32,10]");
  EXPECT_FALSE(Infer(xent, {{2, 3}, {3}}).status.ok());
  EXPECT_FALSE(Infer(xent, {{2, 3, 4}, {2}}).status.ok());
  EXPECT_FALSE(Infer(xent, {{2, 3}, {2, 1}}).status.ok());
}

TEST(NnShapeFnTest, ReluGradMergesShapes) {
  EXPECT_EQ(Str(Infer(Node("ReluGrad"), {{2, -1}, {-1, 3}})), "[2,3]");
  EXPECT_FALSE(Infer(Node("ReluGrad"), {{2, 3}, {3, 3}}).status.ok());
}

TEST(MathShapeFnTest, TrainingGraphOps) {
  // BatchMatMulV2: batch dims broadcast, adjoints swap the last two.
  EXPECT_EQ(Str(Infer(Node("BatchMatMulV2"), {{2, 1, 3, 4}, {5, 4, 6}})), "[2,5,3,6]");
  EXPECT_EQ(Str(Infer(Node("BatchMatMulV2").Attr("adj_x", true).Attr("adj_y", true),
                      {{7, 4, 3}, {7, 6, 4}})),
            "[7,3,6]");
  EXPECT_EQ(Str(Infer(Node("BatchMatMulV2"), {kUnknown, {4, 6}})), "<unknown>");
  EXPECT_EQ(Infer(Node("BatchMatMulV2"), {{2, 3, 4}, {2, 5, 6}}).status.code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Infer(Node("BatchMatMulV2"), {{2, 3, 4}, {3, 4, 6}}).status.code(),
            absl::StatusCode::kInvalidArgument);
  // Losses and activation gradients.
  EXPECT_EQ(Str(Infer(Node("L2Loss"), {{3, 4}})), "[]");
  const Result xent = Infer(Node("SoftmaxCrossEntropyWithLogits"), {{-1, 5}, {8, 5}});
  EXPECT_EQ(Str(xent, 0), "[8]");
  EXPECT_EQ(Str(xent, 1), "[8,5]");
  EXPECT_FALSE(Infer(Node("SoftmaxCrossEntropyWithLogits"), {{4, 5}, {3, 5}}).status.ok());
  EXPECT_EQ(Str(Infer(Node("LeakyReluGrad"), {{2, -1}, {2, 3}})), "[2,?]");
  EXPECT_FALSE(Infer(Node("EluGrad"), {{2, 3}, {3, 2}}).status.ok());
  // UnsortedSegmentSum: [num_segments] + data's dims past the ids'.
  const Tensor segments = Tensor::Scalar<int32_t>(7);
  EXPECT_EQ(Str(Infer(Node("UnsortedSegmentSum").Attr("Tindices", DT_INT32),
                      {{4, 3, 2}, {4, 3}, kScalar}, {nullptr, nullptr, &segments})),
            "[7,2]");
  EXPECT_FALSE(Infer(Node("UnsortedSegmentSum").Attr("Tindices", DT_INT32),
                     {{4, 3}, {5}, kScalar})
                   .status.ok());
  EXPECT_EQ(Str(Infer(Node("Cumsum"), {{3, -1}, kScalar})), "[3,?]");
}

TEST(MathShapeFnTest, GradientHelperOps) {
  const Result shapes = Infer(
      NodeBuilder("n", "ShapeN").Attr("N", 2).Attr("T", DT_FLOAT), {{2, 3}, kUnknown});
  EXPECT_EQ(Str(shapes, 0), "[2]");
  EXPECT_EQ(Str(shapes, 1), "[?]");
  const Result offsets = Infer(NodeBuilder("n", "ConcatOffset").Attr("N", 2),
                               {kScalar, {3}, {3}});
  EXPECT_EQ(Str(offsets, 1), "[3]");
  EXPECT_EQ(Str(Infer(NodeBuilder("n", "DynamicStitch").Attr("N", 2).Attr("T", DT_FLOAT),
                      {{2}, {3}, {2, 5}, {3, 5}})),
            "[?,5]");
  const Tensor shape = MakeTensor<int32_t>({3}, {4, 5, 6});
  EXPECT_EQ(Str(Infer(Node("StridedSliceGrad").Attr("Index", DT_INT32),
                      {{3}, {3}, {3}, {3}, {2, 2, 2}}, {&shape})),
            "[4,5,6]");
  const Result diff = Infer(Node("ListDiff", DT_INT32), {{5}, {2}});
  EXPECT_EQ(Str(diff, 0), "[?]");
  EXPECT_EQ(Str(diff, 1), "[?]");
}

}  // namespace
}  // namespace weft
