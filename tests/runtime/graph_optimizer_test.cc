// Constant folding and kernel fusion (runtime/graph_optimizer.h) through a
// LocalSession with the real kernels: what the partition that runs holds,
// and that its values are the unoptimised graph's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "proto/config.pb.h"
#include "proto/graph.pb.h"
#include "proto/rewriter_config.pb.h"
#include "runtime/core/tensor.h"
#include "runtime/local_session.h"
#include "runtime/session.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using testing::Attr;
using testing::GraphDefBuilder;
using ::testing::HasSubstr;

const std::pair<std::string, Attr> kFloat = {"T", DT_FLOAT};

Tensor Ramp(std::vector<int64_t> dims, float start, float step) {
  Tensor t(DT_FLOAT, TensorShape(dims));
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    // A pattern that is not monotone, so a wrong channel shows.
    t.data<float>()[i] = start + step * static_cast<float>((i * 7) % 11);
  }
  return t;
}

void SetInts(GraphDefBuilder* b, const std::string& node, const std::string& attr,
             std::vector<int64_t> values) {
  for (auto& n : *b->mutable_def()->mutable_node()) {
    if (n.name() != node) continue;
    auto* list = (*n.mutable_attr())[attr].mutable_list();
    for (int64_t v : values) list->add_i(v);
  }
}

void AddConv(GraphDefBuilder* b, const std::string& name, const std::string& x,
             const std::string& w, const std::string& op = "Conv2D") {
  b->Op(name, op, {x, w}, {kFloat, {"padding", "SAME"}});
  SetInts(b, name, "strides", {1, 1, 1, 1});
}

SessionOptions Options(bool optimize) {
  SessionOptions options;
  if (!optimize) {
    auto* graph = options.config.mutable_graph_options();
    graph->mutable_optimizer_options()->set_opt_level(tensorflow::OptimizerOptions::L0);
    graph->mutable_rewrite_options()->set_disable_meta_optimizer(true);
  }
  return options;
}

struct Result {
  std::vector<Tensor> outputs;
  std::vector<std::string> ops;    // of the partition that ran
  std::vector<std::string> names;  // its node names
};

Result RunGraph(const tensorflow::GraphDef& def, bool optimize,
                const std::vector<std::pair<std::string, Tensor>>& feeds,
                const std::vector<std::string>& fetches,
                const std::vector<std::string>& targets = {}) {
  auto session = NewLocalSession(Options(optimize));
  Result r;
  absl::Status st = session->Create(def);
  EXPECT_TRUE(st.ok()) << st;
  tensorflow::RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  tensorflow::RunMetadata metadata;
  st = session->Run(run_options, feeds, fetches, targets, &r.outputs, &metadata);
  EXPECT_TRUE(st.ok()) << st;
  for (const auto& g : metadata.partition_graphs()) {
    for (const auto& n : g.node()) {
      r.ops.push_back(n.op());
      r.names.push_back(n.name());
    }
  }
  return r;
}

void ExpectNear(const Tensor& a, const Tensor& b, float tolerance) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    const float x = a.data<float>()[i], y = b.data<float>()[i];
    EXPECT_NEAR(x, y, tolerance * (1 + std::fabs(y))) << "element " << i;
  }
}

TEST(ConstantFoldingTest, FoldsConstantSubgraphsAndKeepsTheRest) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT);
  b.ConstF("a", 2.0f);
  b.ConstF("c", 0.25f);
  b.Op("sum", "AddV2", {"a", "c"}, {kFloat});
  b.Op("root", "Sqrt", {"sum"}, {kFloat});
  b.Op("y", "Mul", {"x", "root"}, {kFloat});
  const tensorflow::GraphDef def = b.Build();
  const Tensor x = Ramp({3}, 1, 1);
  Result on = RunGraph(def, true, {{"x", x}}, {"y"});
  Result off = RunGraph(def, false, {{"x", x}}, {"y"});
  EXPECT_THAT(on.ops, ::testing::Not(::testing::Contains("AddV2")));
  EXPECT_THAT(on.ops, ::testing::Not(::testing::Contains("Sqrt")));
  EXPECT_THAT(on.names, ::testing::Contains("root/folded"));
  EXPECT_THAT(off.ops, ::testing::Contains("Sqrt"));
  ExpectNear(on.outputs[0], off.outputs[0], 0);
  EXPECT_FLOAT_EQ(on.outputs[0].data<float>()[0], x.data<float>()[0] * 1.5f);
}

