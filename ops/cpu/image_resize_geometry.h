// The geometry every image resize shares (TensorFlow's ImageResizerState
// and ImageResizerGradientState), used by the bilinear and nearest resizes
// (image_resize_kernels.cc), the area and bicubic ones
// (image_resample_kernels.cc), and their kernel registration:
//   scale = align_corners && out > 1 ? (in - 1) / (out - 1) : in / out,
//   in float; `size` a vector of two positive int32; images NHWC with
//   non-empty spatial dims below 2^31 and at least one channel; output
//   shapes checked for overflow before allocation.
#ifndef WEFT_OPS_CPU_IMAGE_RESIZE_GEOMETRY_H_
#define WEFT_OPS_CPU_IMAGE_RESIZE_GEOMETRY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/status.h"

namespace weft {
namespace image_resize {

inline float ResizeScale(int64_t in, int64_t out, bool align_corners) {
  return align_corners && out > 1
             ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
             : static_cast<float>(in) / static_cast<float>(out);
}

struct ResizeAttrs {
  bool align_corners = false;
  bool half_pixel_centers = false;
};

inline ResizeAttrs ReadResizeAttrs(OpKernelConstruction* c) {
  ResizeAttrs a;
  c->SetStatus(c->GetAttr("align_corners", &a.align_corners));
  c->SetStatus(c->GetAttr("half_pixel_centers", &a.half_pixel_centers));
  return a;
}

inline absl::Status CheckAttrPair(const ResizeAttrs& a) {
  if (a.half_pixel_centers && a.align_corners) {
    return absl::InvalidArgumentError(
        "If half_pixel_centers is True, align_corners must be False.");
  }
  return absl::OkStatus();
}

// The output size from `size` (input 1): a vector of two positive int32.
inline absl::Status ReadSize(const Tensor& size, const char* positive_message,
                      int64_t* h, int64_t* w) {
  if (size.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape_t must be 1-dimensional", size.shape().DebugString(),
        " (size)"));
  }
  if (size.NumElements() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape_t must have two elements", size.shape().DebugString(),
        " (size)"));
  }
  *h = size.data<int32_t>()[0];
  *w = size.data<int32_t>()[1];
  if (*h <= 0 || *w <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(positive_message, " (size [", *h, ",", *w, "])"));
  }
  return absl::OkStatus();
}

// Allocates output 0 as [batch, h, w, channels], refusing shapes whose
// element count overflows.
inline absl::Status AllocateImage(OpKernelContext* c, int64_t batch, int64_t h,
                           int64_t w, int64_t channels, Tensor** out) {
  absl::StatusOr<TensorShape> shape =
      TensorShape::Build({batch, h, w, channels});
  if (!shape.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "output shape [", batch, ",", h, ",", w, ",", channels,
        "] is too large: ", shape.status().message()));
  }
  return c->allocate_output(0, *shape, out);
}

// The forward ops' geometry, validated as TensorFlow's ImageResizerState.
struct Geometry {
  int64_t batch, in_h, in_w, out_h, out_w, channels;
  float h_scale, w_scale;
};

inline absl::StatusOr<Geometry> ForwardGeometry(OpKernelContext* c,
                                         const ResizeAttrs& a) {
  WEFT_RETURN_IF_ERROR(CheckAttrPair(a));
  const Tensor& images = c->input(0);
  if (images.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input must be 4-dimensional", images.shape().DebugString(),
        " (images)"));
  }
  Geometry g;
  g.batch = images.dim_size(0);
  g.in_h = images.dim_size(1);
  g.in_w = images.dim_size(2);
  g.channels = images.dim_size(3);
  if (g.channels <= 0) {
    return absl::InvalidArgumentError("image must have at least one channel");
  }
  if (g.in_h <= 0 || g.in_w <= 0) {
    return absl::InvalidArgumentError("input image must be of non-zero size");
  }
  constexpr int64_t kInt32Max = 2147483647;
  if (g.in_h >= kInt32Max || g.in_w >= kInt32Max) {
    return absl::InvalidArgumentError(
        "input sizes must be between 0 and max int32");
  }
  WEFT_RETURN_IF_ERROR(ReadSize(c->input(1), "output dimensions must be positive",
                                &g.out_h, &g.out_w));
  g.h_scale = ResizeScale(g.in_h, g.out_h, a.align_corners);
  g.w_scale = ResizeScale(g.in_w, g.out_w, a.align_corners);
  return g;
}


// A CPU kernel Kernel<T> of `op` for each T in Ts, with the input named
// host_arg (if any: `size`, `crop_size`, ...) in host memory.
template <template <typename> class Kernel, typename... Ts>
void RegisterForTypes(KernelRegistry* r, const char* op, const char* host_arg) {
  auto def = [&](DataType t) {
    KernelDef d(op, kDeviceTypeCpu);
    d.TypeConstraint("T", t);
    if (host_arg != nullptr) d.HostMemory(host_arg);
    return d;
  };
  (r->Register(def(DataTypeToEnum<Ts>::value), MakeKernel<Kernel<Ts>>), ...);
}

}  // namespace image_resize
}  // namespace weft

#endif  // WEFT_OPS_CPU_IMAGE_RESIZE_GEOMETRY_H_
