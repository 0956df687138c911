// ResizeBilinear, ResizeBilinearGrad, ResizeNearestNeighbor and
// ResizeNearestNeighborGrad on CPU (NHWC), with TensorFlow's sampling:
//
//   scale = align_corners && out > 1 ? (in - 1) / (out - 1) : in / out
//   (float), a source coordinate of output i is i * scale, or with
//   half_pixel_centers (i + 0.5) * scale - 0.5 (bilinear) and
//   (i + 0.5) * scale before the floor (nearest);
//   bilinear: lower = max(floor(v), 0), upper = min(ceil(v), in - 1),
//     lerp = v - floor(v); top/bottom rows lerped along x, then along y, in
//     float; every input type gives float; same-size resizes are casts;
//   nearest: round (align_corners, halves away from 0) or floor, clamped to
//     in - 1 (and to 0 with half_pixel_centers).
// align_corners with half_pixel_centers is INVALID_ARGUMENT except for
// ResizeNearestNeighborGrad, which TensorFlow lets through. The gradients
// add each output gradient into the input pixels it was sampled from, in
// row-major order per image (so sums round as TensorFlow's do):
// ResizeBilinearGrad with each corner's float weight, summing in T (float
// for half and bfloat16, cast at the end), ResizeNearestNeighborGrad in T.
// Output shapes are checked for overflow and allocated before any
// per-pixel table, so a huge `size` fails on allocation's size check
// instead of allocating. Work is split over (image, row) for the forward
// ops and over (image, channel block) for the gradients.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/bilinear_sources.h"
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
using image_resize::ReadSize;
using image_resize::RegisterForTypes;
using image_resize::ResizeAttrs;
using image_resize::ResizeScale;

// a + b in T; half and bfloat16 add in float and round once, as Eigen's.
template <typename T>
inline T AddIn(T a, T b) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return FromFloat<T>(ToFloat(a) + ToFloat(b));
  } else {
    return static_cast<T>(a + b);
  }
}

// Bilinear: where output index i samples from.
struct Interp {
  int64_t lower, upper;
  float lerp;
};

std::vector<Interp> BilinearTable(int64_t out, int64_t in, float scale,
                                  bool half_pixel) {
  std::vector<Interp> t(out);
  for (int64_t i = 0; i < out; ++i) {
    const float v = half_pixel
                        ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                        : static_cast<float>(i) * scale;
    const float f = std::floor(v);
    // (Clamped above too: past 2^24 float coordinates can round up to in.)
    t[i].lower = std::clamp<int64_t>(static_cast<int64_t>(f), 0, in - 1);
    t[i].upper = std::min<int64_t>(static_cast<int64_t>(std::ceil(v)), in - 1);
    t[i].lerp = v - f;
  }
  return t;
}

// Nearest: the source index of each of `out` indices.
std::vector<int64_t> NearestTable(int64_t out, int64_t in, float scale,
                                  const ResizeAttrs& a) {
  std::vector<int64_t> t(out);
  for (int64_t i = 0; i < out; ++i) {
    const float v = a.half_pixel_centers
                        ? (static_cast<float>(i) + 0.5f) * scale
                        : static_cast<float>(i) * scale;
    int64_t k = static_cast<int64_t>(a.align_corners ? std::round(v)
                                                     : std::floor(v));
    k = std::min(k, in - 1);
    if (a.half_pixel_centers) k = std::max<int64_t>(k, 0);
    t[i] = k;
  }
  return t;
}

// Every resize kernel's attrs, and the forward ops' common start.
class ResizeOpBase : public OpKernel {
 public:
  explicit ResizeOpBase(OpKernelConstruction* c)
      : OpKernel(c), a_(ReadResizeAttrs(c)) {}

 protected:
  // Validates the inputs (nearest: images below 2^24 a side, as
  // TensorFlow's) and allocates output 0. False when Compute is done: an
  // error (set on c) or an empty output.
  bool Start(OpKernelContext* c, bool nearest, Geometry* g, Tensor** out) {
    absl::StatusOr<Geometry> geom = ForwardGeometry(c, a_);
    absl::Status s = geom.status();
    if (s.ok() && nearest &&
        (geom->in_h >= (int64_t{1} << 24) || geom->in_w >= (int64_t{1} << 24))) {
      s = absl::InvalidArgumentError(
          "nearest neighbor requires max height & width of 2^24");
    }
    if (s.ok()) {
      *g = *geom;
      s = AllocateImage(c, g->batch, g->out_h, g->out_w, g->channels, out);
    }
    c->SetStatus(s);
    return s.ok() && (*out)->NumElements() > 0;
  }

  ResizeAttrs a_;
};

template <typename T>
class ResizeBilinearOp : public ResizeOpBase {
 public:
  using ResizeOpBase::ResizeOpBase;

