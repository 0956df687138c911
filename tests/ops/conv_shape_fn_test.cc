// Shape functions of the conv, pool and optimizer ops: TensorFlow's SAME /
// VALID / EXPLICIT output sizes (NHWC and NCHW), sizes from constant inputs,
// and errors that name the attr.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/framework/node_def_util.h"
#include "ops/framework/op_registry.h"
#include "ops/framework/shape_inference.h"
#include "ops/testing/kernel_runner.h"

namespace weft {
namespace {

// Runs the op's shape function; returns output 0 as text, or the error.
std::string Infer(const NodeBuilder& builder, std::vector<PartialShape> shapes,
                  std::vector<const Tensor*> consts = {}) {
  tensorflow::NodeDef node = builder.Build();
  const OpRegistration* reg = *GlobalOpRegistry().LookUp(node.op());
  AddDefaultsToNodeDef(reg->op_def, &node);
  DataTypeVector in_types, out_types;
  EXPECT_TRUE(InOutTypesForNode(node, reg->op_def, &in_types, &out_types).ok());
  consts.resize(shapes.size(), nullptr);
  InferenceContext c(node, std::move(shapes), std::move(consts), in_types,
                     static_cast<int>(out_types.size()));
  absl::Status s = reg->shape_fn(&c);
  if (!s.ok()) return s.ToString();
  return c.num_outputs() > 0 ? c.output(0).DebugString() : "";
}

NodeBuilder Conv(const char* padding, int stride, int dilation = 1) {
  return NodeBuilder("n", "Conv2D").Attr("T", DT_FLOAT)
      .Attr("strides", std::vector<int64_t>{1, stride, stride, 1})
      .Attr("dilations", std::vector<int64_t>{1, dilation, dilation, 1})
      .Attr("padding", padding);
}

TEST(ConvShapeFnTest, Conv2DOutputSizes) {
  EXPECT_EQ(Infer(Conv("SAME", 1), {{32, 28, 28, 1}, {5, 5, 1, 32}}), "[32,28,28,32]");
  EXPECT_EQ(Infer(Conv("VALID", 1), {{32, 28, 28, 1}, {5, 5, 1, 32}}), "[32,24,24,32]");
  EXPECT_EQ(Infer(Conv("SAME", 2), {{2, 7, 5, 2}, {3, 2, 2, 3}}), "[2,4,3,3]");
  EXPECT_EQ(Infer(Conv("VALID", 2), {{3, 7, 9, 2}, {3, 3, 2, 2}}), "[3,3,4,2]");
  EXPECT_EQ(Infer(Conv("VALID", 1, 2), {{2, 9, 9, 1}, {2, 3, 1, 3}}), "[2,7,5,3]");
  EXPECT_EQ(Infer(Conv("EXPLICIT", 2).Attr("explicit_paddings",
                                           std::vector<int64_t>{0, 0, 1, 2, 0, 1, 0, 0}),
                  {{2, 5, 6, 2}, {3, 3, 2, 2}}),
            "[2,3,3,2]");
  EXPECT_EQ(Infer(Conv("SAME", 1), {{-1, 28, -1, 1}, {5, 5, 1, 32}}), "[?,28,?,32]");
  EXPECT_EQ(Infer(Conv("SAME", 1), {PartialShape::UnknownRank(), {5, 5, 1, 32}}),
            "[?,?,?,32]");
  // NCHW shapes (the CPU kernel refuses NCHW, the shape function does not).
  EXPECT_EQ(Infer(NodeBuilder("n", "Conv2D").Attr("T", DT_FLOAT)
                      .Attr("strides", std::vector<int64_t>{1, 1, 2, 2})
                      .Attr("padding", "SAME").Attr("data_format", "NCHW"),
                  {{8, 3, 9, 9}, {3, 3, 3, 16}}),
            "[8,16,5,5]");
}

TEST(ConvShapeFnTest, Errors) {
  std::string e = Infer(Conv("SAME", 1), {{1, 4, 4, 3}, {3, 3, 2, 1}});
  EXPECT_NE(e.find("multiple of the filter's input depth"), std::string::npos) << e;
  e = Infer(Conv("VALID", 1), {{1, 4, 4, 1}, {5, 5, 1, 1}});
  EXPECT_NE(e.find("window"), std::string::npos) << e;
  e = Infer(NodeBuilder("n", "Conv2D").Attr("T", DT_FLOAT)
                .Attr("strides", std::vector<int64_t>{1, 1, 1})
                .Attr("padding", "SAME"),
            {{1, 4, 4, 1}, {1, 1, 1, 1}});
  EXPECT_NE(e.find("strides"), std::string::npos) << e;
  e = Infer(NodeBuilder("n", "MaxPool").Attr("T", DT_FLOAT)
                .Attr("ksize", std::vector<int64_t>{2, 2, 2, 1})
                .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
                .Attr("padding", "SAME"),
            {{1, 4, 4, 1}});
  EXPECT_NE(e.find("ksize"), std::string::npos) << e;
  e = Infer(NodeBuilder("n", "ApplyMomentum").Attr("T", DT_FLOAT),
            {{2}, {3}, {}, {2}, {}});
  EXPECT_NE(e.find("same shape"), std::string::npos) << e;
}

TEST(ConvShapeFnTest, PoolsAndBackprops) {
  auto pool = [](const char* op, int k, int s, const char* padding) {
    return NodeBuilder("n", op).Attr("T", DT_FLOAT)
        .Attr("ksize", std::vector<int64_t>{1, k, k, 1})
        .Attr("strides", std::vector<int64_t>{1, s, s, 1})
        .Attr("padding", padding);
  };
  EXPECT_EQ(Infer(pool("MaxPool", 3, 2, "SAME"), {{2, 7, 5, 3}}), "[2,4,3,3]");
  EXPECT_EQ(Infer(pool("AvgPool", 3, 2, "VALID"), {{3, 9, 7, 2}}), "[3,4,3,2]");
  EXPECT_EQ(Infer(pool("MaxPoolGrad", 3, 2, "VALID"),
                  {{3, 9, 7, 2}, {3, 4, 3, 2}, {3, 4, 3, 2}}),
            "[3,9,7,2]");
  EXPECT_EQ(Infer(pool("MaxPoolGradGrad", 3, 2, "VALID"),
                  {{3, 9, 7, 2}, {3, 4, 3, 2}, {3, 9, 7, 2}}),
            "[3,4,3,2]");
  EXPECT_EQ(Infer(pool("MaxPoolGradGrad", 2, 2, "SAME"), {{-1, 5, 5, 2}, {}, {}}),
            "[?,3,3,2]");
  std::string e = Infer(pool("MaxPoolGradGrad", 3, 2, "VALID"),
                        {{3, 9, 7, 2}, {3, 4, 3, 2}, {3, 9, 6, 2}});
  EXPECT_NE(e.find("grad [3,9,6,2]"), std::string::npos) << e;
  e = Infer(pool("MaxPoolGradGrad", 3, 2, "VALID"),
            {{3, 9, 7, 2}, {3, 4, 4, 2}, {3, 9, 7, 2}});
  EXPECT_NE(e.find("orig_output [3,4,4,2]"), std::string::npos) << e;
  const Tensor sizes = MakeTensor<int32_t>({4}, {2, 5, 6, 3});
  EXPECT_EQ(Infer(pool("AvgPoolGrad", 2, 2, "SAME"), {{4}, {2, 3, 3, 3}}, {&sizes}),
            "[2,5,6,3]");
  EXPECT_EQ(Infer(NodeBuilder("n", "Conv2DBackpropInput").Attr("T", DT_FLOAT)
                      .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
                      .Attr("padding", "SAME"),
                  {{4}, {3, 3, 3, 4}, {2, 5, 6, 4}}, {&sizes}),
            "[2,5,6,3]");
  EXPECT_EQ(Infer(NodeBuilder("n", "Conv2DBackpropFilter").Attr("T", DT_FLOAT)
                      .Attr("strides", std::vector<int64_t>{1, 1, 1, 1})
                      .Attr("padding", "SAME"),
                  {{2, 5, 6, 3}, {4}, {2, 5, 6, 4}}),
            "[?,?,?,?]");
  EXPECT_EQ(Infer(NodeBuilder("n", "ApplyAdam").Attr("T", DT_FLOAT),
                  {{-1, 3}, {2, -1}, {2, 3}, {}, {}, {}, {}, {}, {}, {2, 3}}),
            "[?,3]");
}

}  // namespace
}  // namespace weft
