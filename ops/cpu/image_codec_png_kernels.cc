// PNG decoding with libpng (DecodePng, and PNG data given to DecodeImage,
// DecodeJpeg or DecodeGif). The transformations are TensorFlow's, in its
// order, so the pixels match bit for bit: palettes expand to RGB, gray
// below 8 bits to 8, RGB turns gray with weights 0.299/0.587 when 1 or 2
// channels are asked for and gray turns RGB when 3 or 4 are; an even
// channel count gets alpha (from tRNS, or opaque), an odd one loses it;
// 16-bit data is stripped to 8 for uint8 output and 8-bit data widened
// (x * 257) for uint16 and float output (float = uint16 / 65535).
//
// Rows decode straight into the output tensor (float output goes through
// a uint16 scratch). libpng reports errors by longjmp: setjmp lives in the
// two small functions that call it (ReadPngHeader, ReadPngRows), which hold
// no C++ objects; the caller owns the libpng state and frees it on every
// path. Warnings are dropped; the image's size is checked before anything
// is allocated.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/image_codec.h"
#include "ops/cpu/image_codec_png.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// The encoded bytes libpng reads from.
struct PngSource {
  const unsigned char* data;
  size_t size;
  size_t pos;
};

void PngRead(png_structp png, png_bytep out, size_t n) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (n > src->size - src->pos) png_error(png, "Read beyond end of data");
  std::memcpy(out, src->data + src->pos, n);
  src->pos += n;
}

// What ReadPngHeader learned and set up.
struct PngLayout {
  png_uint_32 width;
  png_uint_32 height;
  int channels;  // of the output
  int passes;
  bool widen_to_16;  // decode 8-bit rows, then widen each value to 16 bits
};

// Reads the header and sets TensorFlow's transformations for `channels`
// (0: the image's own) and `bits` (8 or 16) per value. False on a libpng
// error.
bool ReadPngHeader(png_structp png, png_infop info, int channels, int bits,
                   PngLayout* layout) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0;
  png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, nullptr,
               nullptr, nullptr);
  const bool has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  if (channels == 0) {
    channels = color_type == PNG_COLOR_TYPE_PALETTE ? (has_trns ? 4 : 3)
                                                    : png_get_channels(png, info);
  }
  const bool has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0;
  if (channels % 2 == 0) {
    if (!has_alpha) {
      if (has_trns) {
        png_set_tRNS_to_alpha(png);
      } else {
        png_set_add_alpha(png, (1u << bit_depth) - 1, PNG_FILLER_AFTER);
      }
    }
  } else if (has_alpha || has_trns) {
    png_set_strip_alpha(png);
  }
  if (bit_depth > 8 && bits <= 8) png_set_strip_16(png);
  png_set_packing(png);
  const int passes = png_set_interlace_handling(png);
  if (bits > 8) {
    const uint16_t probe = 1;
    unsigned char first;
    std::memcpy(&first, &probe, 1);
    if (first == 1) png_set_swap(png);  // little-endian host
  }
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  const bool is_gray = (color_type & PNG_COLOR_MASK_COLOR) == 0;
  if (is_gray && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (channels < 3) {
    if (!is_gray) png_set_rgb_to_gray(png, PNG_ERROR_ACTION_NONE, 0.299, 0.587);
  } else if (is_gray) {
    png_set_gray_to_rgb(png);
  }
  png_read_update_info(png, info);
  layout->width = width;
  layout->height = height;
  layout->channels = channels;
  layout->passes = passes;
  layout->widen_to_16 = bit_depth <= 8 && bits == 16;
  return true;
}

// Decodes every pass's rows into `pixels` (rows `stride` bytes apart).
bool ReadPngRows(png_structp png, png_infop info, const PngLayout* layout,
                 unsigned char* pixels, size_t stride) {
  if (setjmp(png_jmpbuf(png))) return false;
  for (int pass = 0; pass < layout->passes; ++pass) {
    unsigned char* row = pixels;
    for (png_uint_32 y = 0; y < layout->height; ++y, row += stride) {
      png_read_row(png, row, nullptr);
    }
  }
  png_read_end(png, info);
  return true;
}

