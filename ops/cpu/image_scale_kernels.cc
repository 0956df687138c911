// ScaleAndTranslate and ScaleAndTranslateGrad on CPU, TensorFlow 2.21's
// separable resampling: per axis, output pixel x samples the input around
// (x + 0.5) / scale - translation / scale with a kernel (lanczos1/3/5,
// gaussian, box, triangle, keyscubic, mitchellcubic) widened by 1 / scale
// when antialiasing a downscale; taps outside the image are dropped and
// the rest normalised to sum 1 (a span of weights per output pixel).
// Rows are gathered first into a [batch, out_h, in_w, c] float buffer,
// then columns, each sum in tap order in float. The gradient transposes
// the spans (weights of one input pixel, by output index) and gathers the
// incoming gradient through them the same way.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
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

// A sampling kernel: its value at |x| and its radius.
struct SamplingKernel {
  std::function<float(float)> fn;
  float radius;
};

float Lanczos(float radius, float x) {
  constexpr float kPi = 3.14159265359f;
  x = std::fabs(x);
  if (x > radius) return 0.0f;
  if (x <= 1e-3f) return 1.0f;
  return radius * std::sin(kPi * x) * std::sin(kPi * x / radius) / (kPi * kPi * x * x);
}

bool KernelFromName(const std::string& name, SamplingKernel* k) {
  if (name == "lanczos1" || name == "lanczos3" || name == "lanczos5") {
    const float r = static_cast<float>(name.back() - '0');
    *k = {[r](float x) { return Lanczos(r, x); }, r};
  } else if (name == "gaussian") {
    constexpr float kRadius = 1.5f, kSigma = kRadius / 3.0f;
    *k = {[](float x) {
            x = std::fabs(x);
            if (x >= kRadius) return 0.0f;
            return static_cast<float>(std::exp(-x * x / (2.0 * kSigma * kSigma)));
          },
          kRadius};
  } else if (name == "box") {
    *k = {[](float x) {
            x = std::fabs(x);
            return x < 0.5f ? 1.0f : x == 0.5f ? 0.5f : 0.0f;
          },
          1.0f};
  } else if (name == "triangle") {
    *k = {[](float x) {
            x = std::fabs(x);
            return x < 1.0f ? 1.0f - x : 0.0f;
          },
          1.0f};
  } else if (name == "keyscubic") {
    *k = {[](float x) {
            x = std::fabs(x);
            if (x >= 2.0f) return 0.0f;
            if (x >= 1.0f) return ((-0.5f * x + 2.5f) * x - 4.0f) * x + 2.0f;
            return ((1.5f * x - 2.5f) * x) * x + 1.0f;
          },
          2.0f};
  } else if (name == "mitchellcubic") {
    *k = {[](float x) {
            x = std::fabs(x);
            if (x >= 2.0f) return 0.0f;
            if (x >= 1.0f) {
              return (((-7.0f / 18.0f) * x + 2.0f) * x - 10.0f / 3.0f) * x + 16.0f / 9.0f;
            }
            return (((7.0f / 6.0f) * x - 2.0f) * x) * x + 8.0f / 9.0f;
          },
          2.0f};
  } else {
    return false;
  }
  return true;
}

// Per output index: the first input index and span_size weights.
struct Spans {
  int64_t span_size = 0;
  std::vector<int64_t> starts;
  std::vector<float> weights;
};

absl::Status ComputeSpans(const SamplingKernel& k, int64_t out_size, int64_t in_size,
                          float scale, float translate, bool antialias, Spans* s) {
  const float inv_scale = static_cast<float>(1.0 / scale);
  const float inv_translate = -inv_scale * translate;
  const float kernel_scale = antialias ? std::max(inv_scale, 1.0f) : 1.0f;
  const double want = 2.0 * std::ceil(static_cast<double>(k.radius * kernel_scale)) + 1;
  s->span_size = static_cast<int64_t>(std::min<double>(want, static_cast<double>(in_size)));
  absl::StatusOr<TensorShape> size = TensorShape::Build({s->span_size, out_size});
  if (!size.ok() || size->num_elements() > (int64_t{1} << 31)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ScaleAndTranslate's sampling spans are too large (", s->span_size, " x ", out_size,
        "): scale or size out of range"));
  }
  s->starts.assign(out_size, 0);
  s->weights.assign(s->span_size * out_size, 0.0f);
  const float one_over_kernel_scale = 1.0f / kernel_scale;
  std::vector<float> temp;
  for (int64_t x = 0; x < out_size; ++x) {
    const float col = static_cast<float>(x) + 0.5f;
    const float sample = col * inv_scale + inv_translate;
    if (sample < 0 || sample > static_cast<float>(in_size)) continue;
    int64_t start = static_cast<int64_t>(std::ceil(sample - k.radius * kernel_scale - 0.5f));
    int64_t end = static_cast<int64_t>(std::floor(sample + k.radius * kernel_scale - 0.5f));
    start = std::clamp<int64_t>(start, 0, in_size - 1);
    end = std::clamp<int64_t>(end, 0, in_size - 1) + 1;
    if (end - start > s->span_size) {
      return absl::InternalError(
          absl::StrCat("Span is too large: ", end - start, " vs ", s->span_size, "."));
    }
    float total = 0.0f;
    temp.clear();
    for (int64_t src = start; src < end; ++src) {
      const float pos = static_cast<float>(src) + 0.5f - sample;
      const float w = k.fn(std::fabs(pos * one_over_kernel_scale));
      total += w;
      temp.push_back(w);
    }
    if (std::fabs(total) >= 1000.0f * std::numeric_limits<float>::min()) {
      const float inv = 1.0f / total;
      for (size_t i = 0; i < temp.size(); ++i) s->weights[x * s->span_size + i] = temp[i] * inv;
    }
    s->starts[x] = start;
  }
  return absl::OkStatus();
}

