// EncodePng: each [height, width, channels] image of a [..., h, w, c]
// uint8/uint16 tensor to a PNG string with libpng, as TensorFlow writes it
// (gray, gray+alpha, RGB or RGBA by channel count; 8 or 16 bits; no
// interlacing; zlib level `compression`, -1 for zlib's default; the
// largest zlib memory level). Images encode in parallel, each straight
// from the input tensor's rows into its output string.
//
// libpng reports errors by longjmp: setjmp lives in WritePng, which holds
// no C++ objects; the caller owns the write state and frees it.
#include <png.h>
#include <zlib.h>

#include <csetjmp>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/image_codec.h"
#include "ops/cpu/image_codec_png.h"
#include "ops/framework/kernel_registry.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

void PngWrite(png_structp png, png_bytep data, size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))
      ->append(reinterpret_cast<const char*>(data), n);
}

void PngFlush(png_structp) {}

struct PngImage {
  const unsigned char* pixels;
  png_uint_32 width, height;
  int channels, bits, compression;
};

bool WritePng(png_structp png, png_infop info, const PngImage* image) {
  if (setjmp(png_jmpbuf(png))) return false;
  static constexpr int kColorTypes[] = {PNG_COLOR_TYPE_GRAY,
                                        PNG_COLOR_TYPE_GRAY_ALPHA,
                                        PNG_COLOR_TYPE_RGB,
                                        PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_compression_level(
      png, image->compression < 0 ? Z_DEFAULT_COMPRESSION : image->compression);
  png_set_compression_mem_level(png, MAX_MEM_LEVEL);
  png_set_IHDR(png, info, image->width, image->height, image->bits,
               kColorTypes[image->channels - 1], PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  if (image->bits > 8) png_set_swap(png);  // values are little-endian here
  const size_t stride = static_cast<size_t>(image->width) * image->channels *
                        (image->bits / 8);
  const unsigned char* row = image->pixels;
  for (png_uint_32 y = 0; y < image->height; ++y, row += stride) {
    png_write_row(png, row);
  }
  png_write_end(png, nullptr);
  return true;
}

// Encodes one image into *out; false (and the message in *message) if
// libpng fails.
bool EncodeOne(const PngImage& image, std::string* out, std::string* message) {
  PngErrorText error;
  png_structp png = png_create_write_struct(
      PNG_LIBPNG_VER_STRING, &error, PngSaveErrorAndJump, PngDropWarning);
  png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
  bool ok = false;
  if (info != nullptr) {
    png_set_write_fn(png, out, PngWrite, PngFlush);
    ok = WritePng(png, info, &image);
  } else {
    std::snprintf(error.text, sizeof(error.text), "out of memory");
  }
  png_destroy_write_struct(&png, &info);
  if (!ok) *message = error.text;
  return ok;
}

class EncodePngOp : public OpKernel {
 public:
  explicit EncodePngOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("compression", &compression_);
    if (s.ok() && (compression_ < -1 || compression_ > 9)) {
      s = absl::InvalidArgumentError(absl::StrCat(
          "compression should be in [-1,9], got ", compression_));
    }
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& image = c->input(0);
    const TensorShape& shape = image.shape();
    OP_REQUIRES(c, shape.dims() >= 3,
                absl::InvalidArgumentError(absl::StrCat(
                    "images must be at least rank 3", shape.DebugString())));
    const int d = shape.dims();
    const int64_t height = shape.dim_size(d - 3);
    const int64_t width = shape.dim_size(d - 2);
    const int64_t channels = shape.dim_size(d - 1);
    OP_REQUIRES(c, channels >= 1 && channels <= 4,
                absl::InvalidArgumentError(absl::StrCat(
                    "image must have 1, 2, 3, or 4 channels, got ", channels)));
    const int bytes = image.dtype() == DT_UINT16 ? 2 : 1;
    OP_REQUIRES(c, width * channels * bytes <= (int64_t{1} << 31) - 1 &&
                       height <= (int64_t{1} << 31) - 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "image too large to encode: ", shape.DebugString())));
    TensorShape batch;
    for (int i = 0; i < d - 3; ++i) batch.AddDim(shape.dim_size(i));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, batch, &out));
    const int64_t images = batch.num_elements();
    const int64_t image_bytes = height * width * channels * bytes;
    const auto* pixels = static_cast<const unsigned char*>(image.raw_data());
    std::string* strings = out->data<std::string>();
    std::vector<std::string> errors(images);
    ParallelRange(c, images, image_bytes * 20 + 1000, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        PngImage one{pixels + i * image_bytes,
                     static_cast<png_uint_32>(width),
                     static_cast<png_uint_32>(height),
                     static_cast<int>(channels), bytes * 8,
                     static_cast<int>(compression_)};
        if (!EncodeOne(one, &strings[i], &errors[i]) && errors[i].empty()) {
          errors[i] = "failed";
        }
      }
    });
    std::vector<std::string> failed;
    std::string first;
    for (int64_t i = 0; i < images; ++i) {
      if (errors[i].empty()) continue;
      failed.push_back(std::to_string(i));
      if (first.empty()) first = errors[i];
    }
    OP_REQUIRES(c, failed.empty(),
                absl::InvalidArgumentError(absl::StrCat(
                    "PNG encoding failed at the following flattened batch "
                    "indices: ", absl::StrJoin(failed, ", "), " (", first,
                    "; EncodePng node '", name(), "', image ",
                    shape.DebugString(), ")")));
  }

 private:
  int64_t compression_ = -1;
};

}  // namespace

void RegisterPngEncodeKernel(KernelRegistry* r) {
  r->Register(KernelDef("EncodePng", kDeviceTypeCpu), MakeKernel<EncodePngOp>);
}

}  // namespace weft