// Frees libpng's read state however the decode ends.
class PngReadState {
 public:
  PngReadState(PngSource* src, PngErrorText* error) {
    png_ = png_create_read_struct(PNG_LIBPNG_VER_STRING, error,
                                  PngSaveErrorAndJump, PngDropWarning);
    if (png_ != nullptr) {
      info_ = png_create_info_struct(png_);
      png_set_read_fn(png_, src, PngRead);
    }
  }
  ~PngReadState() {
    if (png_ != nullptr) png_destroy_read_struct(&png_, &info_, nullptr);
  }
  png_structp png() const { return png_; }
  png_infop info() const { return info_; }

 private:
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
};

// Rows of 8-bit values, each at the start of a `stride`-byte row, widened
// in place to 16 bits (x * 257), from the end so nothing is overwritten.
void WidenRowsTo16(OpKernelContext* c, unsigned char* pixels, int64_t rows,
                   int64_t values, size_t stride) {
  ParallelRange(c, rows, values * 2, [&](int64_t b, int64_t e) {
    for (int64_t y = b; y < e; ++y) {
      unsigned char* row = pixels + y * stride;
      uint16_t* wide = reinterpret_cast<uint16_t*>(row);
      for (int64_t i = values - 1; i >= 0; --i) {
        wide[i] = static_cast<uint16_t>(row[i] * 257);
      }
    }
  });
}

}  // namespace

void DecodePngImage(OpKernelContext* c, absl::string_view data,
                    const DecodeRequest& r) {
  PngSource src{reinterpret_cast<const unsigned char*>(data.data()),
                data.size(), 0};
  PngErrorText error;
  PngReadState state(&src, &error);
  OP_REQUIRES(c, state.png() != nullptr && state.info() != nullptr,
              absl::ResourceExhaustedError("libpng could not allocate its state"));
  const int bits = r.dtype == DT_UINT8 ? 8 : 16;
  PngLayout layout{};
  OP_REQUIRES(c, ReadPngHeader(state.png(), state.info(), r.channels, bits,
                               &layout),
              CorruptImage(r, "Invalid PNG. Failed to initialize decoder",
                           error.text));
  const int bytes = bits / 8;
  OP_REQUIRES_OK(c, CheckImageSize(r, "PNG", 1, layout.height, layout.width,
                                   layout.channels, bytes));
  TensorShape shape;
  if (r.frame_dim) shape.AddDim(1);
  shape.AddDim(layout.height);
  shape.AddDim(layout.width);
  shape.AddDim(layout.channels);
  Tensor* out = nullptr;
  OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
  Tensor wide;  // float output decodes to uint16 first
  unsigned char* pixels = static_cast<unsigned char*>(out->raw_data());
  if (r.dtype == DT_FLOAT) {
    OP_REQUIRES_OK(c, c->allocate_temp(DT_UINT16, shape, &wide));
    pixels = static_cast<unsigned char*>(wide.raw_data());
  }
  const int64_t values = static_cast<int64_t>(layout.width) * layout.channels;
  const size_t stride = static_cast<size_t>(values) * bytes;
  OP_REQUIRES(c, ReadPngRows(state.png(), state.info(), &layout, pixels, stride),
              CorruptImage(r, "Invalid PNG data, size " +
                                  std::to_string(data.size()),
                           error.text));
  if (layout.widen_to_16) {
    WidenRowsTo16(c, pixels, layout.height, values, stride);
  }
  if (r.dtype == DT_FLOAT) {
    const uint16_t* in = wide.data<uint16_t>();
    float* dst = out->data<float>();
    const float scale = 1.0f / 65535.0f;
    ParallelRange(c, out->NumElements(), 2, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = static_cast<float>(in[i]) * scale;
    });
  }
}

}  // namespace weft
