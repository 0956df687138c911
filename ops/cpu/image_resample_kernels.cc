// ResizeArea, ResizeBicubic and ResizeBicubicGrad on CPU (NHWC, float
// output), with TensorFlow 2.21's arithmetic (geometry shared with the
// other resizes, image_resize_geometry.h):
//   area: output pixel (y, x) averages the input cells [y * hs, (y + 1) *
//     hs) x [x * ws, (x + 1) * ws), partial cells weighted by their covered
//     fraction, indices clamped to the image; per row the x sum first
//     (start cell * its weight, whole cells, end cell * its weight), times
//     the row's weight, summed over rows and scaled by 1 / (hs * ws).
//   bicubic: four taps per axis from TensorFlow's 1025-entry coefficient
//     table (a = -0.75 legacy, clamped indices; a = -0.5 Keys with
//     half_pixel_centers, out-of-image taps weighted 0 and the rest
//     renormalised), the column value interpolated along y first for each
//     of the four x taps, then along x, sums left to right in float.
//   bicubic gradient: each incoming gradient times y weight times x weight
//     added into the 16 taps in T, in TensorFlow's order.
// Work is split over (image, output row) forward and over images for the
// gradient.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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

using image_resize::AllocateImage;
using image_resize::CheckAttrPair;
using image_resize::ForwardGeometry;
using image_resize::Geometry;
using image_resize::ReadResizeAttrs;
using image_resize::RegisterForTypes;
using image_resize::ResizeAttrs;
using image_resize::ResizeScale;

int64_t Bound(int64_t v, int64_t limit) {
  return std::min(limit - 1, std::max<int64_t>(0, v));
}

// Validates the inputs and allocates output 0; false when Compute is done
// (an error, set on c, or an empty output).
bool StartResize(OpKernelContext* c, const ResizeAttrs& a, Geometry* g, Tensor** out) {
  absl::StatusOr<Geometry> geom = ForwardGeometry(c, a);
  absl::Status s = geom.status();
  if (s.ok()) {
    *g = *geom;
    s = AllocateImage(c, g->batch, g->out_h, g->out_w, g->channels, out);
  }
  c->SetStatus(s);
  return s.ok() && (*out)->NumElements() > 0;
}

// ---- Area.

// The covered fraction of cell i by [lo, hi) (TensorFlow's expression).
float CellScale(int64_t i, float lo, float hi, float scale) {
  const float fi = static_cast<float>(i);
  if (fi < lo) return fi + 1 > hi ? scale : fi + 1 - lo;
  return fi + 1 > hi ? hi - fi : 1.0f;
}

struct AreaSpan {
  int64_t start, end;  // cells [start, end)
  float start_scale, end_scale;
};

AreaSpan AreaSpanAt(int64_t i, float scale) {
  const float lo = static_cast<float>(i) * scale;
  const float hi = static_cast<float>(i + 1) * scale;
  AreaSpan s;
  s.start = static_cast<int64_t>(std::floor(lo));
  // A one-pixel axis with align_corners has scale 0: its one cell, whole.
  s.end = std::max(static_cast<int64_t>(std::ceil(hi)), s.start + 1);
  if (scale == 0) {
    s.start_scale = s.end_scale = 1.0f;
    return s;
  }
  s.start_scale = CellScale(s.start, lo, hi, scale);
  s.end_scale = CellScale(s.end - 1, lo, hi, scale);
  return s;
}

