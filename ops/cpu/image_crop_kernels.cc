// CropAndResize and its gradients (CropAndResizeGradImage,
// CropAndResizeGradBoxes) on CPU, with TensorFlow 2.21's sampling: box b
// (y1, x1, y2, x2, normalised) samples crop row y at
//   in_y = y1 * (H - 1) + y * ((y2 - y1) * (H - 1) / (crop_h - 1))
// in float, or at 0.5 * (y1 + y2) * (H - 1) (in double, then float) for a
// one-row crop; likewise columns. Samples outside [0, H - 1] x [0, W - 1]
// take extrapolation_value (and pass no gradient). Bilinear lerps the
// floor/ceil neighbours (top and bottom along x, then along y, in float);
// nearest rounds halves away from zero. The image gradient adds each
// weighted gradient into its pixels in T in box order (one thread, so sums
// round the same every run); the boxes' gradient is TensorFlow's chain
// rule through in_y/in_x. box_ind outside [0, batch) is OUT_OF_RANGE.
// Forward work is split over (box, crop row).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/float_convert.h"
#include "ops/cpu/image_resize_geometry.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"
#include "runtime/core/types.h"

namespace weft {
namespace {

// boxes [n, 4] and box_ind [n] (both may be empty); sets *n.
absl::Status CheckBoxes(const Tensor& boxes, const Tensor& box_ind, int64_t* n) {
  *n = 0;
  if (boxes.NumElements() == 0 && box_ind.NumElements() == 0) return absl::OkStatus();
  if (boxes.dims() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("boxes must be 2-D", boxes.shape().DebugString()));
  }
  *n = boxes.dim_size(0);
  if (boxes.dim_size(1) != 4) {
    return absl::InvalidArgumentError("boxes must have 4 columns");
  }
  if (box_ind.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("box_index must be 1-D", box_ind.shape().DebugString()));
  }
  if (box_ind.dim_size(0) != *n) {
    return absl::InvalidArgumentError("box_index has incompatible shape");
  }
  return absl::OkStatus();
}