TEST(ConstantFoldingTest, KeepsTargetsStatefulOpsAndBigResults) {
  GraphDefBuilder b;
  b.ConstF("a", 1.0f);
  b.Op("target", "Neg", {"a"}, {kFloat});  // a target: nobody reads it
  Tensor shape(DT_INT32, TensorShape({2}));
  shape.data<int32_t>()[0] = 2048;
  shape.data<int32_t>()[1] = 2048;
  b.ConstT("shape", shape);
  b.Op("big", "Fill", {"shape", "a"}, {kFloat, {"index_type", DT_INT32}});
  b.Op("big_sum", "Sum", {"big", "axes"}, {kFloat, {"Tidx", DT_INT32}});
  Tensor axes(DT_INT32, TensorShape({2}));
  axes.data<int32_t>()[0] = 0;
  axes.data<int32_t>()[1] = 1;
  b.ConstT("axes", axes);
  b.Op("random", "RandomUniform", {"shape"}, {{"dtype", DT_FLOAT}, {"T", DT_INT32}});
  b.Op("random_sum", "Sum", {"random", "axes"}, {kFloat, {"Tidx", DT_INT32}});
  Result r = RunGraph(b.Build(), true, {}, {"big_sum", "random_sum"}, {"target"});
  // Sum of the 16 MiB Fill folds (its result is small), so the Fill goes
  // with it; the random op is never folded.
  EXPECT_THAT(r.ops, ::testing::Contains("RandomUniform"));
  EXPECT_THAT(r.names, ::testing::Contains("target"));
  EXPECT_THAT(r.names, ::testing::Contains("big_sum/folded"));
  EXPECT_FLOAT_EQ(r.outputs[0].data<float>()[0], 2048.0f * 2048.0f);
}

TEST(ConstantFoldingTest, AFailingConstantStillFailsAtItsNode) {
  // StringToNumber is stateless, so folding evaluates it and fails; the
  // graph is left as it was and the step reports the error at the node.
  GraphDefBuilder b;
  Tensor text(DT_STRING, TensorShape({}));
  text.data<std::string>()[0] = "not a number";
  b.ConstT("text", text);
  b.Op("bad", "StringToNumber", {"text"}, {{"out_type", DT_FLOAT}});
  b.Op("neg", "Neg", {"bad"}, {kFloat});
  auto session = NewLocalSession(SessionOptions());
  ASSERT_TRUE(session->Create(b.Build()).ok());
  std::vector<Tensor> out;
  absl::Status st = session->Run({}, {"neg"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("{{node bad}}"));
}

TEST(ConstantFoldingTest, TheEvaluationHasAMemoryBudgetAndNoFiles) {
  GraphDefBuilder b;
  b.ConstF("one", 1.0f);
  Tensor shape(DT_INT32, TensorShape({2}));
  shape.data<int32_t>()[0] = 4096;
  shape.data<int32_t>()[1] = 4608;  // 72 MiB of floats: past the budget
  b.ConstT("shape", shape);
  b.Op("huge", "Fill", {"shape", "one"}, {kFloat, {"index_type", DT_INT32}});
  Tensor axes(DT_INT32, TensorShape({2}));
  axes.data<int32_t>()[0] = 0;
  axes.data<int32_t>()[1] = 1;
  b.ConstT("axes", axes);
  b.Op("total", "Sum", {"huge", "axes"}, {kFloat, {"Tidx", DT_INT32}});
  // A stateless op that opens a file: folding may not, the step may.
  const std::string path = ::testing::TempDir() + "/graph_optimizer_test.txt";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("weft", f);
  std::fclose(f);
  Tensor name(DT_STRING, TensorShape({}));
  name.data<std::string>()[0] = path;
  b.ConstT("path", name);
  b.Op("contents", "ReadFile", {"path"});
  Result r = RunGraph(b.Build(), true, {}, {"total", "contents"});
  EXPECT_THAT(r.ops, ::testing::Contains("Fill"));
  EXPECT_THAT(r.ops, ::testing::Contains("ReadFile"));
  EXPECT_FLOAT_EQ(r.outputs[0].data<float>()[0], 4096.0f * 4608.0f);
  EXPECT_EQ(r.outputs[1].data<std::string>()[0], "weft");
}

// conv -> BiasAdd -> Mul -> AddV2 -> Relu, as Keras writes a convolution
// and its batch norm; the scale comes out of folded constants.
tensorflow::GraphDef ConvBatchNormRelu(const std::string& conv_op, int64_t out_channels) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT);
  const int64_t in = 3;
  const int64_t multiplier = conv_op == "Conv2D" ? out_channels : out_channels / in;
  b.ConstT("w", Ramp({3, 3, in, multiplier}, -0.5f, 0.1f));
  b.ConstT("bias", Ramp({out_channels}, 0.1f, 0.05f));
  b.ConstT("variance", Ramp({out_channels}, 0.5f, 0.1f));
  b.ConstF("epsilon", 0.001f);
  b.ConstT("gamma", Ramp({out_channels}, -1.0f, 0.2f));
  b.ConstT("shift", Ramp({out_channels}, -0.3f, 0.07f));
  b.Op("var_eps", "AddV2", {"variance", "epsilon"}, {kFloat});
  b.Op("inv", "Rsqrt", {"var_eps"}, {kFloat});
  b.Op("scale", "Mul", {"inv", "gamma"}, {kFloat});
  AddConv(&b, "conv", "x", "w", conv_op);
  b.Op("biased", "BiasAdd", {"conv", "bias"}, {kFloat});
  b.Op("scaled", "Mul", {"biased", "scale"}, {kFloat});
  b.Op("shifted", "AddV2", {"scaled", "shift"}, {kFloat});
  b.Op("relu", "Relu", {"shifted"}, {kFloat});
  return b.Build();
}