template <typename T>
class ResizeAreaOp : public OpKernel {
 public:
  explicit ResizeAreaOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("align_corners", &a_.align_corners));
  }

  void Compute(OpKernelContext* c) override {
    Geometry g;
    Tensor* out = nullptr;
    if (!StartResize(c, a_, &g, &out)) return;
    std::vector<AreaSpan> xs(g.out_w);
    for (int64_t x = 0; x < g.out_w; ++x) xs[x] = AreaSpanAt(x, g.w_scale);
    const float scale = static_cast<float>(
        1.0 / ((g.h_scale == 0 ? 1.0f : g.h_scale) * (g.w_scale == 0 ? 1.0f : g.w_scale)));
    const int64_t ch = g.channels, in_row = g.in_w * ch;
    const T* in = c->input(0).data<T>();
    float* o = out->data<float>();
    ParallelRange(c, g.batch * g.out_h, g.out_w * ch * 16, [&](int64_t r0, int64_t r1) {
      std::vector<const T*> rows;
      std::vector<float> row_scales;
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t b = r / g.out_h, y = r % g.out_h;
        const float lo = static_cast<float>(y) * g.h_scale;
        const float hi = static_cast<float>(y + 1) * g.h_scale;
        const int64_t y0 = static_cast<int64_t>(std::floor(lo));
        const int64_t y1 = std::max(static_cast<int64_t>(std::ceil(hi)), y0 + 1);
        rows.clear();
        row_scales.clear();
        for (int64_t i = y0; i < y1; ++i) {
          row_scales.push_back(g.h_scale == 0 ? 1.0f : CellScale(i, lo, hi, g.h_scale));
          rows.push_back(in + (b * g.in_h + Bound(i, g.in_h)) * in_row);
        }
        float* dst = o + r * g.out_w * ch;
        for (int64_t x = 0; x < g.out_w; ++x) {
          const AreaSpan& s = xs[x];
          for (int64_t k = 0; k < ch; ++k) {
            float sum = 0;
            for (size_t i = 0; i < rows.size(); ++i) {
              const T* row = rows[i];
              float sum_y = ToFloat(row[Bound(s.start, g.in_w) * ch + k]) * s.start_scale;
              if (s.start + 1 != s.end) {
                for (int64_t xi = s.start + 1; xi < s.end - 1; ++xi) {
                  sum_y += ToFloat(row[Bound(xi, g.in_w) * ch + k]);
                }
                sum_y += ToFloat(row[Bound(s.end - 1, g.in_w) * ch + k]) * s.end_scale;
              }
              sum += sum_y * row_scales[i];
            }
            dst[x * ch + k] = sum * scale;
          }
        }
      }
    });
  }

 private:
  ResizeAttrs a_;
};

// ---- Bicubic.

constexpr int64_t kTableSize = 1024;

// TensorFlow's coefficient table for a: entries 2i and 2i + 1 are the
// weights of the near and far taps at offset i / 1024.
std::vector<float> CoefficientTable(double a) {
  std::vector<float> t((kTableSize + 1) * 2);
  for (int64_t i = 0; i <= kTableSize; ++i) {
    float x = static_cast<float>(i * 1.0 / kTableSize);
    t[i * 2] = static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
    x = static_cast<float>(x + 1.0);
    t[i * 2 + 1] = static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
  }
  return t;
}

const std::vector<float>& Table(bool keys) {
  static const std::vector<float>* keys_table = new std::vector<float>(CoefficientTable(-0.5f));
  static const std::vector<float>* legacy_table =
      new std::vector<float>(CoefficientTable(-0.75f));
  return keys ? *keys_table : *legacy_table;
}

struct Taps {
  float w[4];
  int64_t i[4];
};

// The four taps of output index `out` over `limit` input pixels.
Taps TapsAt(float scale, int64_t out, int64_t limit, bool half_pixel) {
  const float in_f = half_pixel
                         ? (static_cast<float>(out) + 0.5f) * scale - 0.5f
                         : static_cast<float>(out) * scale;
  const int64_t in = static_cast<int64_t>(std::floor(in_f));
  const float delta = in_f - static_cast<float>(in);
  const int64_t offset = std::lrint(delta * kTableSize);
  const std::vector<float>& t = Table(half_pixel);
  const float w[4] = {t[offset * 2 + 1], t[offset * 2], t[(kTableSize - offset) * 2],
                      t[(kTableSize - offset) * 2 + 1]};
  Taps taps;
  for (int k = 0; k < 4; ++k) {
    taps.i[k] = Bound(in - 1 + k, limit);
    taps.w[k] = !half_pixel || taps.i[k] == in - 1 + k ? w[k] : 0.0f;
  }
  if (half_pixel) {
    const float sum = taps.w[0] + taps.w[1] + taps.w[2] + taps.w[3];
    if (std::fabs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
      const float inv = 1.0f / sum;
      for (float& v : taps.w) v *= inv;
    }
  }
  return taps;
}

std::vector<Taps> TapTable(float scale, int64_t out, int64_t limit, bool half_pixel) {
  std::vector<Taps> t(out);
  for (int64_t i = 0; i < out; ++i) t[i] = TapsAt(scale, i, limit, half_pixel);
  return t;
}

template <typename T>
class ResizeBicubicOp : public OpKernel {
 public:
  explicit ResizeBicubicOp(OpKernelConstruction* c) : OpKernel(c), a_(ReadResizeAttrs(c)) {}

