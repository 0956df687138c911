// FusedPadConv2D and FusedResizeAndPadConv2D: error paths give
// INVALID_ARGUMENT (TensorFlow's words), nothing aborts; a 1x1 identity
// filter shows the padded image itself, TensorFlow's window placement for
// strides above the window, and every image of a batch convolved (values
// are checked against TensorFlow by tests/conformance/set_fused_ops_test).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::RunOk;
using testing_util::RunStatus;

NodeBuilder Fused(bool resize, const std::string& mode = "REFLECT",
                  const std::string& padding = "VALID",
                  std::vector<int64_t> strides = {1, 1, 1, 1}) {
  NodeBuilder b("n", resize ? "FusedResizeAndPadConv2D" : "FusedPadConv2D");
  b.Attr("T", DT_FLOAT).Attr("mode", mode).Attr("padding", padding)
      .Attr("strides", strides);
  return b;
}

Tensor Pads(const std::vector<int32_t>& v) { return MakeTensor<int32_t>({4, 2}, v); }

// [1, h, w, 1] holding 0, 1, 2, ...
Tensor Ramp(int64_t b, int64_t h, int64_t w) {
  std::vector<float> v(b * h * w);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % (h * w));
  return MakeTensor<float>({b, h, w, 1}, v);
}

const Tensor kIdentity = MakeTensor<float>({1, 1, 1, 1}, {1.f});

void ExpectInvalid(const absl::Status& s, const std::string& text) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find(text), std::string::npos) << s;
}

TEST(FusedPadConvTest, IdentityFilterShowsThePaddedImage) {
  // REFLECT by 1 each side of [0 1 2] rows: [1 0 1 2 1].
  const Tensor y = RunOk(Fused(false), {Ramp(1, 1, 3), Pads({0, 0, 0, 0, 1, 1, 0, 0}),
                                        kIdentity});
  ExpectTensorEqual(y, MakeTensor<float>({1, 1, 5, 1}, {1, 0, 1, 2, 1}));
  const Tensor s = RunOk(Fused(false, "SYMMETRIC"),
                         {Ramp(1, 1, 3), Pads({0, 0, 0, 0, 2, 1, 0, 0}), kIdentity});
  ExpectTensorEqual(s, MakeTensor<float>({1, 1, 6, 1}, {1, 0, 0, 1, 2, 2}));
}

TEST(FusedPadConvTest, WideStridesStartInsideAsTensorFlow) {
  // 16 wide, 1-wide window, stride 8, VALID: TensorFlow reads 3 and 11.
  const Tensor y = RunOk(Fused(false, "REFLECT", "VALID", {1, 1, 8, 1}),
                         {Ramp(1, 1, 16), Pads({0, 0, 0, 0, 0, 0, 0, 0}), kIdentity});
  ExpectTensorEqual(y, MakeTensor<float>({1, 1, 2, 1}, {3, 11}));
}

TEST(FusedPadConvTest, EveryImageOfTheBatch) {
  const Tensor y = RunOk(Fused(true), {Ramp(2, 2, 2), MakeTensor<int32_t>({2}, {3, 3}),
                                       Pads({0, 0, 1, 1, 0, 0, 0, 0}), kIdentity});
  ASSERT_EQ(y.shape(), TensorShape({2, 5, 3, 1}));
  for (int64_t i = 0; i < 15; ++i) {
    EXPECT_EQ(y.data<float>()[i], y.data<float>()[15 + i]) << i;
  }
}

TEST(FusedPadConvTest, Errors) {
  const Tensor x = Ramp(1, 3, 3);
  const Tensor none = Pads({0, 0, 0, 0, 0, 0, 0, 0});
  ExpectInvalid(RunStatus(Fused(false), {Ramp(1, 0, 3), none, kIdentity}),
                "Input tensor can't be empty");
  ExpectInvalid(RunStatus(Fused(false), {MakeTensor<float>({3}, {1, 2, 3}),
                                         MakeTensor<int32_t>({1, 2}, {0, 0}), kIdentity}),
                "four-dimensional");
  // (SYMMETRIC: a pad of 1 fits a dim of 1, so the batch / channel rule
  // is what refuses it.)
  ExpectInvalid(RunStatus(Fused(false, "SYMMETRIC"),
                          {x, Pads({1, 0, 0, 0, 0, 0, 0, 0}), kIdentity}),
                "not batches");
  ExpectInvalid(RunStatus(Fused(false, "SYMMETRIC"),
                          {x, Pads({0, 0, 0, 0, 0, 0, 0, 1}), kIdentity}),
                "not channels");
  ExpectInvalid(RunStatus(Fused(false), {x, Pads({0, 0, 3, 0, 0, 0, 0, 0}), kIdentity}),
                "paddings must be less than the dimension size");
  ExpectInvalid(RunStatus(Fused(false, "SYMMETRIC"),
                          {x, Pads({0, 0, 4, 0, 0, 0, 0, 0}), kIdentity}),
                "paddings must be no greater than the dimension size");
  ExpectInvalid(RunStatus(Fused(false), {x, Pads({0, 0, -1, 0, 0, 0, 0, 0}), kIdentity}),
                "paddings must be non-negative");
  ExpectInvalid(RunStatus(Fused(false), {x, MakeTensor<int32_t>({3, 2}, {0, 0, 0, 0, 0, 0}),
                                         kIdentity}),
                "The first dimension of paddings must be the rank of inputs");
  ExpectInvalid(RunStatus(Fused(false), {x, none, MakeTensor<float>({1, 1, 1}, {1})}),
                "filter must be 4-dimensional");
  ExpectInvalid(RunStatus(Fused(false), {x, none, MakeTensor<float>({1, 1, 2, 1}, {1, 1})}),
                "input and filter must have the same depth: 1 vs 2");
  ExpectInvalid(RunStatus(Fused(false), {x, none, MakeTensor<float>(
                                                      {4, 1, 1, 1}, {1, 1, 1, 1})}),
                "Computed output size would be negative");
  ExpectInvalid(RunStatus(Fused(false), {x, none, MakeTensor<float>({1, 1, 1, 0}, {})}),
                "Output tensor can't be empty");
  ExpectInvalid(RunStatus(Fused(true), {x, MakeTensor<int32_t>({2}, {0, 3}), none,
                                        kIdentity}),
                "output dimensions must be positive");
  ExpectInvalid(RunStatus(Fused(true), {x, MakeTensor<int32_t>({3}, {1, 2, 3}), none,
                                        kIdentity}),
                "shape_t must have two elements");
  ExpectInvalid(RunStatus(Fused(false, "REFLECT", "VALID", {2, 1, 1, 1}),
                          {x, none, kIdentity}),
                "strides");
}

}  // namespace
}  // namespace weft