absl::Status CheckBoxIndices(const Tensor& box_ind, int64_t n, int64_t batch) {
  for (int64_t b = 0; b < n; ++b) {
    const int32_t i = box_ind.data<int32_t>()[b];
    if (i < 0 || i >= batch) {
      return absl::OutOfRangeError("box_index has values outside [0, batch_size)");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckFinite(const Tensor& boxes) {
  const float* p = boxes.data<float>();
  for (int64_t i = 0; i < boxes.NumElements(); ++i) {
    if (!std::isfinite(p[i])) {
      return absl::InvalidArgumentError(
          "Boxes contains at least one element that is not finite");
    }
  }
  return absl::OkStatus();
}

// Where one box samples along one axis of `size` pixels with `crop`
// samples: sample i is at start + i * step, or `center` for one sample.
struct Axis {
  float start, step, center;
  int64_t size, crop;
  float At(int64_t i) const {
    return crop > 1 ? start + static_cast<float>(i) * step : center;
  }
  bool Outside(float v) const { return v < 0 || v > static_cast<float>(size - 1); }
};

Axis MakeAxis(float lo, float hi, int64_t size, int64_t crop) {
  const float s1 = static_cast<float>(size - 1);
  Axis a;
  a.size = size;
  a.crop = crop;
  a.start = lo * s1;
  a.step = crop > 1 ? (hi - lo) * s1 / static_cast<float>(crop - 1) : 0;
  a.center = static_cast<float>(0.5 * (lo + hi) * (size - 1));
  return a;
}

// The bilinear neighbours of coordinate v.
struct Lerp {
  int64_t lo, hi;
  float frac;
};
Lerp LerpAt(float v) {
  const float f = std::floor(v);
  return {static_cast<int64_t>(f), static_cast<int64_t>(std::ceil(v)), v - f};
}

// fn(y, x, in_y, in_x) for each crop sample inside the image, row-major.
template <typename Fn>
void ForEachInside(const Axis& ay, const Axis& ax, Fn fn) {
  for (int64_t y = 0; y < ay.crop; ++y) {
    const float in_y = ay.At(y);
    if (ay.Outside(in_y)) continue;
    for (int64_t x = 0; x < ax.crop; ++x) {
      const float in_x = ax.At(x);
      if (!ax.Outside(in_x)) fn(y, x, in_y, in_x);
    }
  }
}

std::string ReadMethod(OpKernelConstruction* c) {
  std::string m;
  c->SetStatus(c->GetAttr("method", &m));
  return m;
}

template <typename T>
class CropAndResizeOp : public OpKernel {
 public:
  explicit CropAndResizeOp(OpKernelConstruction* c)
      : OpKernel(c), nearest_(ReadMethod(c) == "nearest") {
    c->SetStatus(c->GetAttr("extrapolation_value", &extrapolation_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& image = c->input(0);
    const Tensor& boxes = c->input(1);
    const Tensor& box_ind = c->input(2);
    const Tensor& crop_size = c->input(3);
    OP_REQUIRES(c, image.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "input image must be 4-D", image.shape().DebugString())));
    const int64_t batch = image.dim_size(0), h = image.dim_size(1),
                  w = image.dim_size(2), depth = image.dim_size(3);
    OP_REQUIRES(c, h > 0 && w > 0,
                absl::InvalidArgumentError("image dimensions must be positive"));
    OP_REQUIRES(c, boxes.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "boxes must be 2-D, got: ", boxes.shape().DebugString())));
    OP_REQUIRES(c, box_ind.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "box_indices must be rank 1 but is shape ",
                    box_ind.shape().DebugString())));
    int64_t n = 0;
    OP_REQUIRES_OK(c, CheckBoxes(boxes, box_ind, &n));
    OP_REQUIRES(c, crop_size.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "crop_size must be 1-D", crop_size.shape().DebugString())));
    OP_REQUIRES(c, crop_size.dim_size(0) == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "crop_size must have two elements", crop_size.shape().DebugString())));
    const int64_t ch = crop_size.data<int32_t>()[0], cw = crop_size.data<int32_t>()[1];
    OP_REQUIRES(c, ch > 0 && cw > 0,
                absl::InvalidArgumentError("crop dimensions must be positive"));
    absl::StatusOr<TensorShape> shape = TensorShape::Build({n, ch, cw, depth});
    OP_REQUIRES_OK(c, shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, *shape, &out));
    OP_REQUIRES_OK(c, CheckBoxIndices(box_ind, n, batch));
    OP_REQUIRES_OK(c, CheckFinite(boxes));
    if (out->NumElements() == 0) return;
    const T* img = image.data<T>();
    const float* bx = boxes.data<float>();
    float* o = out->data<float>();
    ParallelRange(c, n * ch, cw * depth * 8, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t b = r / ch, y = r % ch;
        const float* box = bx + 4 * b;
        const Axis ay = MakeAxis(box[0], box[2], h, ch);
        const Axis ax = MakeAxis(box[1], box[3], w, cw);
        const T* src = img + box_ind.data<int32_t>()[b] * h * w * depth;
        float* dst = o + r * cw * depth;
        const float in_y = ay.At(y);
        if (ay.Outside(in_y)) {
          std::fill(dst, dst + cw * depth, extrapolation_);
          continue;
        }
        const Lerp ly = LerpAt(in_y);
        const int64_t ny = static_cast<int64_t>(std::round(in_y));
        for (int64_t x = 0; x < cw; ++x) {
          float* px = dst + x * depth;
          const float in_x = ax.At(x);
          if (ax.Outside(in_x)) {
            std::fill(px, px + depth, extrapolation_);
            continue;
          }
          if (nearest_) {
            const T* s = src + (ny * w + static_cast<int64_t>(std::round(in_x))) * depth;
            for (int64_t d = 0; d < depth; ++d) px[d] = ToFloat(s[d]);
            continue;
          }
          const Lerp lx = LerpAt(in_x);
          const T* tl = src + (ly.lo * w + lx.lo) * depth;
          const T* tr = src + (ly.lo * w + lx.hi) * depth;
          const T* bl = src + (ly.hi * w + lx.lo) * depth;
          const T* br = src + (ly.hi * w + lx.hi) * depth;
          for (int64_t d = 0; d < depth; ++d) {
            const float top = ToFloat(tl[d]) + (ToFloat(tr[d]) - ToFloat(tl[d])) * lx.frac;
            const float bottom = ToFloat(bl[d]) + (ToFloat(br[d]) - ToFloat(bl[d])) * lx.frac;
            px[d] = top + (bottom - top) * ly.frac;
          }
        }
      }
    });
  }

 private:
  bool nearest_;
  float extrapolation_ = 0;
};