// The transposed spans: per forward input index, the weights of the
// forward outputs that read it, by output index.
Spans GradSpans(const Spans& f, int64_t out_size, int64_t in_size) {
  struct Part {
    int64_t index;
    float weight;
  };
  std::vector<std::vector<Part>> parts(in_size);
  for (int64_t o = 0; o < out_size; ++o) {
    for (int64_t j = 0; j < f.span_size; ++j) {
      const int64_t i = f.starts[o] + j;
      const float w = f.weights[o * f.span_size + j];
      if (w != 0.0f && i < in_size) parts[i].push_back({o, w});
    }
  }
  Spans g;
  for (const auto& p : parts) {
    if (!p.empty()) g.span_size = std::max(g.span_size, p.back().index - p.front().index + 1);
  }
  g.starts.assign(in_size, 0);
  g.weights.assign(g.span_size * in_size, 0.0f);
  for (int64_t i = 0; i < in_size; ++i) {
    if (parts[i].empty()) continue;
    g.starts[i] = parts[i].front().index;
    for (const Part& p : parts[i]) {
      g.weights[i * g.span_size + p.index - g.starts[i]] += p.weight;
    }
  }
  return g;
}

// out[b] = columns(rows(in[b])): rows gathered into `mid` ([out_h, in_w,
// c] per image), then columns.
template <typename T>
void GatherSpans(OpKernelContext* c, const Spans& rows, const Spans& cols, const T* in,
                 int64_t batch, int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w,
                 int64_t ch, float* out) {
  const int64_t in_row = in_w * ch;
  ParallelRange(c, batch, out_h * (in_w + out_w) * ch * 8, [&](int64_t b0, int64_t b1) {
    std::vector<float> mid(out_h * in_row);
    for (int64_t b = b0; b < b1; ++b) {
      const T* image = in + b * in_h * in_row;
      for (int64_t y = 0; y < out_h; ++y) {
        float* dst = mid.data() + y * in_row;
        std::fill(dst, dst + in_row, 0.0f);
        const int64_t real = std::min(rows.starts[y] + rows.span_size, in_h) - rows.starts[y];
        const float* w = rows.weights.data() + y * rows.span_size;
        for (int64_t j = 0; j < real; ++j) {
          const T* src = image + (rows.starts[y] + j) * in_row;
          for (int64_t i = 0; i < in_row; ++i) dst[i] += w[j] * ToFloat(src[i]);
        }
      }
      float* o = out + b * out_h * out_w * ch;
      for (int64_t y = 0; y < out_h; ++y) {
        const float* row = mid.data() + y * in_row;
        for (int64_t x = 0; x < out_w; ++x) {
          float* px = o + (y * out_w + x) * ch;
          std::fill(px, px + ch, 0.0f);
          const int64_t real = std::min(cols.starts[x] + cols.span_size, in_w) - cols.starts[x];
          const float* w = cols.weights.data() + x * cols.span_size;
          for (int64_t j = 0; j < real; ++j) {
            const float* src = row + (cols.starts[x] + j) * ch;
            for (int64_t k = 0; k < ch; ++k) px[k] += w[j] * src[k];
          }
        }
      }
    }
  });
}

// A vector of two floats (scale or translation).
absl::Status ReadPair(const Tensor& t, float* a, float* b) {
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("t must be 1-dimensional", t.shape().DebugString()));
  }
  if (t.NumElements() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("t must have two elements", t.shape().DebugString()));
  }
  *a = t.data<float>()[0];
  *b = t.data<float>()[1];
  return absl::OkStatus();
}

class ScaleTranslateBase : public OpKernel {
 public:
  explicit ScaleTranslateBase(OpKernelConstruction* c) : OpKernel(c) {
    std::string name;
    c->SetStatus(c->GetAttr("antialias", &antialias_));
    c->SetStatus(c->GetAttr("kernel_type", &name));
    if (c->status().ok() && !KernelFromName(name, &kernel_)) {
      c->SetStatus(absl::InvalidArgumentError("Unrecognized kernel type: " + name));
    }
  }

 protected:
  // Scale (input 2) and translation (input 3), rows first.
  absl::Status ReadTransform(OpKernelContext* c, float s[2], float t[2]) {
    WEFT_RETURN_IF_ERROR(ReadPair(c->input(2), &s[0], &s[1]));
    if (!(s[0] > 0 && s[1] > 0)) {
      return absl::InvalidArgumentError("Scale must be greater than zero.");
    }
    return ReadPair(c->input(3), &t[0], &t[1]);
  }