  void Compute(OpKernelContext* c) override {
    Geometry g;
    Tensor* out = nullptr;
    if (!Start(c, /*nearest=*/false, &g, &out)) return;
    const T* in = c->input(0).data<T>();
    float* o = out->data<float>();
    if (g.out_h == g.in_h && g.out_w == g.in_w) {
      ParallelRange(c, out->NumElements(), 2, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] = ToFloat(in[i]);
      });
      return;
    }
    const std::vector<Interp> ys =
        BilinearTable(g.out_h, g.in_h, g.h_scale, a_.half_pixel_centers);
    const std::vector<Interp> xs =
        BilinearTable(g.out_w, g.in_w, g.w_scale, a_.half_pixel_centers);
    const int64_t ch = g.channels;
    const int64_t in_row = g.in_w * ch;
    const int64_t out_row = g.out_w * ch;
    ParallelRange(c, g.batch * g.out_h, out_row * 10, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t b = r / g.out_h;
        const Interp& y = ys[r % g.out_h];
        const T* image = in + b * g.in_h * in_row;
        const T* top = image + y.lower * in_row;
        const T* bottom = image + y.upper * in_row;
        float* dst = o + r * out_row;
        for (int64_t x = 0; x < g.out_w; ++x) {
          const T* tl = top + xs[x].lower * ch;
          const T* tr = top + xs[x].upper * ch;
          const T* bl = bottom + xs[x].lower * ch;
          const T* br = bottom + xs[x].upper * ch;
          const float xl = xs[x].lerp;
          for (int64_t k = 0; k < ch; ++k) {
            const float t = ToFloat(tl[k]) + (ToFloat(tr[k]) - ToFloat(tl[k])) * xl;
            const float bt = ToFloat(bl[k]) + (ToFloat(br[k]) - ToFloat(bl[k])) * xl;
            dst[x * ch + k] = t + (bt - t) * y.lerp;
          }
        }
      }
    });
  }
};

template <typename T>
class ResizeNearestNeighborOp : public ResizeOpBase {
 public:
  using ResizeOpBase::ResizeOpBase;

  void Compute(OpKernelContext* c) override {
    Geometry g;
    Tensor* out = nullptr;
    if (!Start(c, /*nearest=*/true, &g, &out)) return;
    const std::vector<int64_t> ys = NearestTable(g.out_h, g.in_h, g.h_scale, a_);
    const std::vector<int64_t> xs = NearestTable(g.out_w, g.in_w, g.w_scale, a_);
    const T* in = c->input(0).data<T>();
    T* o = out->data<T>();
    const int64_t ch = g.channels;
    const int64_t in_row = g.in_w * ch;
    const int64_t out_row = g.out_w * ch;
    ParallelRange(c, g.batch * g.out_h, out_row, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* src = in + ((r / g.out_h) * g.in_h + ys[r % g.out_h]) * in_row;
        T* dst = o + r * out_row;
        for (int64_t x = 0; x < g.out_w; ++x) {
          std::copy_n(src + xs[x] * ch, ch, dst + x * ch);
        }
      }
    });
  }
};

// Runs fn(b, k0, k1) over images b and blocks [k0, k1) of channels, on the
// pool; each output element is written by one call only.
template <typename Fn>
void ForImageChannelBlocks(OpKernelContext* c, int64_t batch, int64_t channels,
                           int64_t cost_per_channel, Fn fn) {
  const int64_t block = batch >= 8 ? channels : std::max<int64_t>(8, (channels + 7) / 8);
  const int64_t blocks = (channels + block - 1) / block;
  ParallelRange(c, batch * blocks, block * cost_per_channel, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t k0 = (u % blocks) * block;
      fn(u / blocks, k0, std::min(channels, k0 + block));
    }
  });
}

template <typename T>
class ResizeBilinearGradOp : public ResizeOpBase {
  // Sums in double for double, float otherwise.
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;

 public:
  using ResizeOpBase::ResizeOpBase;