// grads [n, crop_h, crop_w, depth]; sets the crop size.
absl::Status CheckGrads(const Tensor& grads, int64_t* ch, int64_t* cw) {
  if (grads.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("grads image must be 4-D", grads.shape().DebugString()));
  }
  *ch = grads.dim_size(1);
  *cw = grads.dim_size(2);
  if (*ch <= 0 || *cw <= 0) {
    return absl::InvalidArgumentError("grads dimensions must be positive");
  }
  return absl::OkStatus();
}

// a += T(b), in T (half rounds the sum once more, as Eigen::half adds).
template <typename T>
T AddIn(T a, float b) {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    return a + static_cast<T>(b);
  } else {
    return FromFloat<T>(ToFloat(a) + ToFloat(FromFloat<T>(b)));
  }
}

template <typename T>
class CropAndResizeGradImageOp : public OpKernel {
 public:
  explicit CropAndResizeGradImageOp(OpKernelConstruction* c)
      : OpKernel(c), nearest_(ReadMethod(c) == "nearest") {}

  void Compute(OpKernelContext* c) override {
    const Tensor& grads = c->input(0);
    const Tensor& boxes = c->input(1);
    const Tensor& box_ind = c->input(2);
    const Tensor& size = c->input(3);
    int64_t ch, cw, n;
    OP_REQUIRES_OK(c, CheckGrads(grads, &ch, &cw));
    OP_REQUIRES_OK(c, CheckBoxes(boxes, box_ind, &n));
    OP_REQUIRES(c, grads.dim_size(0) == n,
                absl::InvalidArgumentError("boxes and grads have incompatible shape"));
    OP_REQUIRES(c, size.dims() == 1,
                absl::InvalidArgumentError(
                    absl::StrCat("image_size must be 1-D", size.shape().DebugString())));
    OP_REQUIRES(c, size.dim_size(0) == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "image_size must have 4 elements", size.shape().DebugString())));
    const int32_t* s = size.data<int32_t>();
    const int64_t batch = s[0], h = s[1], w = s[2], depth = s[3];
    OP_REQUIRES(c, h > 0 && w > 0,
                absl::InvalidArgumentError("image dimensions must be positive"));
    OP_REQUIRES(c, grads.dim_size(3) == depth,
                absl::InvalidArgumentError("image_size and grads are incompatible"));
    absl::StatusOr<TensorShape> shape = TensorShape::Build({batch, h, w, depth});
    OP_REQUIRES_OK(c, shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, *shape, &out));
    OP_REQUIRES_OK(c, CheckBoxIndices(box_ind, n, batch));
    T* o = out->data<T>();
    std::fill_n(o, out->NumElements(), FromFloat<T>(0.0f));
    const float* g = grads.data<float>();
    for (int64_t b = 0; b < n; ++b) {
      const float* box = boxes.data<float>() + 4 * b;
      const Axis ay = MakeAxis(box[0], box[2], h, ch);
      const Axis ax = MakeAxis(box[1], box[3], w, cw);
      T* dst = o + box_ind.data<int32_t>()[b] * h * w * depth;
      ForEachInside(ay, ax, [&](int64_t y, int64_t x, float in_y, float in_x) {
        const float* gp = g + ((b * ch + y) * cw + x) * depth;
        if (nearest_) {
          T* p = dst + (static_cast<int64_t>(std::round(in_y)) * w +
                        static_cast<int64_t>(std::round(in_x))) * depth;
          for (int64_t d = 0; d < depth; ++d) p[d] = AddIn(p[d], gp[d]);
          return;
        }
        const Lerp ly = LerpAt(in_y), lx = LerpAt(in_x);
        T* tl = dst + (ly.lo * w + lx.lo) * depth;
        T* tr = dst + (ly.lo * w + lx.hi) * depth;
        T* bl = dst + (ly.hi * w + lx.lo) * depth;
        T* br = dst + (ly.hi * w + lx.hi) * depth;
        for (int64_t d = 0; d < depth; ++d) {
          const float top = (1 - ly.frac) * gp[d];
          tl[d] = AddIn(tl[d], (1 - lx.frac) * top);
          tr[d] = AddIn(tr[d], lx.frac * top);
          const float bottom = ly.frac * gp[d];
          bl[d] = AddIn(bl[d], (1 - lx.frac) * bottom);
          br[d] = AddIn(br[d], lx.frac * bottom);
        }
      });
    }
  }

 private:
  bool nearest_;
};

