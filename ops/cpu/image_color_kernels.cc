// The colour kernels on CPU, with TensorFlow 2.21's arithmetic:
//   RGBToHSV / HSVToRGB (float, double, half, bfloat16): every operation in
//     T (image_rounded.h rounds half and bfloat16 after each one), in
//     TensorFlow's order: V = max, range = V - min, S = V > 0 ? range / V
//     : 0, norm = (1 / range) * (1 / 6), H from the channel that is V (+2/6,
//     +4/6), 0 where range is 0, +1 where negative; back: dh = 6H and each
//     channel clamp(+-|dh - k| + c, 0, 1), (1 - S + S * d) * V.
//   AdjustHue / AdjustSaturation (float): TensorFlow's scalar float code:
//     hue through a hue-and-value-range form (h in [0, 6), shifted by
//     6 * delta and wrapped by adding or subtracting 6), saturation through
//     HSV with s scaled and clamped to [0, 1] (its 2/6 and 4/6 are double
//     constants, so those sums round from double).
//   AdjustContrastv2 (float) and AdjustContrast (v1; integer and float
//     images, float output clamped to [min_value, max_value]): per image
//     and channel the mean over height and width, (x - mean) * factor +
//     mean. The mean sums in double and rounds once, where TensorFlow's
//     Eigen reduction sums in float: the two means can differ in their last
//     bit (tests compare to a few ulps).
// Images are [..., H, W, C] (rank >= 3; the hue, saturation and colour
// space ops need C == 3). Work is split over pixels (or image rows).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/float_convert.h"
#include "ops/cpu/image_resize_geometry.h"
#include "ops/cpu/image_rounded.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"
#include "runtime/core/types.h"

namespace weft {
namespace {

// Images of rank >= 3 with 3 channels (or any, if !rgb); scalar `what`
// input 1.
absl::Status CheckImages(const Tensor& images, bool rgb) {
  if (images.dims() < 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input must be at least 3-D, got shape", images.shape().DebugString()));
  }
  const int64_t channels = images.dim_size(images.dims() - 1);
  if (rgb && channels != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input must have 3 channels but instead has ", channels, " channels."));
  }
  return absl::OkStatus();
}

absl::Status CheckScalar(const Tensor& t, const char* name) {
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be scalar: ", t.shape().DebugString()));
  }
  return absl::OkStatus();
}

// ---- RGBToHSV / HSVToRGB.

// Checks the pixels ([..., 3]) and allocates the output like them.
absl::Status StartColorSpace(OpKernelContext* c, const Tensor& in, Tensor** out) {
  if (in.dims() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("input must be at least 1D", in.shape().DebugString()));
  }
  const int64_t channels = in.dim_size(in.dims() - 1);
  if (channels != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input must have 3 channels but input only has ", channels, " channels."));
  }
  return c->allocate_output(0, in.shape(), out);
}

template <typename T>
class RgbToHsvOp : public OpKernel {
  using R = RoundedT<T>;

 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, StartColorSpace(c, in, &out));
    const T* x = in.data<T>();
    T* y = out->data<T>();
    const R zero = R::Of(0.0f), one = R::Of(1.0f);
    const R sixth = one / R::Of(6.0f);
    const R two_sixths = R::Of(2.0f) / R::Of(6.0f);
    const R four_sixths = R::Of(4.0f) / R::Of(6.0f);
    ParallelRange(c, in.NumElements() / 3, 40, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const R r = R::Of(x[3 * p]), g = R::Of(x[3 * p + 1]),
                bl = R::Of(x[3 * p + 2]);
        const R v = std::max(r, std::max(g, bl));
        const R range = v - std::min(r, std::min(g, bl));
        const R s = v > zero ? range / v : zero;
        const R norm = (one / range) * sixth;
        R h = r == v   ? norm * (g - bl)
              : g == v ? norm * (bl - r) + two_sixths
                       : norm * (r - g) + four_sixths;
        if (!(range > zero)) h = zero;
        if (h < zero) h = h + one;
        y[3 * p] = h.template To<T>();
        y[3 * p + 1] = s.template To<T>();
        y[3 * p + 2] = v.template To<T>();
      }
    });
  }
};

template <typename T>
class HsvToRgbOp : public OpKernel {
  using R = RoundedT<T>;

 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, StartColorSpace(c, in, &out));
    const T* x = in.data<T>();
    T* y = out->data<T>();
    const R zero = R::Of(0.0f), one = R::Of(1.0f), two = R::Of(2.0f);
    const R three = R::Of(3.0f), four = R::Of(4.0f), six = R::Of(6.0f);
    auto clamp01 = [&](R v) { return std::min(std::max(v, zero), one); };
    ParallelRange(c, in.NumElements() / 3, 40, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const R h = R::Of(x[3 * p]), s = R::Of(x[3 * p + 1]),
                v = R::Of(x[3 * p + 2]);
        const R dh = h * six;
        const R dr = clamp01(Abs(dh - three) - one);
        const R dg = clamp01(-Abs(dh - two) + two);
        const R db = clamp01(-Abs(dh - four) + two);
        const R one_s = -s + one;
        y[3 * p] = ((one_s + s * dr) * v).template To<T>();
        y[3 * p + 1] = ((one_s + s * dg) * v).template To<T>();
        y[3 * p + 2] = ((one_s + s * db) * v).template To<T>();
      }
    });
  }
};

