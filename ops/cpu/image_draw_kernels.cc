// DrawBoundingBoxes and DrawBoundingBoxesV2 (float, half) on CPU, as
// TensorFlow 2.21 draws: a copy of the images with each box's outline
// painted in its colour (box i takes colour i mod the table's size; V2's
// `colors` rows when non-empty, else TensorFlow's ten default colours,
// all-1 first channel for grey images). A box edge is at
// trunc(coordinate * (size - 1)) computed in float; inverted boxes and
// boxes wholly outside are skipped, edges outside the image are not drawn
// and the others are clamped to it. Images are [batch, h, w, 1|3|4],
// boxes [batch, n, 4].
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/float_convert.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"
#include "runtime/core/types.h"

namespace weft {
namespace {

std::vector<std::vector<float>> DefaultColors(int64_t depth) {
  std::vector<std::vector<float>> t = {
      {1, 1, 0, 1}, {0, 0, 1, 1},   {1, 0, 0, 1},   {0, 1, 0, 1},
      {0.5, 0, 0.5, 1}, {0.5, 0.5, 0, 1}, {0.5, 0, 0, 1}, {0, 0, 0.5, 1},
      {0, 1, 1, 1}, {1, 0, 1, 1}};
  if (depth == 1) {
    for (auto& c : t) c[0] = 1;
  }
  return t;
}

// trunc(v) as an int64, with x86's answer (INT64_MIN) where v is NaN or
// out of range, as TensorFlow's conversion gives there.
int64_t TruncToInt64(float v) {
  if (!(v > -9.2233715e18f && v < 9.2233715e18f)) {
    return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(v);
}

template <typename T>
class DrawBoundingBoxesOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& images = c->input(0);
    const Tensor& boxes = c->input(1);
    OP_REQUIRES(c, images.dims() == 4,
                absl::InvalidArgumentError("The rank of the images should be 4"));
    OP_REQUIRES(c, boxes.dims() == 3,
                absl::InvalidArgumentError("The rank of the boxes tensor should be 3"));
    OP_REQUIRES(c, images.dim_size(0) == boxes.dim_size(0),
                absl::InvalidArgumentError("The batch sizes should be the same"));
    const int64_t depth = images.dim_size(3);
    OP_REQUIRES(c, depth == 4 || depth == 1 || depth == 3,
                absl::InvalidArgumentError(
                    "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)"));
    OP_REQUIRES(c, boxes.dim_size(2) == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "The size of the third dimension of the box must be 4. Received: ",
                    boxes.dim_size(2))));
    std::vector<std::vector<float>> colors;
    if (c->num_inputs() == 3) {
      const Tensor& t = c->input(2);
      OP_REQUIRES(c, t.dims() == 2,
                  absl::InvalidArgumentError(absl::StrCat(
                      "colors must be a 2-D matrix", t.shape().DebugString())));
      OP_REQUIRES(c, t.dim_size(1) >= depth,
                  absl::InvalidArgumentError(absl::StrCat(
                      "colors must have equal or more channels than the image provided: ",
                      t.shape().DebugString())));
      for (int64_t i = 0; t.NumElements() > 0 && i < t.dim_size(0); ++i) {
        const float* row = t.data<float>() + i * t.dim_size(1);
        colors.emplace_back(row, row + depth);
      }
    }
    if (colors.empty()) colors = DefaultColors(depth);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, images.shape(), &out));
    std::copy_n(images.data<T>(), images.NumElements(), out->data<T>());
    const int64_t batch = images.dim_size(0), height = images.dim_size(1),
                  width = images.dim_size(2), n = boxes.dim_size(1);
    T* canvas = out->data<T>();
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < n; ++i) {
        const float* box = boxes.data<float>() + (b * n + i) * 4;
        const std::vector<float>& color = colors[i % colors.size()];
        auto paint = [&](int64_t y, int64_t x) {
          T* px = canvas + ((b * height + y) * width + x) * depth;
          for (int64_t k = 0; k < depth; ++k) px[k] = FromFloat<T>(color[k]);
        };
        const int64_t top = TruncToInt64(box[0] * static_cast<float>(height - 1));
        const int64_t bottom = TruncToInt64(box[2] * static_cast<float>(height - 1));
        const int64_t left = TruncToInt64(box[1] * static_cast<float>(width - 1));
        const int64_t right = TruncToInt64(box[3] * static_cast<float>(width - 1));
        if (top > bottom || left > right) continue;  // inverted
        if (top >= height || bottom < 0 || left >= width || right < 0) continue;
        const int64_t y0 = std::max<int64_t>(top, 0), y1 = std::min(bottom, height - 1);
        const int64_t x0 = std::max<int64_t>(left, 0), x1 = std::min(right, width - 1);
        for (int64_t x = x0; x <= x1; ++x) {
          if (top >= 0) paint(top, x);
          if (bottom < height) paint(bottom, x);
        }
        for (int64_t y = y0; y <= y1; ++y) {
          if (left >= 0) paint(y, left);
          if (right < width) paint(y, right);
        }
      }
    }
  }
};

}  // namespace

void RegisterImageDrawKernels(KernelRegistry* r) {
  for (const char* op : {"DrawBoundingBoxes", "DrawBoundingBoxesV2"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT),
                MakeKernel<DrawBoundingBoxesOp<float>>);
    r->Register(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_HALF),
                MakeKernel<DrawBoundingBoxesOp<Half>>);
  }
}

}  // namespace weft
