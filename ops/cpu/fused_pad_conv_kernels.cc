// FusedPadConv2D (MirrorPad, then Conv2D) and FusedResizeAndPadConv2D
// (ResizeBilinear without half-pixel centres, then MirrorPad, then Conv2D)
// on CPU, NHWC, for half, float and double (and bfloat16 for the pad-only
// op), as TensorFlow registers them.
//
// The padded (and resized) image is made once, each of its rows mapped to
// its source through MirrorPad's index map and the bilinear table
// ResizeBilinear uses, rows shared out over the intra-op pool; then it goes
// through Conv2D's forward pass. Like TensorFlow's fused kernel, samples are blended in
// T (half rounds after each operation) and the windows are placed by its
// rule, offset ((out - 1) * stride + k - padded [+ 1 for VALID]) / 2,
// which for strides larger than the window can start inside the image:
// such leading rows and columns are left out of the made image. half and
// bfloat16 convolve in float and round once.
//
// TensorFlow's kernel reuses a row cache across the batch without
// refilling it, so its images after the first come out wrong; Weft
// convolves every image of the batch as the first.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/bilinear_sources.h"
#include "ops/cpu/conv_forward.h"
#include "ops/cpu/conv_geometry.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/float_convert.h"
#include "ops/cpu/image_resize_geometry.h"
#include "ops/cpu/mirror_pad.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {

namespace {

// Where one index of the made image samples from.
struct Interp {
  int64_t lower, upper;
  float lerp;
};

std::vector<Interp> BilinearTable(int64_t out, int64_t in, float scale) {
  std::vector<int64_t> lower(out), upper(out);
  std::vector<float> lerp(out);
  BilinearSources(out, in, scale, lower.data(), upper.data(), lerp.data());
  std::vector<Interp> t(out);
  for (int64_t i = 0; i < out; ++i) t[i] = {lower[i], upper[i], lerp[i]};
  return t;
}

// a + (b - a) * w in T's arithmetic, as TensorFlow's fused kernel blends.
template <typename T>
T Blend(T a, T b, float w) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    const float d = ToFloat(FromFloat<T>(ToFloat(b) - ToFloat(a)));
    const float p = ToFloat(FromFloat<T>(d * ToFloat(FromFloat<T>(w))));
    return FromFloat<T>(ToFloat(a) + p);
  } else {
    return a + (b - a) * static_cast<T>(w);
  }
}

// The type the convolution runs in.
template <typename T>
using ConvType = std::conditional_t<
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <typename T>
ConvType<T> ToConv(T v) {
  if constexpr (std::is_same_v<ConvType<T>, T>) {
    return v;
  } else {
    return ToFloat(v);
  }
}

// One spatial dim of the made image: where the windows go, and the
// (padded) indices it keeps.
struct Axis {
  int64_t before = 0, size = 0;  // mirror padding before; resized size
  int64_t out = 0;               // output size
  int64_t crop = 0;              // leading padded indices no window reads
  int64_t conv_pad = 0;          // zero padding before the made image
  int64_t made = 0;              // padded size less crop
};

absl::Status MakeAxis(const char* what, int64_t size, int64_t before,
                      int64_t after, int64_t k, int64_t s, bool valid,
                      Axis* a) {
  const int64_t padded = before + size + after;
  if (valid) {
    if (padded < k) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Computed output size would be negative: ", (padded - k + s) / s,
          " [input_size: ", padded, ", effective_filter_size: ", k,
          ", stride: ", s, "] (padded ", what, ")"));
    }
    a->out = (padded - k + s) / s;
  } else {
    a->out = (padded + s - 1) / s;
  }
  // C++ division truncates towards zero, as TensorFlow's does here.
  const int64_t start = ((a->out - 1) * s + k - padded + (valid ? 1 : 0)) / 2;
  a->before = before;
  a->size = size;
  a->crop = std::max<int64_t>(0, -start);
  a->conv_pad = std::max<int64_t>(0, start);
  a->made = padded - a->crop;
  return absl::OkStatus();
}

// The input sampled at each made index of `a`: `table` maps resized
// indices to input ones.
std::vector<Interp> Sources(const Axis& a, const std::vector<Interp>& table,
                            int offset) {
  std::vector<Interp> src;
  src.reserve(a.made);
  for (int64_t i = a.crop; i < a.crop + a.made; ++i) {
    src.push_back(table[MirrorIndex(i - a.before, a.size, offset)]);
  }
  return src;
}