  void Compute(OpKernelContext* c) override {
    OP_REQUIRES_OK(c, CheckAttrPair(a_));
    const Tensor& grads = c->input(0);
    const Tensor& original = c->input(1);
    OP_REQUIRES(c, grads.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "input_grad must be 4-dimensional",
                    grads.shape().DebugString(), " (grads)")));
    const int64_t batch = grads.dim_size(0), rh = grads.dim_size(1),
                  rw = grads.dim_size(2), ch = grads.dim_size(3);
    OP_REQUIRES(c, rh > 0 && rw > 0,
                absl::InvalidArgumentError("resized dimensions must be positive"));
    OP_REQUIRES(c, original.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "original_image must be 4-dimensional",
                    original.shape().DebugString())));
    const int64_t oh = original.dim_size(1), ow = original.dim_size(2);
    OP_REQUIRES(c, oh > 0 && ow > 0,
                absl::InvalidArgumentError("original dimensions must be positive"));
    OP_REQUIRES(c, oh < 2147483647 && ow < 2147483647,
                absl::InvalidArgumentError(
                    "original sizes must be between 0 and max int32"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, AllocateImage(c, batch, oh, ow, ch, &out));
    if (out->NumElements() == 0) return;
    const std::vector<Interp> ys = BilinearTable(
        rh, oh, ResizeScale(oh, rh, a_.align_corners), a_.half_pixel_centers);
    const std::vector<Interp> xs = BilinearTable(
        rw, ow, ResizeScale(ow, rw, a_.align_corners), a_.half_pixel_centers);
    std::vector<Acc> acc_storage;
    Acc* acc;
    if constexpr (std::is_same_v<T, Acc>) {
      acc = out->data<T>();
    } else {
      acc_storage.resize(out->NumElements());
      acc = acc_storage.data();
    }
    const float* g = grads.data<float>();
    ForImageChannelBlocks(c, batch, ch, rh * rw * 8, [&](int64_t b, int64_t k0, int64_t k1) {
      Acc* image = acc + b * oh * ow * ch;
      for (int64_t i = 0; i < oh * ow; ++i) {
        std::fill(image + i * ch + k0, image + i * ch + k1, Acc(0));
      }
      for (int64_t y = 0; y < rh; ++y) {
        const Interp& iy = ys[y];
        const float inv_y = 1.0f - iy.lerp;
        Acc* top = image + iy.lower * ow * ch;
        Acc* bottom = image + iy.upper * ow * ch;
        for (int64_t x = 0; x < rw; ++x) {
          const Interp& ix = xs[x];
          const float inv_x = 1.0f - ix.lerp;
          const float* src = g + ((b * rh + y) * rw + x) * ch;
          for (int64_t k = k0; k < k1; ++k) {
            top[ix.lower * ch + k] += Acc(src[k] * inv_y * inv_x);
            top[ix.upper * ch + k] += Acc(src[k] * inv_y * ix.lerp);
            bottom[ix.lower * ch + k] += Acc(src[k] * iy.lerp * inv_x);
            bottom[ix.upper * ch + k] += Acc(src[k] * iy.lerp * ix.lerp);
          }
        }
      }
    });
    if constexpr (!std::is_same_v<T, Acc>) {
      T* o = out->data<T>();
      ParallelRange(c, out->NumElements(), 2, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] = FromFloat<T>(acc[i]);
      });
    }
  }

};

template <typename T>
class ResizeNearestNeighborGradOp : public ResizeOpBase {
 public:
  using ResizeOpBase::ResizeOpBase;

  void Compute(OpKernelContext* c) override {
    const Tensor& grads = c->input(0);
    OP_REQUIRES(c, grads.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "input must be 4-dimensional", grads.shape().DebugString(),
                    " (grads)")));
    int64_t oh = 0, ow = 0;
    OP_REQUIRES_OK(c, ReadSize(c->input(1), "shape_t's elements must be positive",
                               &oh, &ow));
    const int64_t batch = grads.dim_size(0), ih = grads.dim_size(1),
                  iw = grads.dim_size(2), ch = grads.dim_size(3);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, AllocateImage(c, batch, oh, ow, ch, &out));
    if (out->NumElements() == 0) return;
    // Each gradient pixel goes where the forward op (original -> grads'
    // size) sampled it from.
    const std::vector<int64_t> ys =
        NearestTable(ih, oh, ResizeScale(oh, ih, a_.align_corners), a_);
    const std::vector<int64_t> xs =
        NearestTable(iw, ow, ResizeScale(ow, iw, a_.align_corners), a_);
    const T* g = grads.data<T>();
    T* o = out->data<T>();
    ForImageChannelBlocks(c, batch, ch, ih * iw * 2, [&](int64_t b, int64_t k0, int64_t k1) {
      T* image = o + b * oh * ow * ch;
      for (int64_t i = 0; i < oh * ow; ++i) {
        std::fill(image + i * ch + k0, image + i * ch + k1, FromFloat<T>(0.0f));
      }
      for (int64_t y = 0; y < ih; ++y) {
        for (int64_t x = 0; x < iw; ++x) {
          const T* src = g + ((b * ih + y) * iw + x) * ch;
          T* dst = image + (ys[y] * ow + xs[x]) * ch;
          for (int64_t k = k0; k < k1; ++k) dst[k] = AddIn(dst[k], src[k]);
        }
      }
    });
  }

};

}  // namespace

void BilinearSources(int64_t out, int64_t in, float scale, int64_t* lower,
                     int64_t* upper, float* lerp) {
  const std::vector<Interp> t = BilinearTable(out, in, scale, false);
  for (int64_t i = 0; i < out; ++i) {
    lower[i] = t[i].lower;
    upper[i] = t[i].upper;
    lerp[i] = t[i].lerp;
  }
}

void RegisterImageResizeKernels(KernelRegistry* r) {
  RegisterForTypes<ResizeBilinearOp, int8_t, uint8_t, int16_t, uint16_t, int32_t,
              int64_t, BFloat16, Half, float, double>(r, "ResizeBilinear", "size");
  RegisterForTypes<ResizeNearestNeighborOp, int8_t, uint8_t, int16_t, uint16_t,
              int32_t, int64_t, BFloat16, Half, float, double>(
      r, "ResizeNearestNeighbor", "size");
  RegisterForTypes<ResizeBilinearGradOp, float, double, Half, BFloat16>(
      r, "ResizeBilinearGrad", nullptr);
  RegisterForTypes<ResizeNearestNeighborGradOp, uint8_t, int8_t, int32_t, Half,
              float, double, BFloat16>(r, "ResizeNearestNeighborGrad", "size");
}

}  // namespace weft
