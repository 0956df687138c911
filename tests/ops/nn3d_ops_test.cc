// Conv3D and its backprops, the 3-D pools, LRN and the arg max pools: small
// values worked by hand, and the error paths (bad ksize / strides /
// dilations lengths, strides in the batch dim, NCDHW, wrong ranks, depth
// mismatch, negative sizes, shapes that disagree, bad arg max indices),
// whose messages must name the attr or input. TensorFlow comparisons are
// in tests/conformance/nn3d_ops_test.py.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"

namespace weft {
namespace {

using Ints = std::vector<int64_t>;

// Runs `node` on inputs expecting `code`; returns the message.
std::string Error(const tensorflow::NodeDef& node, const std::vector<Tensor>& in,
                  absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  KernelRunner r(node);
  auto out = r.Run(in);
  EXPECT_FALSE(out.ok());
  if (out.ok()) return "";
  EXPECT_EQ(out.status().code(), code) << out.status();
  return std::string(out.status().message());
}

#define EXPECT_MENTIONS(msg, word) \
  EXPECT_NE((msg).find(word), std::string::npos) << (msg)

NodeBuilder Conv3D(Ints strides, const char* padding = "SAME") {
  NodeBuilder b("c", "Conv3D");
  b.Attr("T", DT_FLOAT).Attr("strides", strides).Attr("padding", padding);
  return b;
}

NodeBuilder Pool3D(const char* op, Ints ksize, Ints strides,
                   const char* padding = "VALID") {
  NodeBuilder b("p", op);
  b.Attr("T", DT_FLOAT).Attr("ksize", ksize).Attr("strides", strides)
      .Attr("padding", padding);
  return b;
}

Tensor Sizes5(const Ints& s) {
  return MakeTensor<int32_t>({5}, std::vector<int32_t>(s.begin(), s.end()));
}

TEST(Nn3dOpsTest, Conv3DPointwiseIsAMatMul) {
  // 1x1x1 filter: y[p, :] = x[p, :] * w.
  const Tensor x = MakeTensor<float>({1, 1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = MakeTensor<float>({1, 1, 1, 2, 3}, {1, 0, 2, 0, 1, -1});
  KernelRunner r(Conv3D({1, 1, 1, 1, 1}).Build());
  auto y = r.Run({x, w});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectTensorNear(y->at(0), MakeTensor<float>({1, 1, 1, 2, 3}, {1, 2, 0, 3, 4, 2}), 0);
}

TEST(Nn3dOpsTest, Conv3DSameSumsTheClippedWindow) {
  // All-ones 3x3x3 filter on a 2x2x2 all-ones input: every window holds
  // the whole input (8 entries).
  const Tensor x = MakeTensor<float>({1, 2, 2, 2, 1}, std::vector<float>(8, 1));
  const Tensor w = MakeTensor<float>({3, 3, 3, 1, 1}, std::vector<float>(27, 1));
  KernelRunner r(Conv3D({1, 1, 1, 1, 1}).Build());
  auto y = r.Run({x, w});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectTensorNear(y->at(0), MakeTensor<float>({1, 2, 2, 2, 1}, std::vector<float>(8, 8)), 0);
  // And the input gradient of ones is the same count.
  KernelRunner bi(NodeBuilder("b", "Conv3DBackpropInputV2").Attr("T", DT_FLOAT)
                      .Attr("strides", Ints{1, 1, 1, 1, 1}).Attr("padding", "SAME").Build());
  auto dx = bi.Run({Sizes5({1, 2, 2, 2, 1}), w, y->at(0)});
  ASSERT_TRUE(dx.ok()) << dx.status();
  ExpectTensorNear(dx->at(0), MakeTensor<float>({1, 2, 2, 2, 1}, std::vector<float>(8, 64)), 0);
}

TEST(Nn3dOpsTest, Conv3DErrors) {
  const Tensor x = MakeTensor<float>({1, 4, 4, 4, 2}, {});
  const Tensor w = MakeTensor<float>({3, 3, 3, 2, 1}, {});
  std::string msg = Error(Conv3D({1, 1, 1, 1}).Build(), {x, w});
  EXPECT_MENTIONS(msg, "strides");
  msg = Error(Conv3D({2, 1, 1, 1, 1}).Build(), {x, w});
  EXPECT_MENTIONS(msg, "strides");
  msg = Error(Conv3D({1, 1, 1, 1, 2}).Build(), {x, w});
  EXPECT_MENTIONS(msg, "strides");
  msg = Error(Conv3D({1, 0, 1, 1, 1}).Build(), {x, w});
  EXPECT_MENTIONS(msg, "strides");
  msg = Error(Conv3D({1, 1, 1, 1, 1}).Attr("dilations", Ints{1, 1, 1, 1}).Build(), {x, w});
  EXPECT_MENTIONS(msg, "dilations");
  msg = Error(Conv3D({1, 1, 1, 1, 1}).Attr("dilations", Ints{1, 1, -1, 1, 1}).Build(), {x, w});
  EXPECT_MENTIONS(msg, "dilations");
  msg = Error(Conv3D({1, 1, 1, 1, 1}).Attr("data_format", "NCDHW").Build(), {x, w});
  EXPECT_MENTIONS(msg, "NDHWC");
  msg = Error(Conv3D({1, 1, 1, 1, 1}).Build(), {MakeTensor<float>({4, 4, 4, 2}, {}), w});
  EXPECT_MENTIONS(msg, "input");
  msg = Error(Conv3D({1, 1, 1, 1, 1}).Build(), {x, MakeTensor<float>({3, 3, 2, 1}, {})});
  EXPECT_MENTIONS(msg, "filter");
  msg = Error(Conv3D({1, 1, 1, 1, 1}).Build(), {x, MakeTensor<float>({3, 3, 3, 3, 1}, {})});
  EXPECT_MENTIONS(msg, "depth");
  msg = Error(Conv3D({1, 1, 1, 1, 1}, "VALID").Build(),
              {x, MakeTensor<float>({5, 1, 1, 2, 1}, {})});
  EXPECT_MENTIONS(msg, "window");
}

TEST(Nn3dOpsTest, Conv3DBackpropErrors) {
  const Tensor w = MakeTensor<float>({3, 3, 3, 2, 1}, {});
  auto node = [](const char* op) {
    return NodeBuilder("b", op).Attr("T", DT_FLOAT)
        .Attr("strides", Ints{1, 1, 1, 1, 1}).Attr("padding", "SAME").Build();
  };
  // input_sizes: wrong length, negative sizes.
  std::string msg = Error(node("Conv3DBackpropInputV2"),
                          {MakeTensor<int32_t>({4}, {1, 4, 4, 2}), w,
                           MakeTensor<float>({1, 4, 4, 4, 1}, {})});
  EXPECT_MENTIONS(msg, "input_sizes");
  msg = Error(node("Conv3DBackpropInputV2"),
              {Sizes5({1, -4, 4, 4, 2}), w, MakeTensor<float>({1, 4, 4, 4, 1}, {})});
  EXPECT_MENTIONS(msg, "input_sizes");
  // out_backprop of the wrong shape.
  msg = Error(node("Conv3DBackpropInputV2"),
              {Sizes5({1, 4, 4, 4, 2}), w, MakeTensor<float>({1, 4, 4, 3, 1}, {})});
  EXPECT_MENTIONS(msg, "out_backprop");
  msg = Error(node("Conv3DBackpropFilterV2"),
              {MakeTensor<float>({1, 4, 4, 4, 2}, {}), Sizes5({3, 3, 3, 2, 1}),
               MakeTensor<float>({1, 4, 4, 4, 2}, {})});
  EXPECT_MENTIONS(msg, "out_backprop");
  msg = Error(node("Conv3DBackpropFilterV2"),
              {MakeTensor<float>({1, 4, 4, 4, 2}, {}), Sizes5({3, 3, 3, 1, 1}),
               MakeTensor<float>({1, 4, 4, 4, 1}, {})});
  EXPECT_MENTIONS(msg, "depth");
}

TEST(Nn3dOpsTest, Pool3DValuesAndTies) {
  // One 2x2x2 window over 0..7: max 7, mean 3.5.
  std::vector<float> v(8);
  for (int i = 0; i < 8; ++i) v[i] = i;
  const Tensor x = MakeTensor<float>({1, 2, 2, 2, 1}, v);
  const Ints k = {1, 2, 2, 2, 1};
  KernelRunner mx(Pool3D("MaxPool3D", k, k).Build());
  auto y = mx.Run({x});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectTensorNear(y->at(0), MakeTensor<float>({1, 1, 1, 1, 1}, {7}), 0);
  KernelRunner av(Pool3D("AvgPool3D", k, k).Build());
  auto a = av.Run({x});
  ASSERT_TRUE(a.ok()) << a.status();
  ExpectTensorNear(a->at(0), MakeTensor<float>({1, 1, 1, 1, 1}, {3.5f}), 0);
  // MaxPool3DGrad: every entry equal to the max gets the gradient.
  const Tensor ties = MakeTensor<float>({1, 2, 2, 2, 1}, {1, 5, 5, 0, 5, 2, 3, 4});
  KernelRunner g(Pool3D("MaxPool3DGrad", k, k).Attr("TInput", DT_FLOAT).Build());
  auto dx = g.Run({ties, MakeTensor<float>({1, 1, 1, 1, 1}, {5}),
                   MakeTensor<float>({1, 1, 1, 1, 1}, {2})});
  ASSERT_TRUE(dx.ok()) << dx.status();
  ExpectTensorNear(dx->at(0), MakeTensor<float>({1, 2, 2, 2, 1}, {0, 2, 2, 0, 2, 0, 0, 0}), 0);
}

TEST(Nn3dOpsTest, Pool3DErrors) {
  const Tensor x = MakeTensor<float>({1, 4, 4, 4, 2}, {});
  const Ints ones = {1, 1, 1, 1, 1};
  std::string msg = Error(Pool3D("MaxPool3D", {1, 2, 2, 1}, ones).Build(), {x});
  EXPECT_MENTIONS(msg, "ksize");
  msg = Error(Pool3D("MaxPool3D", {2, 2, 2, 2, 1}, ones).Build(), {x});
  EXPECT_MENTIONS(msg, "ksize");
  msg = Error(Pool3D("AvgPool3D", {1, 2, 2, 2, 1}, {1, 1, 1, 1}).Build(), {x});
  EXPECT_MENTIONS(msg, "strides");
  msg = Error(Pool3D("AvgPool3D", {1, 2, 2, 2, 1}, {2, 1, 1, 1, 1}).Build(), {x});
  EXPECT_MENTIONS(msg, "strides");
  msg = Error(Pool3D("AvgPool3D", {1, 0, 2, 2, 1}, ones).Build(), {x});
  EXPECT_MENTIONS(msg, "ksize");
  msg = Error(Pool3D("MaxPool3D", {1, 5, 1, 1, 1}, ones).Build(), {x});
  EXPECT_MENTIONS(msg, "window");
  msg = Error(Pool3D("MaxPool3D", {1, 2, 2, 2, 1}, ones).Attr("data_format", "NCDHW").Build(),
              {x});
  EXPECT_MENTIONS(msg, "NDHWC");
  msg = Error(Pool3D("MaxPool3D", {1, 2, 2, 2, 1}, ones).Build(),
              {MakeTensor<float>({4, 4, 4, 2}, {})});
  EXPECT_MENTIONS(msg, "input");
  msg = Error(Pool3D("AvgPool3DGrad", {1, 2, 2, 2, 1}, ones).Build(),
              {Sizes5({1, 4, 4, 4, -2}), MakeTensor<float>({1, 3, 3, 3, 2}, {})});
  EXPECT_MENTIONS(msg, "orig_input_shape");
  msg = Error(Pool3D("AvgPool3DGrad", {1, 2, 2, 2, 1}, ones).Build(),
              {Sizes5({1, 4, 4, 4, 2}), MakeTensor<float>({1, 3, 3, 2, 2}, {})});
  EXPECT_MENTIONS(msg, "grad");
  msg = Error(Pool3D("MaxPool3DGrad", {1, 2, 2, 2, 1}, ones).Attr("TInput", DT_FLOAT).Build(),
              {x, MakeTensor<float>({1, 3, 3, 3, 1}, {}), MakeTensor<float>({1, 3, 3, 3, 2}, {})});
  EXPECT_MENTIONS(msg, "orig_output");
  msg = Error(Pool3D("MaxPool3DGradGrad", {1, 2, 2, 2, 1}, ones).Build(),
              {x, MakeTensor<float>({1, 3, 3, 3, 2}, {}), MakeTensor<float>({1, 3, 3, 3, 2}, {})});
  EXPECT_MENTIONS(msg, "grad");
}

NodeBuilder Lrn(const char* op, int64_t radius) {
  NodeBuilder b("l", op);
  b.Attr("T", DT_FLOAT).Attr("depth_radius", radius).Attr("bias", 1.0f)
      .Attr("alpha", 1.0f).Attr("beta", 1.0f);
  return b;
}

TEST(Nn3dOpsTest, LrnValuesAndErrors) {
  // radius 1, beta 1: y[j] = x[j] / (1 + sum of squares of j's neighbours).
  KernelRunner r(Lrn("LRN", 1).Build());
  auto y = r.Run({MakeTensor<float>({1, 1, 1, 3}, {1, 2, 3})});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectTensorNear(y->at(0),
                   MakeTensor<float>({1, 1, 1, 3}, {1.f / 6, 2.f / 15, 3.f / 14}), 1e-7);
  std::string msg = Error(Lrn("LRN", 1).Build(), {MakeTensor<float>({1, 3}, {})});
  EXPECT_MENTIONS(msg, "input");
  msg = Error(Lrn("LRN", -1).Build(), {MakeTensor<float>({1, 1, 1, 3}, {})});
  EXPECT_MENTIONS(msg, "depth_radius");
  msg = Error(Lrn("LRNGrad", 1).Build(),
              {MakeTensor<float>({1, 1, 1, 3}, {}), MakeTensor<float>({1, 1, 1, 2}, {}),
               MakeTensor<float>({1, 1, 1, 3}, {})});
  EXPECT_MENTIONS(msg, "input_image");
}

NodeBuilder Argmax(const char* op, Ints k, Ints s, bool batch = false) {
  NodeBuilder b("a", op);
  b.Attr("T", DT_FLOAT).Attr("Targmax", DT_INT64).Attr("ksize", k).Attr("strides", s)
      .Attr("padding", "VALID").Attr("include_batch_in_index", batch);
  return b;
}

TEST(Nn3dOpsTest, MaxPoolWithArgmaxIndices) {
  // Batch 2 of 2x2x2: window 2x2; first max wins ties.
  const Tensor x = MakeTensor<float>({2, 2, 2, 2},
                                     {1, 9, 4, 9, 4, 0, 2, 9,  // image 0
                                      5, 1, 5, 2, 0, 3, 1, 0});
  for (bool batch : {false, true}) {
    KernelRunner r(Argmax("MaxPoolWithArgmax", {1, 2, 2, 1}, {1, 2, 2, 1}, batch).Build());
    auto y = r.Run({x});
    ASSERT_TRUE(y.ok()) << y.status();
    ExpectTensorNear(y->at(0), MakeTensor<float>({2, 1, 1, 2}, {4, 9, 5, 3}), 0);
    const int64_t off = batch ? 8 : 0;
    const Tensor want = MakeTensor<int64_t>({2, 1, 1, 2}, {2, 1, 0 + off, 5 + off});
    const int64_t* got = y->at(1).data<int64_t>();
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], want.data<int64_t>()[i]) << i;
  }
}

TEST(Nn3dOpsTest, ArgmaxErrors) {
  const Tensor x = MakeTensor<float>({1, 4, 4, 2}, {});
  std::string msg = Error(Argmax("MaxPoolWithArgmax", {1, 2, 2}, {1, 1, 1, 1}).Build(), {x});
  EXPECT_MENTIONS(msg, "ksize");
  msg = Error(Argmax("MaxPoolWithArgmax", {1, 2, 2, 1}, {2, 1, 1, 1}).Build(), {x});
  EXPECT_MENTIONS(msg, "strides");
  msg = Error(Argmax("MaxPoolWithArgmax", {1, 2, 2, 1}, {1, 1, 1, 1}).Build(),
              {MakeTensor<float>({4, 4, 2}, {})});
  EXPECT_MENTIONS(msg, "input");
  // Indices past the image, and grad of the wrong shape.
  const Ints k = {1, 2, 2, 1};
  msg = Error(Argmax("MaxPoolGradWithArgmax", k, k).Build(),
              {x, MakeTensor<float>({1, 2, 2, 2}, {}),
               MakeTensor<int64_t>({1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 32})});
  EXPECT_MENTIONS(msg, "argmax");
  msg = Error(Argmax("MaxPoolGradWithArgmax", k, k).Build(),
              {x, MakeTensor<float>({1, 2, 2, 2}, {}),
               MakeTensor<int64_t>({1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, -1})});
  EXPECT_MENTIONS(msg, "argmax");
  msg = Error(Argmax("MaxPoolGradWithArgmax", k, k).Build(),
              {x, MakeTensor<float>({1, 2, 3, 2}, {}), MakeTensor<int64_t>({1, 2, 2, 2}, {})});
  EXPECT_MENTIONS(msg, "grad");
}

TEST(Nn3dOpsTest, HugeWindowsAreRefused) {
  const Tensor x = MakeTensor<float>({1, 4, 4, 4, 2}, {});
  std::string msg = Error(Pool3D("MaxPool3D", {1, int64_t{1} << 50, 1, 1, 1},
                                 {1, 1, 1, 1, 1}, "SAME").Build(), {x});
  EXPECT_MENTIONS(msg, "window");
  msg = Error(Conv3D({1, 1, 1, 1, 1}).Attr("dilations", Ints{1, int64_t{1} << 50, 1, 1, 1})
                  .Build(),
              {x, MakeTensor<float>({3, 3, 3, 2, 1}, {})});
  EXPECT_MENTIONS(msg, "window");
}

}  // namespace
}  // namespace weft