template <typename T>
class CropAndResizeGradBoxesOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const Tensor& grads = c->input(0);
    const Tensor& image = c->input(1);
    const Tensor& boxes = c->input(2);
    const Tensor& box_ind = c->input(3);
    int64_t ch, cw, n;
    OP_REQUIRES_OK(c, CheckGrads(grads, &ch, &cw));
    const int64_t depth = grads.dim_size(3);
    OP_REQUIRES(c, image.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "input image must be 4-D", image.shape().DebugString())));
    const int64_t batch = image.dim_size(0), h = image.dim_size(1), w = image.dim_size(2);
    OP_REQUIRES(c, h > 0 && w > 0,
                absl::InvalidArgumentError("image dimensions must be positive"));
    OP_REQUIRES(c, image.dim_size(3) == depth,
                absl::InvalidArgumentError("image, grads depth differ"));
    OP_REQUIRES_OK(c, CheckBoxes(boxes, box_ind, &n));
    OP_REQUIRES(c, grads.dim_size(0) == n,
                absl::InvalidArgumentError("boxes and grads have incompatible shape"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({n, 4}), &out));
    OP_REQUIRES_OK(c, CheckBoxIndices(box_ind, n, batch));
    float* o = out->data<float>();
    std::fill_n(o, n * 4, 0.0f);
    const float h_ratio = ch > 1 ? static_cast<float>(h - 1) / static_cast<float>(ch - 1) : 0;
    const float w_ratio = cw > 1 ? static_cast<float>(w - 1) / static_cast<float>(cw - 1) : 0;
    ParallelRange(c, n, ch * cw * depth * 20, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const float* box = boxes.data<float>() + 4 * b;
        Axis ay = MakeAxis(box[0], box[2], h, ch);
        Axis ax = MakeAxis(box[1], box[3], w, cw);
        ay.step = ch > 1 ? (box[2] - box[0]) * h_ratio : 0;
        ax.step = cw > 1 ? (box[3] - box[1]) * w_ratio : 0;
        const T* src = image.data<T>() + box_ind.data<int32_t>()[b] * h * w * depth;
        float* gb = o + 4 * b;
        ForEachInside(ay, ax, [&](int64_t y, int64_t x, float in_y, float in_x) {
          const Lerp ly = LerpAt(in_y), lx = LerpAt(in_x);
          const float* gp = grads.data<float>() + ((b * ch + y) * cw + x) * depth;
          for (int64_t d = 0; d < depth; ++d) {
            const float tl = ToFloat(src[(ly.lo * w + lx.lo) * depth + d]);
            const float tr = ToFloat(src[(ly.lo * w + lx.hi) * depth + d]);
            const float bl = ToFloat(src[(ly.hi * w + lx.lo) * depth + d]);
            const float br = ToFloat(src[(ly.hi * w + lx.hi) * depth + d]);
            float gy = (1 - lx.frac) * (bl - tl) + lx.frac * (br - tr);
            float gx = (1 - ly.frac) * (tr - tl) + ly.frac * (br - bl);
            gy *= gp[d];
            gx *= gp[d];
            if (ch > 1) {
              gb[0] += gy * (static_cast<float>(h - 1) - static_cast<float>(y) * h_ratio);
              gb[2] += gy * (static_cast<float>(y) * h_ratio);
            } else {
              gb[0] = static_cast<float>(gb[0] + gy * 0.5 * static_cast<double>(h - 1));
              gb[2] = static_cast<float>(gb[2] + gy * 0.5 * static_cast<double>(h - 1));
            }
            if (cw > 1) {
              gb[1] += gx * (static_cast<float>(w - 1) - static_cast<float>(x) * w_ratio);
              gb[3] += gx * (static_cast<float>(x) * w_ratio);
            } else {
              gb[1] = static_cast<float>(gb[1] + gx * 0.5 * static_cast<double>(w - 1));
              gb[3] = static_cast<float>(gb[3] + gx * 0.5 * static_cast<double>(w - 1));
            }
          }
        });
      }
    });
  }
};

}  // namespace

void RegisterImageCropKernels(KernelRegistry* r) {
  image_resize::RegisterForTypes<CropAndResizeOp, uint8_t, uint16_t, int8_t, int16_t, int32_t,
                     int64_t, Half, float, double>(r, "CropAndResize", "crop_size");
  image_resize::RegisterForTypes<CropAndResizeGradBoxesOp, uint8_t, uint16_t, int8_t, int16_t,
                     int32_t, int64_t, Half, float, double>(r, "CropAndResizeGradBoxes",
                                                            nullptr);
  image_resize::RegisterForTypes<CropAndResizeGradImageOp, Half, float, double>(
      r, "CropAndResizeGradImage", "image_size");
}

}  // namespace weft