TEST(KernelFusionTest, ConvolutionBatchNormAndReluBecomeOneKernel) {
  const tensorflow::GraphDef def = ConvBatchNormRelu("Conv2D", 5);
  const Tensor x = Ramp({2, 6, 6, 3}, -1, 0.2f);
  Result on = RunGraph(def, true, {{"x", x}}, {"relu"});
  Result off = RunGraph(def, false, {{"x", x}}, {"relu"});
  EXPECT_THAT(on.ops, ::testing::Contains("_FusedConv2D"));
  for (const char* op : {"Conv2D", "BiasAdd", "Mul", "AddV2", "Relu", "Rsqrt"}) {
    EXPECT_THAT(on.ops, ::testing::Not(::testing::Contains(op))) << op;
  }
  EXPECT_THAT(on.names, ::testing::Contains("relu"));  // the fused node's name
  EXPECT_THAT(off.ops, ::testing::Contains("Conv2D"));
  ExpectNear(on.outputs[0], off.outputs[0], 1e-5f);
}

TEST(KernelFusionTest, DepthwiseConvolutionBatchNormAndReluBecomeOneKernel) {
  const tensorflow::GraphDef def = ConvBatchNormRelu("DepthwiseConv2dNative", 6);
  const Tensor x = Ramp({1, 5, 5, 3}, -1, 0.3f);
  Result on = RunGraph(def, true, {{"x", x}}, {"relu"});
  Result off = RunGraph(def, false, {{"x", x}}, {"relu"});
  EXPECT_THAT(on.ops, ::testing::Contains("_FusedDepthwiseConv2dNative"));
  for (const char* op : {"DepthwiseConv2dNative", "BiasAdd", "Mul", "AddV2", "Relu"}) {
    EXPECT_THAT(on.ops, ::testing::Not(::testing::Contains(op))) << op;
  }
  ExpectNear(on.outputs[0], off.outputs[0], 1e-5f);
}

