// The image kernels' error paths and edge cases (ops/cpu/image_*.cc): bad
// box indices, crop sizes <= 0, wrong ranks and channel counts, thresholds
// out of [0, 1], negative output sizes, bad kernel types, huge sizes that
// must fail cleanly; and a few values checked by hand (a grey pixel's HSV,
// a 2x2 crop of a ramp, a greedy suppression). The numbers against
// TensorFlow itself are in tests/conformance/image_ops_test.py.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::Node;
using testing_util::RunAll;
using testing_util::RunOk;
using testing_util::RunStatus;
using testing_util::Scalar;

void ExpectError(const absl::Status& s, absl::string_view needle,
                 absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  EXPECT_EQ(s.code(), code) << s;
  EXPECT_NE(s.message().find(needle), absl::string_view::npos)
      << "'" << needle << "' not in: " << s;
}

Tensor Ints(std::vector<int32_t> v) {
  return MakeTensor<int32_t>({static_cast<int64_t>(v.size())}, v);
}

Tensor Ramp(int64_t b, int64_t h, int64_t w, int64_t c) {
  std::vector<float> v(b * h * w * c);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return MakeTensor<float>({b, h, w, c}, v);
}

// ---- Colour.

TEST(ImageColorTest, GreyPixelHasNoHueOrSaturation) {
  Tensor hsv = RunOk(Node("RGBToHSV", DT_FLOAT), {MakeTensor<float>({1, 3}, {0.5f, 0.5f, 0.5f})});
  ASSERT_EQ(hsv.NumElements(), 3);
  EXPECT_EQ(hsv.data<float>()[0], 0.0f);
  EXPECT_EQ(hsv.data<float>()[1], 0.0f);
  EXPECT_EQ(hsv.data<float>()[2], 0.5f);
  Tensor rgb = RunOk(Node("HSVToRGB", DT_FLOAT), {MakeTensor<float>({3}, {0.0f, 1.0f, 1.0f})});
  EXPECT_EQ(rgb.data<float>()[0], 1.0f);
  EXPECT_EQ(rgb.data<float>()[1], 0.0f);
  EXPECT_EQ(rgb.data<float>()[2], 0.0f);
}

TEST(ImageColorTest, ChannelCountsAndRanks) {
  ExpectError(RunStatus(Node("RGBToHSV", DT_FLOAT), {Ramp(1, 2, 2, 4)}), "3 channels");
  ExpectError(RunStatus(Node("HSVToRGB", DT_FLOAT), {Scalar(1.0f)}), "at least 1D");
  ExpectError(RunStatus(Node("AdjustHue", DT_FLOAT), {Ramp(1, 2, 2, 2), Scalar(0.1f)}),
              "3 channels");
  ExpectError(RunStatus(Node("AdjustSaturation", DT_FLOAT),
                        {MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}), Scalar(0.1f)}),
              "at least 3-D");
  ExpectError(RunStatus(Node("AdjustHue", DT_FLOAT), {Ramp(1, 2, 2, 3), Ints({1})}),
              "delta must be scalar");
  ExpectError(RunStatus(Node("AdjustContrastv2", DT_FLOAT),
                        {Ramp(1, 2, 2, 3), MakeTensor<float>({2}, {1, 2})}),
              "contrast_factor must be scalar");
  ExpectError(RunStatus(Node("AdjustContrast", DT_FLOAT),
                        {Ramp(1, 2, 2, 3), Scalar(1.0f), MakeTensor<float>({1}, {0}),
                         Scalar(1.0f)}),
              "min_value must be scalar");
}

TEST(ImageColorTest, HueDeltaOfInfinityDoesNotHang) {
  Tensor out = RunOk(Node("AdjustHue", DT_FLOAT),
                     {MakeTensor<float>({1, 1, 3}, {0.2f, 0.5f, 0.9f}), Scalar(INFINITY)});
  EXPECT_EQ(out.NumElements(), 3);
}