// The identity map of a dim of n (no resize).
std::vector<Interp> Identity(int64_t n) {
  std::vector<Interp> t(n);
  for (int64_t i = 0; i < n; ++i) t[i] = {i, i, 0.f};
  return t;
}

template <typename T>
class FusedPadConvOp : public OpKernel {
 public:
  FusedPadConvOp(OpKernelConstruction* c, bool resize)
      : OpKernel(c), resize_(resize), offset_(MirrorModeOffset(c)) {
    if (resize_ && c->status().ok()) {
      c->SetStatus(c->GetAttr("resize_align_corners", &align_corners_));
    }
    if (c->status().ok()) {
      c->SetStatus(ParseWindowAttrs(c, WindowKind::kConv, &attrs_));
    }
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    const Tensor& paddings = c->input(resize_ ? 2 : 1);
    const Tensor& filter = c->input(resize_ ? 3 : 2);
    OP_REQUIRES(c, input.NumElements() > 0,
                absl::InvalidArgumentError("Input tensor can't be empty"));
    OP_REQUIRES(c, input.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "Fused mirror padding only supports four-dimensional "
                    "inputs, but ", input.dims(), " requested (input ",
                    input.shape().DebugString(), ")")));
    const int64_t batch = input.dim_size(0), in_h = input.dim_size(1),
                  in_w = input.dim_size(2), depth = input.dim_size(3);
    int64_t size_h = in_h, size_w = in_w;  // the resized image's
    float scale_h = 1.f, scale_w = 1.f;
    if (resize_) {
      image_resize::ResizeAttrs ra;
      ra.align_corners = align_corners_;
      absl::StatusOr<image_resize::Geometry> g =
          image_resize::ForwardGeometry(c, ra);
      OP_REQUIRES_OK(c, g.status());
      size_h = g->out_h;
      size_w = g->out_w;
      scale_h = g->h_scale;
      scale_w = g->w_scale;
    }
    std::vector<int64_t> pads;
    OP_REQUIRES_OK(c, ReadMirrorPaddings(
                          paddings, TensorShape({batch, size_h, size_w, depth}),
                          offset_, false, &pads));
    OP_REQUIRES(c, pads[0] == 0 && pads[1] == 0,
                absl::InvalidArgumentError(
                    "Fused mirror padding only support spatial padding, not "
                    "batches (paddings)"));
    OP_REQUIRES(c, pads[6] == 0 && pads[7] == 0,
                absl::InvalidArgumentError(
                    "Fused mirror padding only support spatial padding, not "
                    "channels (paddings)"));
    OP_REQUIRES(c, filter.dims() == 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "filter must be 4-dimensional: ",
                    filter.shape().DebugString())));
    OP_REQUIRES(c, depth == filter.dim_size(2),
                absl::InvalidArgumentError(absl::StrCat(
                    "input and filter must have the same depth: ", depth,
                    " vs ", filter.dim_size(2))));
    const bool valid = attrs_.padding == "VALID";
    Axis ys, xs;
    OP_REQUIRES_OK(c, MakeAxis("rows", size_h, pads[2], pads[3],
                               filter.dim_size(0), attrs_.stride_rows, valid,
                               &ys));
    OP_REQUIRES_OK(c, MakeAxis("cols", size_w, pads[4], pads[5],
                               filter.dim_size(1), attrs_.stride_cols, valid,
                               &xs));
    const int64_t out_depth = filter.dim_size(3);
    absl::StatusOr<TensorShape> out_shape =
        TensorShape::Build({batch, ys.out, xs.out, out_depth});
    OP_REQUIRES_OK(c, out_shape.status());
    OP_REQUIRES(c, out_shape->num_elements() > 0,
                absl::InvalidArgumentError("Output tensor can't be empty"));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, *out_shape, &out));

    using C = ConvType<T>;
    const DataType conv_dtype = DataTypeToEnum<C>::value;
    WindowDims d;
    d.batch = batch;
    d.in_rows = ys.made;
    d.in_cols = xs.made;
    d.in_depth = depth;
    d.win_rows = filter.dim_size(0);
    d.win_cols = filter.dim_size(1);
    d.stride_rows = attrs_.stride_rows;
    d.stride_cols = attrs_.stride_cols;
    d.pad_top = ys.conv_pad;
    d.pad_left = xs.conv_pad;
    d.out_rows = ys.out;
    d.out_cols = xs.out;
    d.out_depth = out_depth;
    absl::StatusOr<TensorShape> image_shape =
        TensorShape::Build({batch, d.in_rows, d.in_cols, depth});
    OP_REQUIRES_OK(c, image_shape.status());
    Tensor image;
    OP_REQUIRES_OK(c, c->allocate_temp(conv_dtype, *image_shape, &image));
    // Allocated first: the tables are as long as the image is high / wide.
    const std::vector<Interp> rows = Sources(
        ys, resize_ ? BilinearTable(size_h, in_h, scale_h)
                    : Identity(in_h), offset_);
    const std::vector<Interp> cols = Sources(
        xs, resize_ ? BilinearTable(size_w, in_w, scale_w)
                    : Identity(in_w), offset_);
    MakeImage(c, input, rows, cols, image.data<C>());

    const C* w = nullptr;
    Tensor filter_c, out_c;
    C* y = nullptr;
    if constexpr (std::is_same_v<C, T>) {
      w = filter.data<T>();
      y = out->data<T>();
    } else {
      OP_REQUIRES_OK(c, c->allocate_temp(DT_FLOAT, filter.shape(), &filter_c));
      OP_REQUIRES_OK(c, c->allocate_temp(DT_FLOAT, *out_shape, &out_c));
      const T* f = filter.data<T>();
      float* fc = filter_c.data<float>();
      for (int64_t i = 0; i < filter.NumElements(); ++i) fc[i] = ToFloat(f[i]);
      w = fc;
      y = out_c.data<float>();
    }
    OP_REQUIRES_OK(c, Conv2DForward<C>(c, d, image.data<C>(), w, y));
    if constexpr (!std::is_same_v<C, T>) {
      T* o = out->data<T>();
      ParallelRange(c, out->NumElements(), 2, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] = FromFloat<T>(y[i]);
      });
    }
  }

 private:
  // The padded (resized) image the windows read, [batch, ys, xs, depth].
  void MakeImage(OpKernelContext* c, const Tensor& input,
                 const std::vector<Interp>& ys, const std::vector<Interp>& xs,
                 ConvType<T>* image) const {
    const int64_t in_h = input.dim_size(1), in_w = input.dim_size(2);
    const int64_t depth = input.dim_size(3);
    const int64_t h = ys.size(), w = xs.size();
    const T* in = input.data<T>();
    const int64_t row_len = w * depth;
    ParallelRange(
        c, input.dim_size(0) * h, row_len * (resize_ ? 12 : 2),
        [&](int64_t r0, int64_t r1) {
          for (int64_t r = r0; r < r1; ++r) {
            const T* img = in + (r / h) * in_h * in_w * depth;
            const Interp& y = ys[r % h];
            const T* top = img + y.lower * in_w * depth;
            const T* bottom = img + y.upper * in_w * depth;
            ConvType<T>* dst = image + r * row_len;
            for (int64_t x = 0; x < w; ++x, dst += depth) {
              const Interp& xi = xs[x];
              const T* tl = top + xi.lower * depth;
              if (!resize_) {
                for (int64_t k = 0; k < depth; ++k) dst[k] = ToConv(tl[k]);
                continue;
              }
              const T* tr = top + xi.upper * depth;
              const T* bl = bottom + xi.lower * depth;
              const T* br = bottom + xi.upper * depth;
              for (int64_t k = 0; k < depth; ++k) {
                const T t = Blend(tl[k], tr[k], xi.lerp);
                const T b = Blend(bl[k], br[k], xi.lerp);
                dst[k] = ToConv(Blend(t, b, y.lerp));
              }
            }
          }
        });
  }

  const bool resize_;
  const int offset_;
  bool align_corners_ = false;
  WindowAttrs attrs_;
};

template <typename T>
class FusedPadConv2DOp : public FusedPadConvOp<T> {
 public:
  explicit FusedPadConv2DOp(OpKernelConstruction* c)
      : FusedPadConvOp<T>(c, /*resize=*/false) {}
};

template <typename T>
class FusedResizeAndPadConv2DOp : public FusedPadConvOp<T> {
 public:
  explicit FusedResizeAndPadConv2DOp(OpKernelConstruction* c)
      : FusedPadConvOp<T>(c, /*resize=*/true) {}
};

}  // namespace

void RegisterFusedPadConvKernels(KernelRegistry* r) {
  image_resize::RegisterForTypes<FusedPadConv2DOp, Half, BFloat16, float,
                                 double>(r, "FusedPadConv2D", nullptr);
  image_resize::RegisterForTypes<FusedResizeAndPadConv2DOp, Half, float,
                                 double>(r, "FusedResizeAndPadConv2D",
                                         nullptr);
}

}  // namespace weft