  SamplingKernel kernel_;
  bool antialias_ = true;
};

template <typename T>
class ScaleAndTranslateOp : public ScaleTranslateBase {
 public:
  using ScaleTranslateBase::ScaleTranslateBase;

  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    OP_REQUIRES(c, in.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat("input must be 4-dimensional",
                                                        in.shape().DebugString())));
    const Tensor& size = c->input(1);
    OP_REQUIRES(c, size.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "output_shape_t must be 1-dimensional", size.shape().DebugString())));
    OP_REQUIRES(c, size.NumElements() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "output_shape_t must have two elements", size.shape().DebugString())));
    const int64_t out_h = size.data<int32_t>()[0], out_w = size.data<int32_t>()[1];
    const int64_t batch = in.dim_size(0), in_h = in.dim_size(1), in_w = in.dim_size(2),
                  ch = in.dim_size(3);
    OP_REQUIRES(c, in_h < 2147483647 && in_w < 2147483647,
                absl::InvalidArgumentError("input sizes must be between 0 and max int32"));
    OP_REQUIRES(c, out_h > 0 && out_w > 0,
                absl::InvalidArgumentError("output dimensions must be positive"));
    OP_REQUIRES(c, ch > 0, absl::InvalidArgumentError("image must have at least one channel"));
    OP_REQUIRES(c, in_h > 0 && in_w > 0,
                absl::InvalidArgumentError("input image must be of non-zero size"));
    float s[2], t[2];
    OP_REQUIRES_OK(c, ReadTransform(c, s, t));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, image_resize::AllocateImage(c, batch, out_h, out_w, ch, &out));
    if (out->NumElements() == 0) return;
    Spans cols, rows;
    OP_REQUIRES_OK(c, ComputeSpans(kernel_, out_w, in_w, s[1], t[1], antialias_, &cols));
    OP_REQUIRES_OK(c, ComputeSpans(kernel_, out_h, in_h, s[0], t[0], antialias_, &rows));
    GatherSpans(c, rows, cols, in.data<T>(), batch, in_h, in_w, out_h, out_w, ch,
                out->data<float>());
  }
};

class ScaleAndTranslateGradOp : public ScaleTranslateBase {
 public:
  using ScaleTranslateBase::ScaleTranslateBase;

  void Compute(OpKernelContext* c) override {
    const Tensor& grads = c->input(0);
    const Tensor& original = c->input(1);
    OP_REQUIRES(c, grads.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat("input_grad must be 4-dimensional",
                                                        grads.shape().DebugString())));
    OP_REQUIRES(c, original.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "original_image must be 4-dimensional", original.shape().DebugString())));
    const int64_t batch = grads.dim_size(0), ch = grads.dim_size(3);
    const int64_t in_h = original.dim_size(1), in_w = original.dim_size(2);
    const int64_t out_h = grads.dim_size(1), out_w = grads.dim_size(2);
    OP_REQUIRES(c, in_h < 2147483647 && in_w < 2147483647,
                absl::InvalidArgumentError("original sizes must be between 0 and max int32"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, image_resize::AllocateImage(c, batch, in_h, in_w, ch, &out));
    float s[2], t[2];
    OP_REQUIRES_OK(c, ReadTransform(c, s, t));
    if (out->NumElements() == 0) return;
    Spans cols, rows;
    OP_REQUIRES_OK(c, ComputeSpans(kernel_, out_w, in_w, s[1], t[1], antialias_, &cols));
    OP_REQUIRES_OK(c, ComputeSpans(kernel_, out_h, in_h, s[0], t[0], antialias_, &rows));
    const Spans grad_cols = GradSpans(cols, out_w, in_w);
    const Spans grad_rows = GradSpans(rows, out_h, in_h);
    GatherSpans(c, grad_rows, grad_cols, grads.data<float>(), batch, out_h, out_w, in_h, in_w,
                ch, out->data<float>());
  }
};

}  // namespace

void RegisterImageScaleKernels(KernelRegistry* r) {
  auto def = [](const char* op, DataType t) {
    KernelDef d(op, kDeviceTypeCpu);
    d.TypeConstraint("T", t);
    if (std::string(op) == "ScaleAndTranslate") d.HostMemory("size");
    d.HostMemory("scale").HostMemory("translation");
    return d;
  };
  auto reg = [&](auto tag) {
    using T = decltype(tag);
    r->Register(def("ScaleAndTranslate", DataTypeToEnum<T>::value),
                MakeKernel<ScaleAndTranslateOp<T>>);
  };
  reg(int8_t{}), reg(uint8_t{}), reg(int16_t{}), reg(uint16_t{}), reg(int32_t{}),
      reg(int64_t{}), reg(BFloat16{}), reg(Half{}), reg(float{}), reg(double{});
  r->Register(def("ScaleAndTranslateGrad", DT_FLOAT), MakeKernel<ScaleAndTranslateGradOp>);
}

}  // namespace weft