TEST(ImageColorTest, ContrastKeepsTheMean) {
  Tensor out = RunOk(Node("AdjustContrastv2", DT_FLOAT),
                     {MakeTensor<float>({1, 2, 1}, {1.0f, 3.0f}), Scalar(2.0f)});
  EXPECT_EQ(out.data<float>()[0], 0.0f);
  EXPECT_EQ(out.data<float>()[1], 4.0f);
}

// ---- Boxes.

TEST(ImageDrawTest, Errors) {
  const Tensor boxes = MakeTensor<float>({1, 1, 4}, {0, 0, 1, 1});
  ExpectError(RunStatus(Node("DrawBoundingBoxes", DT_FLOAT), {MakeTensor<float>({2, 3, 3}, std::vector<float>(18, 0.0f)), boxes}),
              "rank of the images");
  ExpectError(RunStatus(Node("DrawBoundingBoxes", DT_FLOAT), {Ramp(1, 3, 3, 2), boxes}),
              "Channel depth");
  ExpectError(RunStatus(Node("DrawBoundingBoxes", DT_FLOAT), {Ramp(2, 3, 3, 3), boxes}),
              "batch sizes");
  ExpectError(RunStatus(Node("DrawBoundingBoxesV2", DT_FLOAT),
                        {Ramp(1, 3, 3, 3), boxes, MakeTensor<float>({1, 2}, {1, 1})}),
              "colors must have equal or more channels");
}

TEST(ImageDrawTest, NanBoxIsSkipped) {
  Tensor out = RunOk(Node("DrawBoundingBoxes", DT_FLOAT),
                     {Ramp(1, 3, 3, 1), MakeTensor<float>({1, 1, 4}, {NAN, 0, NAN, 1})});
  ASSERT_EQ(out.NumElements(), 9);
}

// ---- Non-max suppression.

NodeBuilder Nms(const char* op) {
  NodeBuilder b("n", op);
  if (std::string(op) != "NonMaxSuppression" &&
      std::string(op) != "NonMaxSuppressionWithOverlaps") {
    b.Attr("T", DT_FLOAT);
    if (std::string(op) != "NonMaxSuppressionV5") b.Attr("T_threshold", DT_FLOAT);
  }
  return b;
}

const Tensor kBoxes = MakeTensor<float>({3, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3});
const Tensor kScores = MakeTensor<float>({3}, {0.9f, 0.8f, 0.7f});

TEST(ImageNmsTest, GreedySelection) {
  Tensor sel = RunOk(Nms("NonMaxSuppressionV3"),
                     {kBoxes, kScores, Scalar<int32_t>(3), Scalar(0.5f), Scalar(0.0f)});
  ASSERT_EQ(sel.NumElements(), 2);
  EXPECT_EQ(sel.data<int32_t>()[0], 0);
  EXPECT_EQ(sel.data<int32_t>()[1], 2);
  std::vector<Tensor> v4 = RunAll(Nms("NonMaxSuppressionV4").Attr("pad_to_max_output_size", true),
                                  {kBoxes, kScores, Scalar<int32_t>(5), Scalar(0.5f),
                                   Scalar(0.0f)});
  ASSERT_EQ(v4.size(), 2u);
  EXPECT_EQ(v4[0].NumElements(), 5);
  EXPECT_EQ(v4[1].data<int32_t>()[0], 2);
}

