// BMP decoding (DecodeBmp, and BMP data given to the other decode ops),
// written here as TensorFlow reads BMPs: uncompressed 8-, 24- and 32-bit
// pixels at the offset the file header gives, rows padded to 4 bytes,
// bottom-up for a positive height and top-down for a negative one; BGR(A)
// becomes RGB(A), 8-bit values are gray (the palette is ignored), a
// missing alpha is opaque and an unwanted one is dropped. Rows decode
// straight into the output (uint8) in parallel.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/image_codec.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

int32_t LittleEndian32(const unsigned char* p) {
  return static_cast<int32_t>(static_cast<uint32_t>(p[0]) |
                              (static_cast<uint32_t>(p[1]) << 8) |
                              (static_cast<uint32_t>(p[2]) << 16) |
                              (static_cast<uint32_t>(p[3]) << 24));
}

// One row of `width` pixels of `in_channels` (1: gray, 3: BGR, 4: BGRA)
// into `out_channels` RGB(A) or gray values.
void ConvertBmpRow(const unsigned char* src, unsigned char* dst, int64_t width,
                   int in_channels, int out_channels) {
  for (int64_t x = 0; x < width; ++x, src += in_channels, dst += out_channels) {
    if (in_channels == 1) {
      for (int k = 0; k < out_channels; ++k) dst[k] = src[0];
      if (out_channels == 4) dst[3] = 255;
      continue;
    }
    if (out_channels == 1) {  // not reachable from TensorFlow's channels
      dst[0] = src[1];
      continue;
    }
    dst[0] = src[2];
    dst[1] = src[1];
    dst[2] = src[0];
    if (out_channels == 4) dst[3] = in_channels == 4 ? src[3] : 255;
  }
}

}  // namespace

void DecodeBmpImage(OpKernelContext* c, absl::string_view data,
                    const DecodeRequest& r) {
  OP_REQUIRES(c, r.channels != 1,
              absl::InvalidArgumentError(absl::StrCat(
                  "`channels` must be 0, 3 or 4 for BMP, but got ", r.channels)));
  OP_REQUIRES(c, data.size() >= 32,
              absl::InvalidArgumentError(absl::StrCat(
                  "Incomplete bmp content, requires at least 32 bytes to find "
                  "the header size, width, height, and bpp, got ",
                  data.size(), " bytes")));
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const int64_t header_size = LittleEndian32(bytes + 10);
  const int64_t width = LittleEndian32(bytes + 18);
  const int64_t raw_height = LittleEndian32(bytes + 22);
  const int bpp = bytes[28] | (bytes[29] << 8);
  OP_REQUIRES(c, width > 0,
              CorruptImage(r, "Width must be positive", ""));
  OP_REQUIRES(c, raw_height != 0, CorruptImage(r, "Height must be nonzero", ""));
  OP_REQUIRES(c, header_size >= 0,
              CorruptImage(r, "header size must be nonnegative", ""));
  const int in_channels = bpp / 8;
  OP_REQUIRES(c, bpp % 8 == 0 && (in_channels == 1 || in_channels == 3 ||
                                  in_channels == 4),
              absl::InvalidArgumentError(absl::StrCat(
                  "Number of channels inherent in the image must be 1, 3 or "
                  "4, was ", in_channels)));
  const int out_channels = r.channels == 0 ? in_channels : r.channels;
  const bool top_down = raw_height < 0;
  const int64_t height = top_down ? -raw_height : raw_height;
  OP_REQUIRES_OK(c, CheckImageSize(r, "BMP", 1, height, width, out_channels, 1));
  const int64_t row_size = (8 * in_channels * width + 31) / 32 * 4;
  const int64_t needed = header_size + row_size * height;
  OP_REQUIRES(c, needed <= static_cast<int64_t>(data.size()),
              absl::InvalidArgumentError(absl::StrCat(
                  "Input size should match (header_size + row_size * "
                  "abs_height) but they differ by ",
                  static_cast<int64_t>(data.size()) - needed)));
  Tensor scratch, *out = nullptr;
  uint8_t* pixels = nullptr;
  OP_REQUIRES_OK(c, AllocateDecoded(c, r, 1, height, width, out_channels,
                                    &scratch, &out, &pixels));
  const unsigned char* rows = bytes + header_size;
  const int64_t out_stride = width * out_channels;
  ParallelRange(c, height, width * 4, [&](int64_t b, int64_t e) {
    for (int64_t y = b; y < e; ++y) {
      const int64_t src_row = top_down ? y : height - 1 - y;
      ConvertBmpRow(rows + src_row * row_size, pixels + y * out_stride, width,
                    in_channels, out_channels);
    }
  });
  WidenDecoded(c, scratch, out);
}

}  // namespace weft