// ---- AdjustHue / AdjustSaturation (float).

// Hue in [0, 6) with the smallest and largest channel.
void RgbToHueRange(float r, float g, float b, float* h, float* lo, float* hi) {
  float mid;
  int category;
  if (r < g) {
    if (b < r) {
      *hi = g, mid = r, *lo = b, category = 1;
    } else if (b > g) {
      *hi = b, mid = g, *lo = r, category = 3;
    } else {
      *hi = g, mid = b, *lo = r, category = 2;
    }
  } else {
    if (b < g) {
      *hi = r, mid = g, *lo = b, category = 0;
    } else if (b > r) {
      *hi = b, mid = r, *lo = g, category = 4;
    } else {
      *hi = r, mid = b, *lo = g, category = 5;
    }
  }
  if (*hi == *lo) {
    *h = 0;
    return;
  }
  const float ratio = (mid - *lo) / (*hi - *lo);
  *h = category + ((category & 1) == 0 ? ratio : 1 - ratio);
}

void HueRangeToRgb(float h, float lo, float hi, float* rgb) {
  const int category = static_cast<int>(h);
  float ratio = h - category;
  if ((category & 1) != 0) ratio = 1 - ratio;
  const float mid = lo + ratio * (hi - lo);
  // (r, g, b) per hue sextant; anything else is sextant 5's.
  static constexpr int kOrder[6][3] = {{2, 1, 0}, {1, 2, 0}, {0, 2, 1},
                                       {0, 1, 2}, {1, 0, 2}, {2, 0, 1}};
  const float pick[3] = {lo, mid, hi};
  const int* o = kOrder[category >= 0 && category < 6 ? category : 5];
  for (int k = 0; k < 3; ++k) rgb[k] = pick[o[k]];
}

// h += 6 * delta wrapped into [0, 6) as TensorFlow's loops do (which only
// end for finite values; a far-off h wraps by fmod, as the loops would).
float WrapHue(float h) {
  if (!std::isfinite(h)) return h;
  if (std::fabs(h) > 1e4f) h = std::fmod(h, 6.0f);
  while (h < 0) h += 6;
  while (h >= 6) h -= 6;
  return h;
}

// Runs pixel(x, y, k) on each RGB pixel of input 0 (float, 3 channels)
// into output 0, k being the scalar input 1 (named `what` in errors).
template <typename Fn>
void AdjustPixels(OpKernelContext* c, const char* what, Fn pixel) {
  const Tensor& in = c->input(0);
  OP_REQUIRES_OK(c, CheckImages(in, /*rgb=*/true));
  OP_REQUIRES_OK(c, CheckScalar(c->input(1), what));
  const float k = c->input(1).data<float>()[0];
  Tensor* out = nullptr;
  OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
  const float* x = in.data<float>();
  float* y = out->data<float>();
  ParallelRange(c, in.NumElements() / 3, 30, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) pixel(x + 3 * p, y + 3 * p, k);
  });
}

class AdjustHueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    AdjustPixels(c, "delta", [](const float* x, float* y, float delta) {
      float h, lo, hi;
      RgbToHueRange(x[0], x[1], x[2], &h, &lo, &hi);
      HueRangeToRgb(WrapHue(h + delta * 6), lo, hi, y);
    });
  }
};

void RgbToHsv(float r, float g, float b, float* h, float* s, float* v) {
  const float vv = std::max(r, std::max(g, b));
  const float range = vv - std::min(r, std::min(g, b));
  *s = vv > 0 ? range / vv : 0;
  const float norm = 1.0f / (6.0f * range);
  float hh;
  if (r == vv) {
    hh = norm * (g - b);
  } else if (g == vv) {
    hh = static_cast<float>(norm * (b - r) + 2.0 / 6.0);
  } else {
    hh = static_cast<float>(norm * (r - g) + 4.0 / 6.0);
  }
  if (range <= 0.0) hh = 0;
  if (hh < 0.0) hh = hh + 1;
  *v = vv;
  *h = hh;
}

void HsvToRgb(float h, float s, float v, float* rgb) {
  const float chroma = s * v;
  const float m = v - chroma;
  const float dh = h * 6;
  const int category = static_cast<int>(dh);
  float f = dh;
  if (std::isfinite(f)) {
    if (std::fabs(f) > 1e4f) f = std::fmod(f, 2.0f);
    while (f <= 0) f += 2.0f;
    while (f >= 2.0f) f -= 2.0f;
  }
  const float x = chroma * (1 - std::fabs(f - 1));
  float rr = 0, gg = 0, bb = 0;
  switch (category) {
    case 0: rr = chroma, gg = x; break;
    case 1: rr = x, gg = chroma; break;
    case 2: gg = chroma, bb = x; break;
    case 3: gg = x, bb = chroma; break;
    case 4: rr = x, bb = chroma; break;
    case 5: rr = chroma, bb = x; break;
    default: break;
  }
  rgb[0] = rr + m;
  rgb[1] = gg + m;
  rgb[2] = bb + m;
}

class AdjustSaturationOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    AdjustPixels(c, "scale", [](const float* x, float* y, float scale) {
      float h, s, v;
      RgbToHsv(x[0], x[1], x[2], &h, &s, &v);
      HsvToRgb(h, std::min(1.0f, std::max(0.0f, s * scale)), v, y);
    });
  }
};

// ---- AdjustContrast (v1) and AdjustContrastv2.

// Per image and channel of x viewed as [batch, hw, channels], the mean as
// float (summed in double).
template <typename T>
std::vector<float> ChannelMeans(OpKernelContext* c, const T* x, int64_t batch,
                                int64_t hw, int64_t channels) {
  std::vector<float> means(batch * channels);
  ParallelRange(c, batch, hw * channels, [&](int64_t b0, int64_t b1) {
    std::vector<double> sum(channels);
    for (int64_t b = b0; b < b1; ++b) {
      std::fill(sum.begin(), sum.end(), 0.0);
      const T* img = x + b * hw * channels;
      for (int64_t i = 0; i < hw; ++i) {
        for (int64_t k = 0; k < channels; ++k) sum[k] += ToFloat(img[i * channels + k]);
      }
      for (int64_t k = 0; k < channels; ++k) {
        means[b * channels + k] =
            static_cast<float>(sum[k]) / static_cast<float>(hw);
      }
    }
  });
  return means;
}

// The (batch, height * width, channels) view of rank >= 3 images.
struct ContrastView {
  int64_t batch, hw, channels;
};

ContrastView ViewOf(const Tensor& t) {
  const int n = t.dims();
  ContrastView v{1, t.dim_size(n - 3) * t.dim_size(n - 2), t.dim_size(n - 1)};
  for (int i = 0; i < n - 3; ++i) v.batch *= t.dim_size(i);
  return v;
}

class AdjustContrastv2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES_OK(c, CheckImages(in, /*rgb=*/false));
    OP_REQUIRES_OK(c, CheckScalar(c->input(1), "contrast_factor"));
    const float factor = c->input(1).data<float>()[0];
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    if (in.NumElements() == 0) return;
    const ContrastView v = ViewOf(in);
    const float* x = in.data<float>();
    float* y = out->data<float>();
    const std::vector<float> means = ChannelMeans(c, x, v.batch, v.hw, v.channels);
    const int64_t per_image = v.hw * v.channels;
    ParallelRange(c, in.NumElements(), 3, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const float m = means[(i / per_image) * v.channels + i % v.channels];
        y[i] = m + (x[i] - m) * factor;
      }
    });
  }
};

template <typename T>
class AdjustContrastOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES_OK(c, CheckImages(in, /*rgb=*/false));
    OP_REQUIRES_OK(c, CheckScalar(c->input(1), "contrast_factor"));
    OP_REQUIRES_OK(c, CheckScalar(c->input(2), "min_value"));
    OP_REQUIRES_OK(c, CheckScalar(c->input(3), "max_value"));
    const float factor = c->input(1).data<float>()[0];
    const float lo = c->input(2).data<float>()[0];
    const float hi = c->input(3).data<float>()[0];
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    if (in.NumElements() == 0) return;
    const ContrastView v = ViewOf(in);
    const T* x = in.data<T>();
    float* y = out->data<float>();
    const std::vector<float> means = ChannelMeans(c, x, v.batch, v.hw, v.channels);
    const int64_t per_image = v.hw * v.channels;
    ParallelRange(c, in.NumElements(), 3, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const float m = means[(i / per_image) * v.channels + i % v.channels];
        // cwiseMin then cwiseMax, as TensorFlow clamps.
        y[i] = std::max(std::min((static_cast<float>(x[i]) - m) * factor + m, hi), lo);
      }
    });
  }
};

}  // namespace

void RegisterImageColorKernels(KernelRegistry* r) {
  using image_resize::RegisterForTypes;
  RegisterForTypes<RgbToHsvOp, float, double, Half, BFloat16>(r, "RGBToHSV", nullptr);
  RegisterForTypes<HsvToRgbOp, float, double, Half, BFloat16>(r, "HSVToRGB", nullptr);
  RegisterForTypes<AdjustContrastOp, uint8_t, int8_t, int16_t, int32_t, float, double>(
      r, "AdjustContrast", nullptr);
  auto float_only = [&](const char* op) {
    return KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT);
  };
  r->Register(float_only("AdjustContrastv2"), MakeKernel<AdjustContrastv2Op>);
  r->Register(float_only("AdjustHue"), MakeKernel<AdjustHueOp>);
  r->Register(float_only("AdjustSaturation"), MakeKernel<AdjustSaturationOp>);
}

}  // namespace weft