TEST(KernelFusionTest, AnExplicitlyPaddedDepthwiseConvolutionTakesTheScaleIntoItsFilter) {
  // _FusedDepthwiseConv2dNative has no EXPLICIT padding: after a Pad is
  // folded in, the convolution stays and its batch norm becomes one BiasAdd.
  tensorflow::GraphDef def = ConvBatchNormRelu("DepthwiseConv2dNative", 6);
  GraphDefBuilder b;
  *b.mutable_def() = def;
  Tensor paddings(DT_INT32, TensorShape({4, 2}));
  const int32_t amounts[] = {0, 0, 1, 1, 1, 1, 0, 0};
  for (int i = 0; i < 8; ++i) paddings.data<int32_t>()[i] = amounts[i];
  b.ConstT("paddings", paddings);
  b.Op("padded", "Pad", {"x", "paddings"}, {kFloat, {"Tpaddings", DT_INT32}});
  for (auto& n : *b.mutable_def()->mutable_node()) {
    if (n.name() != "conv") continue;
    n.set_input(0, "padded");
    (*n.mutable_attr())["padding"].set_s("VALID");
  }
  const Tensor x = Ramp({1, 5, 5, 3}, -1, 0.3f);
  Result on = RunGraph(b.Build(), true, {{"x", x}}, {"relu"});
  Result off = RunGraph(b.Build(), false, {{"x", x}}, {"relu"});
  EXPECT_THAT(on.ops, ::testing::Contains("DepthwiseConv2dNative"));
  EXPECT_EQ(std::count(on.ops.begin(), on.ops.end(), "BiasAdd"), 1);
  for (const char* op : {"Pad", "Mul", "AddV2"}) {
    EXPECT_THAT(on.ops, ::testing::Not(::testing::Contains(op))) << op;
  }
  ExpectNear(on.outputs[0], off.outputs[0], 1e-5f);
}

TEST(KernelFusionTest, AnIntermediateSomeoneReadsIsNotFused) {
  const tensorflow::GraphDef def = ConvBatchNormRelu("Conv2D", 4);
  const Tensor x = Ramp({1, 4, 4, 3}, 0, 0.1f);
  // "biased" is fetched, so the run stops there: Conv2D + BiasAdd fuse,
  // the Mul, AddV2 and Relu after the fetched value stay.
  Result on = RunGraph(def, true, {{"x", x}}, {"relu", "biased"});
  Result off = RunGraph(def, false, {{"x", x}}, {"relu", "biased"});
  EXPECT_THAT(on.ops, ::testing::Contains("_FusedConv2D"));
  EXPECT_THAT(on.ops, ::testing::Contains("Relu"));
  EXPECT_THAT(on.ops, ::testing::Contains("Mul"));
  ExpectNear(on.outputs[0], off.outputs[0], 1e-5f);
  ExpectNear(on.outputs[1], off.outputs[1], 1e-5f);
}

TEST(KernelFusionTest, BatchNormInferenceAndAFedBias) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT);
  b.Placeholder("b", DT_FLOAT);
  b.ConstT("w", Ramp({1, 1, 3, 4}, -0.4f, 0.1f));
  b.ConstT("gamma", Ramp({4}, 0.5f, 0.1f));
  b.ConstT("beta", Ramp({4}, -0.1f, 0.1f));
  b.ConstT("mean", Ramp({4}, 0.2f, 0.05f));
  b.ConstT("var", Ramp({4}, 1.0f, 0.3f));
  AddConv(&b, "conv", "x", "w");
  b.Op("bn", "FusedBatchNormV3", {"conv", "gamma", "beta", "mean", "var"},
       {kFloat, {"U", DT_FLOAT}, {"is_training", false}});
  b.Op("act", "Relu6", {"bn"}, {kFloat});
  // A second convolution whose bias is fed (a variable's value, say).
  AddConv(&b, "conv2", "act", "w2");
  b.ConstT("w2", Ramp({1, 1, 4, 2}, -0.3f, 0.1f));
  b.Op("out", "BiasAdd", {"conv2", "b"}, {kFloat});
  const tensorflow::GraphDef def = b.Build();
  const Tensor x = Ramp({1, 3, 3, 3}, -1, 0.25f);
  const Tensor bias = Ramp({2}, 0.5f, -0.25f);
  Result on = RunGraph(def, true, {{"x", x}, {"b", bias}}, {"out"});
  Result off = RunGraph(def, false, {{"x", x}, {"b", bias}}, {"out"});
  EXPECT_EQ(std::count(on.ops.begin(), on.ops.end(), "_FusedConv2D"), 2);
  EXPECT_THAT(on.ops, ::testing::Not(::testing::Contains("FusedBatchNormV3")));
  EXPECT_THAT(on.ops, ::testing::Not(::testing::Contains("BiasAdd")));
  ExpectNear(on.outputs[0], off.outputs[0], 1e-5f);
}