  void Compute(OpKernelContext* c) override {
    Geometry g;
    Tensor* out = nullptr;
    if (!StartResize(c, a_, &g, &out)) return;
    const bool hp = a_.half_pixel_centers;
    const std::vector<Taps> xs = TapTable(g.w_scale, g.out_w, g.in_w, hp);
    const std::vector<Taps> ys = TapTable(g.h_scale, g.out_h, g.in_h, hp);
    const int64_t ch = g.channels, in_row = g.in_w * ch;
    const T* in = c->input(0).data<T>();
    float* o = out->data<float>();
    ParallelRange(c, g.batch * g.out_h, g.out_w * ch * 40, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t b = r / g.out_h;
        const Taps& ty = ys[r % g.out_h];
        const T* rows[4];
        for (int k = 0; k < 4; ++k) rows[k] = in + (b * g.in_h + ty.i[k]) * in_row;
        float* dst = o + r * g.out_w * ch;
        for (int64_t x = 0; x < g.out_w; ++x) {
          const Taps& tx = xs[x];
          for (int64_t k = 0; k < ch; ++k) {
            float col[4];
            for (int j = 0; j < 4; ++j) {
              const int64_t p = tx.i[j] * ch + k;
              col[j] = ToFloat(rows[0][p]) * ty.w[0] + ToFloat(rows[1][p]) * ty.w[1] +
                       ToFloat(rows[2][p]) * ty.w[2] + ToFloat(rows[3][p]) * ty.w[3];
            }
            dst[x * ch + k] = col[0] * tx.w[0] + col[1] * tx.w[1] + col[2] * tx.w[2] +
                              col[3] * tx.w[3];
          }
        }
      }
    });
  }

 private:
  ResizeAttrs a_;
};

template <typename T>
class ResizeBicubicGradOp : public OpKernel {
 public:
  explicit ResizeBicubicGradOp(OpKernelConstruction* c)
      : OpKernel(c), a_(ReadResizeAttrs(c)) {}

  void Compute(OpKernelContext* c) override {
    OP_REQUIRES_OK(c, CheckAttrPair(a_));
    const Tensor& grads = c->input(0);
    const Tensor& original = c->input(1);
    OP_REQUIRES(c, grads.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "input_grad must be 4-dimensional", grads.shape().DebugString())));
    const int64_t batch = grads.dim_size(0), rh = grads.dim_size(1), rw = grads.dim_size(2),
                  ch = grads.dim_size(3);
    OP_REQUIRES(c, rh > 0 && rw > 0,
                absl::InvalidArgumentError("resized dimensions must be positive"));
    OP_REQUIRES(c, original.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "original_image must be 4-dimensional", original.shape().DebugString())));
    const int64_t oh = original.dim_size(1), ow = original.dim_size(2);
    OP_REQUIRES(c, oh > 0 && ow > 0,
                absl::InvalidArgumentError("original dimensions must be positive"));
    OP_REQUIRES(c, oh < 2147483647 && ow < 2147483647,
                absl::InvalidArgumentError("original sizes must be between 0 and max int32"));
    OP_REQUIRES(c, original.dim_size(0) == batch,
                absl::InvalidArgumentError("original_image and grads batch sizes differ"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, AllocateImage(c, batch, oh, ow, ch, &out));
    if (out->NumElements() == 0) return;
    const bool hp = a_.half_pixel_centers;
    const std::vector<Taps> xs = TapTable(ResizeScale(ow, rw, a_.align_corners), rw, ow, hp);
    const std::vector<Taps> ys = TapTable(ResizeScale(oh, rh, a_.align_corners), rh, oh, hp);
    const float* g = grads.data<float>();
    T* o = out->data<T>();
    ParallelRange(c, batch, rh * rw * ch * 32, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        T* image = o + b * oh * ow * ch;
        std::fill(image, image + oh * ow * ch, T(0));
        for (int64_t y = 0; y < rh; ++y) {
          const Taps& ty = ys[y];
          for (int64_t x = 0; x < rw; ++x) {
            const Taps& tx = xs[x];
            const float* src = g + ((b * rh + y) * rw + x) * ch;
            for (int64_t k = 0; k < ch; ++k) {
              const T v = static_cast<T>(src[k]);
              for (int i = 0; i < 4; ++i) {
                T* row = image + ty.i[i] * ow * ch;
                for (int j = 0; j < 4; ++j) {
                  row[tx.i[j] * ch + k] += static_cast<T>(v * static_cast<T>(ty.w[i]) *
                                                          static_cast<T>(tx.w[j]));
                }
              }
            }
          }
        }
      }
    });
  }

 private:
  ResizeAttrs a_;
};

}  // namespace

void RegisterImageResampleKernels(KernelRegistry* r) {
  RegisterForTypes<ResizeAreaOp, int8_t, uint8_t, int16_t, uint16_t, int32_t, int64_t, Half,
                float, double, BFloat16>(r, "ResizeArea", "size");
  RegisterForTypes<ResizeBicubicOp, int8_t, uint8_t, int16_t, uint16_t, int32_t, int64_t, Half,
                float, double, BFloat16>(r, "ResizeBicubic", "size");
  RegisterForTypes<ResizeBicubicGradOp, float, double>(r, "ResizeBicubicGrad", nullptr);
}

}  // namespace weft