TEST(ImageNmsTest, Errors) {
  ExpectError(RunStatus(Nms("NonMaxSuppressionV2"),
                        {kBoxes, kScores, Scalar<int32_t>(3), Scalar(1.5f)}),
              "iou_threshold must be in [0, 1]");
  ExpectError(RunStatus(Nms("NonMaxSuppressionV3"),
                        {kBoxes, kScores, Scalar<int32_t>(3), Scalar(-0.1f), Scalar(0.0f)}),
              "iou_threshold must be in [0, 1]");
  ExpectError(RunStatus(Nms("NonMaxSuppression").Attr("iou_threshold", 2.0f),
                        {kBoxes, kScores, Scalar<int32_t>(3)}),
              "iou_threshold must be in [0, 1]");
  ExpectError(RunStatus(Nms("NonMaxSuppressionV3"),
                        {kBoxes, kScores, Scalar<int32_t>(-1), Scalar(0.5f), Scalar(0.0f)}),
              "output size must be non-negative");
  ExpectError(RunStatus(Nms("NonMaxSuppressionV3"),
                        {MakeTensor<float>({4}, {0, 0, 1, 1}), kScores, Scalar<int32_t>(3),
                         Scalar(0.5f), Scalar(0.0f)}),
              "boxes must be 2-D");
  ExpectError(RunStatus(Nms("NonMaxSuppressionV3"),
                        {MakeTensor<float>({1, 3}, {0, 0, 1}), kScores, Scalar<int32_t>(3),
                         Scalar(0.5f), Scalar(0.0f)}),
              "boxes must have 4 columns");
  ExpectError(RunStatus(Nms("NonMaxSuppressionV3"),
                        {kBoxes, MakeTensor<float>({2}, {1, 2}), Scalar<int32_t>(3),
                         Scalar(0.5f), Scalar(0.0f)}),
              "scores has incompatible shape");
  ExpectError(RunStatus(Nms("NonMaxSuppressionV3"),
                        {kBoxes, kScores, Ints({3}), Scalar(0.5f), Scalar(0.0f)}),
              "max_output_size must be 0-D");
  ExpectError(RunStatus(Nms("NonMaxSuppressionV5"),
                        {kBoxes, kScores, Scalar<int32_t>(3), Scalar(0.5f), Scalar(0.0f),
                         Scalar(-1.0f)}),
              "soft_nms_sigma_val must be >= 0");
  ExpectError(RunStatus(Nms("NonMaxSuppressionWithOverlaps"),
                        {MakeTensor<float>({2, 3}, {0, 0, 0, 0, 0, 0}),
                         MakeTensor<float>({2}, {1, 2}), Scalar<int32_t>(3), Scalar(0.5f),
                         Scalar(0.0f)}),
              "overlaps must be square");
}

TEST(ImageNmsTest, CombinedErrors) {
  NodeBuilder b("n", "CombinedNonMaxSuppression");
  const Tensor boxes = MakeTensor<float>({1, 3, 1, 4}, std::vector<float>(12, 0.5f));
  const Tensor scores = MakeTensor<float>({1, 3, 2}, std::vector<float>(6, 0.5f));
  ExpectError(RunStatus(b, {boxes, scores, Scalar<int32_t>(0), Scalar<int32_t>(4),
                            Scalar(0.5f), Scalar(0.0f)}),
              "max_size_per_class must be positive");
  ExpectError(RunStatus(b, {boxes, scores, Scalar<int32_t>(2), Scalar<int32_t>(0),
                            Scalar(0.5f), Scalar(0.0f)}),
              "max_total_size must be > 0");
  ExpectError(RunStatus(b, {boxes, scores, Scalar<int32_t>(2), Scalar<int32_t>(4),
                            Scalar(1.5f), Scalar(0.0f)}),
              "iou_threshold must be in [0, 1]");
  ExpectError(RunStatus(b, {MakeTensor<float>({1, 3, 4}, std::vector<float>(12, 0)), scores,
                            Scalar<int32_t>(2), Scalar<int32_t>(4), Scalar(0.5f), Scalar(0.0f)}),
              "boxes must be 4-D");
  ExpectError(RunStatus(b, {MakeTensor<float>({1, 3, 3, 4}, std::vector<float>(36, 0)), scores,
                            Scalar<int32_t>(2), Scalar<int32_t>(4), Scalar(0.5f), Scalar(0.0f)}),
              "third dimension of boxes");
}

// ---- Crop and resize.

NodeBuilder Crop(const char* method = "bilinear") {
  return NodeBuilder("n", "CropAndResize").Attr("T", DT_FLOAT).Attr("method", method)
      .Attr("extrapolation_value", 0.0f);
}