TEST(KernelFusionTest, AZeroOrInfiniteScaleStaysOutOfTheFilter) {
  // x * inf is NaN where x is 0; moved into the filter it would not be.
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT);
  b.ConstT("w", Ramp({1, 1, 2, 2}, -0.5f, 0.5f));
  Tensor scale(DT_FLOAT, TensorShape({2}));
  scale.data<float>()[0] = std::numeric_limits<float>::infinity();
  scale.data<float>()[1] = 0.0f;
  b.ConstT("scale", scale);
  AddConv(&b, "conv", "x", "w");
  b.Op("scaled", "Mul", {"conv", "scale"}, {kFloat});
  Tensor x(DT_FLOAT, TensorShape({1, 1, 1, 2}));
  x.data<float>()[0] = 0.0f;
  x.data<float>()[1] = 0.0f;
  Result on = RunGraph(b.Build(), true, {{"x", x}}, {"scaled"});
  EXPECT_THAT(on.ops, ::testing::Contains("Mul"));
  EXPECT_TRUE(std::isnan(on.outputs[0].data<float>()[0]));  // 0 * inf
  EXPECT_EQ(on.outputs[0].data<float>()[1], 0.0f);
}

TEST(KernelFusionTest, APadBeforeAValidConvolutionBecomesItsPadding) {
  for (const char* op : {"DepthwiseConv2dNative", "Conv2D"}) {
    GraphDefBuilder b;
    b.Placeholder("x", DT_FLOAT);
    b.ConstT("w", Ramp({3, 3, 2, 2}, -0.5f, 0.1f));
    Tensor paddings(DT_INT32, TensorShape({4, 2}));
    const int32_t amounts[] = {0, 0, 0, 1, 1, 2, 0, 0};  // rows 0/1, cols 1/2
    for (int i = 0; i < 8; ++i) paddings.data<int32_t>()[i] = amounts[i];
    b.ConstT("paddings", paddings);
    b.Op("padded", "Pad", {"x", "paddings"}, {kFloat, {"Tpaddings", DT_INT32}});
    b.Op("conv", op, {"padded", "w"}, {kFloat, {"padding", "VALID"}});
    SetInts(&b, "conv", "strides", {1, 2, 2, 1});
    // The same Pad before a SAME convolution stays.
    b.Op("padded2", "Pad", {"x", "paddings"}, {kFloat, {"Tpaddings", DT_INT32}});
    AddConv(&b, "same", "padded2", "w", op);
    const tensorflow::GraphDef def = b.Build();
    const Tensor x = Ramp({1, 7, 6, 2}, -1, 0.2f);
    Result on = RunGraph(def, true, {{"x", x}}, {"conv", "same"});
    Result off = RunGraph(def, false, {{"x", x}}, {"conv", "same"});
    EXPECT_EQ(std::count(on.ops.begin(), on.ops.end(), "Pad"), 1) << op;
    EXPECT_EQ(std::count(off.ops.begin(), off.ops.end(), "Pad"), 2) << op;
    ExpectNear(on.outputs[0], off.outputs[0], 1e-6f);
    ExpectNear(on.outputs[1], off.outputs[1], 1e-6f);
  }
}

TEST(KernelFusionTest, MatMulBiasAndActivation) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT);
  b.ConstT("w", Ramp({3, 5}, -0.5f, 0.1f));
  b.ConstT("bias", Ramp({5}, 0.1f, 0.1f));
  b.ConstF("half", 0.5f);
  b.Op("mm", "MatMul", {"x", "w"}, {kFloat});
  b.Op("biased", "BiasAdd", {"mm", "bias"}, {kFloat});
  b.Op("scaled", "Mul", {"half", "biased"}, {kFloat});
  b.Op("out", "LeakyRelu", {"scaled"}, {kFloat, {"alpha", Attr(0)}});
  for (auto& n : *b.mutable_def()->mutable_node()) {
    if (n.name() == "out") (*n.mutable_attr())["alpha"].set_f(0.1f);
  }
  const tensorflow::GraphDef def = b.Build();
  const Tensor x = Ramp({4, 3}, -1, 0.3f);
  Result on = RunGraph(def, true, {{"x", x}}, {"out"});
  Result off = RunGraph(def, false, {{"x", x}}, {"out"});
  EXPECT_THAT(on.ops, ::testing::Contains("_FusedMatMul"));
  EXPECT_THAT(on.ops, ::testing::Not(::testing::Contains("LeakyRelu")));
  ExpectNear(on.outputs[0], off.outputs[0], 1e-5f);
}

}  // namespace
}  // namespace weft
