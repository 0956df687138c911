// The image codecs' shared pieces (image_codec.h): format sniffing by magic
// bytes, the size bound every decoder checks before allocating, the
// decoded image's output (an 8-bit decoder writes straight into a uint8
// output) and the widening of 8-bit pixels into uint16/float outputs, with
// TensorFlow's scales for JPEG, GIF and BMP (x * 256, x * (1/255)), threaded over rows; and
// RegisterImageCodecKernels, which calls the per-file registrations.
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/image_codec.h"
#include "ops/framework/kernel_registry.h"
#include "ops/registration.h"
#include "runtime/core/status.h"

namespace weft {

ImageFormat SniffImageFormat(absl::string_view data) {
  if (absl::StartsWith(data, "\xff\xd8\xff")) return ImageFormat::kJpeg;
  if (absl::StartsWith(data, "\x89PNG\r\n\x1a\n")) return ImageFormat::kPng;
  if (absl::StartsWith(data, "GIF8")) return ImageFormat::kGif;
  if (absl::StartsWith(data, "BM")) return ImageFormat::kBmp;
  if (data.size() >= 12 && absl::StartsWith(data, "RIFF") &&
      data.substr(8, 4) == "WEBP") {
    return ImageFormat::kWebp;
  }
  if (absl::StartsWith(data, "\xff\x0a") ||
      absl::StartsWith(data, absl::string_view("\0\0\0\x0cJXL \r\n\x87\n", 12))) {
    return ImageFormat::kJpegXl;
  }
  return ImageFormat::kUnknown;
}

const char* ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kPng: return "PNG";
    case ImageFormat::kGif: return "GIF";
    case ImageFormat::kBmp: return "BMP";
    case ImageFormat::kWebp: return "WebP";
    case ImageFormat::kJpegXl: return "JPEG XL";
    case ImageFormat::kUnknown: break;
  }
  return "unknown";
}

absl::Status CorruptImage(const DecodeRequest& r, absl::string_view what,
                          absl::string_view detail) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, detail.empty() ? "" : ": ", detail, " (", r.op,
                   " node '", r.node, "')"));
}

absl::Status CheckImageSize(const DecodeRequest& r, const char* format,
                            int64_t frames, int64_t height, int64_t width,
                            int64_t channels, int bytes) {
  constexpr int64_t kMaxSide = int64_t{1} << 27;
  constexpr int64_t kMaxPixels = int64_t{1} << 29;
  constexpr int64_t kMaxBytes = int64_t{1} << 31;
  if (height <= 0 || width <= 0 || height >= kMaxSide || width >= kMaxSide ||
      height * width >= kMaxPixels) {
    return CorruptImage(r, absl::StrCat(format, " size too large for int: ",
                                        width, " by ", height),
                        "");
  }
  // Each factor is below 2^29 here, so the product cannot overflow when
  // checked step by step.
  int64_t total = height * width;
  for (int64_t f : {frames, channels, static_cast<int64_t>(bytes)}) {
    if (f <= 0 || total > kMaxBytes / f) {
      return CorruptImage(
          r, absl::StrCat(format, " image too large: ", frames, " x ", height,
                          " x ", width, " x ", channels, " values of ", bytes,
                          " bytes is over 2^31 bytes"),
          "");
    }
    total *= f;
  }
  return absl::OkStatus();
}

absl::Status AllocateDecoded(OpKernelContext* c, const DecodeRequest& r,
                             int64_t frames, int64_t height, int64_t width,
                             int64_t channels, Tensor* scratch, Tensor** out,
                             uint8_t** pixels) {
  TensorShape shape;
  if (r.frame_dim) shape.AddDim(frames);
  shape.AddDim(height);
  shape.AddDim(width);
  shape.AddDim(channels);
  WEFT_RETURN_IF_ERROR(c->allocate_output(0, shape, out));
  if (r.dtype == DT_UINT8) {
    *pixels = static_cast<uint8_t*>((*out)->raw_data());
    return absl::OkStatus();
  }
  WEFT_RETURN_IF_ERROR(c->allocate_temp(DT_UINT8, shape, scratch));
  *pixels = static_cast<uint8_t*>(scratch->raw_data());
  return absl::OkStatus();
}

void WidenDecoded(OpKernelContext* c, const Tensor& scratch, Tensor* out) {
  if (out->dtype() == DT_UINT8) return;
  const uint8_t* src = scratch.data<uint8_t>();
  const int64_t n = scratch.NumElements();
  if (out->dtype() == DT_UINT16) {
    uint16_t* dst = out->data<uint16_t>();
    ParallelRange(c, n, 2, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = static_cast<uint16_t>(src[i] << 8);
    });
    return;
  }
  float* dst = out->data<float>();
  const float scale = 1.0f / 255.0f;
  ParallelRange(c, n, 2, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = static_cast<float>(src[i]) * scale;
  });
}

void RegisterImageCodecKernels(KernelRegistry* r) {
  RegisterImageDecodeKernels(r);
  RegisterPngEncodeKernel(r);
  RegisterJpegEncodeKernels(r);
  RegisterJpegShapeKernel(r);
}

}  // namespace weft