TEST(ImageCropTest, BilinearOfARamp) {
  // A 3x3 ramp (0..8) cropped to its full extent at 2x2: the corners.
  Tensor out = RunOk(Crop(), {Ramp(1, 3, 3, 1), MakeTensor<float>({1, 4}, {0, 0, 1, 1}),
                              Ints({0}), Ints({2, 2})});
  ASSERT_EQ(out.NumElements(), 4);
  EXPECT_EQ(out.data<float>()[0], 0.0f);
  EXPECT_EQ(out.data<float>()[1], 2.0f);
  EXPECT_EQ(out.data<float>()[2], 6.0f);
  EXPECT_EQ(out.data<float>()[3], 8.0f);
}

TEST(ImageCropTest, Errors) {
  const Tensor img = Ramp(2, 3, 3, 1);
  const Tensor box = MakeTensor<float>({1, 4}, {0, 0, 1, 1});
  ExpectError(RunStatus(Crop(), {img, box, Ints({2}), Ints({2, 2})}),
              "box_index has values outside [0, batch_size)", absl::StatusCode::kOutOfRange);
  ExpectError(RunStatus(Crop(), {img, box, Ints({-1}), Ints({2, 2})}),
              "box_index has values outside", absl::StatusCode::kOutOfRange);
  ExpectError(RunStatus(Crop(), {img, box, Ints({0}), Ints({0, 2})}),
              "crop dimensions must be positive");
  ExpectError(RunStatus(Crop(), {img, box, Ints({0}), Ints({2, -3})}),
              "crop dimensions must be positive");
  ExpectError(RunStatus(Crop(), {img, box, Ints({0}), Ints({2, 2, 2})}),
              "crop_size must have two elements");
  ExpectError(RunStatus(Crop(), {MakeTensor<float>({3, 3, 1}, std::vector<float>(9, 1.0f)), box, Ints({0}), Ints({2, 2})}),
              "input image must be 4-D");
  ExpectError(RunStatus(Crop(), {img, MakeTensor<float>({1, 3}, {0, 0, 1}), Ints({0}),
                                 Ints({2, 2})}),
              "boxes must have 4 columns");
  ExpectError(RunStatus(Crop(), {img, box, Ints({0, 1}), Ints({2, 2})}),
              "box_index has incompatible shape");
  ExpectError(RunStatus(Crop(), {img, MakeTensor<float>({1, 4}, {0, 0, NAN, 1}), Ints({0}),
                                 Ints({2, 2})}),
              "not finite");
  // Huge crops fail on the output's size, not by allocating.
  ExpectError(RunStatus(Crop(), {img, MakeTensor<float>({2, 4}, {0, 0, 1, 1, 0, 0, 1, 1}),
                                 Ints({0, 1}), Ints({2147483647, 2147483647})}),
              "too large", absl::StatusCode::kResourceExhausted);
}

TEST(ImageCropTest, GradErrors) {
  NodeBuilder gi("n", "CropAndResizeGradImage");
  gi.Attr("T", DT_FLOAT).Attr("method", "bilinear");
  const Tensor grads = Ramp(1, 2, 2, 1);
  const Tensor box = MakeTensor<float>({1, 4}, {0, 0, 1, 1});
  ExpectError(RunStatus(gi, {grads, box, Ints({3}), Ints({2, 3, 3, 1})}),
              "box_index has values outside", absl::StatusCode::kOutOfRange);
  ExpectError(RunStatus(gi, {grads, box, Ints({0}), Ints({2, 3, 3})}),
              "image_size must have 4 elements");
  ExpectError(RunStatus(gi, {grads, box, Ints({0}), Ints({2, 3, 3, 2})}),
              "image_size and grads are incompatible");
  ExpectError(RunStatus(gi, {grads, box, Ints({0}), Ints({2, 0, 3, 1})}),
              "image dimensions must be positive");
  NodeBuilder gb("n", "CropAndResizeGradBoxes");
  gb.Attr("T", DT_FLOAT).Attr("method", "bilinear");
  ExpectError(RunStatus(gb, {grads, Ramp(1, 3, 3, 2), box, Ints({0})}), "depth differ");
  ExpectError(RunStatus(gb, {grads, Ramp(1, 3, 3, 1), box, Ints({1})}),
              "box_index has values outside", absl::StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace weft
