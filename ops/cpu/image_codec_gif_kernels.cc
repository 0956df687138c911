// GIF decoding (DecodeGif, and GIF data given to DecodeImage) with giflib,
// composed as TensorFlow composes animations: every frame is the whole
// logical screen (SWidth x SHeight, RGB); frame k starts as a copy of
// frame k-1 (frame 0 as black), and the frame's own rectangle, clipped to
// the screen, is painted over it, except where a pixel has the transparent
// index of the graphics control block before it. Disposal modes are not
// applied (TensorFlow does not apply them either). DecodeImage without
// expand_animations decodes the first frame only.
//
// Hostile input: giflib's DGifSlurp would allocate each frame's raster at
// the size its descriptor claims (up to 65535 x 65535) before reading a
// pixel, so frames are read here one at a time with the low-level calls,
// and every size is checked (CheckImageSize) before anything is allocated;
// the composed frames are bounded by 2^31 bytes in all.
#include <gif_lib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/image_codec.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

constexpr int64_t kMaxComposedBytes = int64_t{1} << 31;

struct GifSource {
  const unsigned char* data;
  size_t left;
};

int ReadGifBytes(GifFileType* gif, GifByteType* buf, int size) {
  auto* src = static_cast<GifSource*>(gif->UserData);
  const size_t n = std::min(src->left, static_cast<size_t>(std::max(size, 0)));
  std::memcpy(buf, src->data, n);
  src->data += n;
  src->left -= n;
  return static_cast<int>(n);
}

// Closes the giflib handle whatever happens.
struct GifCloser {
  void operator()(GifFileType* gif) const {
    int error = 0;
    DGifCloseFile(gif, &error);
  }
};

// TensorFlow's "Invalid GIF data (size N), <detail>", with the node.
absl::Status InvalidGif(const DecodeRequest& r, size_t size, absl::string_view detail) {
  return CorruptImage(r, absl::StrCat("Invalid GIF data (size ", size, ")"), detail);
}

// A giflib failure: what was being read and giflib's reason.
absl::Status GifError(const DecodeRequest& r, size_t size, const char* what,
                      int code) {
  const char* reason = GifErrorString(code);
  return InvalidGif(r, size, absl::StrCat(what, ": ", reason ? reason : "unknown error"));
}

// The decoder's state between frames.
class GifComposer {
 public:
  GifComposer(GifFileType* gif, const DecodeRequest& r, size_t size)
      : gif_(gif), r_(r), size_(size), width_(gif->SWidth), height_(gif->SHeight) {}

  // Reads every record; the composed frames end up in frames().
  absl::Status Run(bool first_frame_only) {
    WEFT_RETURN_IF_ERROR(CheckImageSize(r_, "GIF", 1, height_, width_, 3, 1));
    const int64_t frame_bytes = height_ * width_ * 3;
    for (;;) {
      GifRecordType type;
      if (DGifGetRecordType(gif_, &type) != GIF_OK) {
        return GifError(r_, size_, "failed to read a record", gif_->Error);
      }
      if (type == TERMINATE_RECORD_TYPE) break;
      if (type == EXTENSION_RECORD_TYPE) {
        WEFT_RETURN_IF_ERROR(ReadExtension());
        continue;
      }
      if (type != IMAGE_DESC_RECORD_TYPE) continue;
      if (DGifGetImageDesc(gif_) != GIF_OK) {
        return GifError(r_, size_, "failed to read an image descriptor", gif_->Error);
      }
      if (static_cast<int64_t>(composed_.size()) + frame_bytes > kMaxComposedBytes) {
        return CorruptImage(
            r_, absl::StrCat("GIF image too large: more than ", frames_,
                             " frames of ", width_, " by ", height_,
                             " is over 2^31 bytes"),
            "");
      }
      WEFT_RETURN_IF_ERROR(ReadFrame(frame_bytes));
      transparent_ = NO_TRANSPARENT_COLOR;  // a control block covers one image
      ++frames_;
      if (first_frame_only) break;
    }
    if (frames_ == 0) {
      return InvalidGif(r_, size_, "gif file does not contain any image");
    }
    return absl::OkStatus();
  }

  int64_t frames() const { return frames_; }
  int64_t height() const { return height_; }
  int64_t width() const { return width_; }
  const std::vector<uint8_t>& composed() const { return composed_; }

 private:
  absl::Status ReadExtension() {
    int code = 0;
    GifByteType* block = nullptr;
    if (DGifGetExtension(gif_, &code, &block) != GIF_OK) {
      return GifError(r_, size_, "failed to read an extension", gif_->Error);
    }
    if (code == GRAPHICS_EXT_FUNC_CODE && block != nullptr && block[0] >= 4) {
      GraphicsControlBlock gcb;
      if (DGifExtensionToGCB(block[0], block + 1, &gcb) == GIF_OK) {
        transparent_ = gcb.TransparentColor;
      }
    }
    while (block != nullptr) {
      if (DGifGetExtensionNext(gif_, &block) != GIF_OK) {
        return GifError(r_, size_, "failed to read an extension", gif_->Error);
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadFrame(int64_t frame_bytes) {
    const GifImageDesc& desc = gif_->Image;
    WEFT_RETURN_IF_ERROR(
        CheckImageSize(r_, "GIF frame", 1, desc.Height, desc.Width, 1, 1));
    // Frame k starts as frame k-1 (frame 0 as black).
    const size_t start = composed_.size();
    if (frames_ == 0) {
      composed_.assign(frame_bytes, 0);
    } else {
      composed_.resize(start + frame_bytes);
      std::memcpy(composed_.data() + start, composed_.data() + start - frame_bytes,
                  frame_bytes);
    }
    uint8_t* canvas = composed_.data() + start;
    // The frame's pixels, rows in display order.
    raster_.resize(static_cast<size_t>(desc.Width) * desc.Height);
    if (desc.Interlace) {
      static constexpr int kOffset[] = {0, 4, 2, 1}, kJump[] = {8, 8, 4, 2};
      for (int pass = 0; pass < 4; ++pass) {
        for (int y = kOffset[pass]; y < desc.Height; y += kJump[pass]) {
          WEFT_RETURN_IF_ERROR(ReadLine(y));
        }
      }
    } else {
      for (int y = 0; y < desc.Height; ++y) WEFT_RETURN_IF_ERROR(ReadLine(y));
    }
    const ColorMapObject* map = desc.ColorMap ? desc.ColorMap : gif_->SColorMap;
    if (map == nullptr) {
      return InvalidGif(r_, size_, "missing color map");
    }
    const int64_t top = std::max<int64_t>(desc.Top, 0);
    const int64_t left = std::max<int64_t>(desc.Left, 0);
    const int64_t bottom = std::min<int64_t>(int64_t{desc.Top} + desc.Height, height_);
    const int64_t right = std::min<int64_t>(int64_t{desc.Left} + desc.Width, width_);
    for (int64_t y = top; y < bottom; ++y) {
      const GifByteType* row = raster_.data() + (y - desc.Top) * desc.Width;
      uint8_t* dst = canvas + y * width_ * 3;
      for (int64_t x = left; x < right; ++x) {
        const int index = row[x - desc.Left];
        if (index == transparent_) continue;  // keeps what is under it
        if (index >= map->ColorCount) {
          return InvalidGif(r_, size_,
                            absl::StrCat("found color index ", index,
                                         " outside of color map range ", map->ColorCount));
        }
        const GifColorType& color = map->Colors[index];
        dst[x * 3 + 0] = color.Red;
        dst[x * 3 + 1] = color.Green;
        dst[x * 3 + 2] = color.Blue;
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadLine(int y) {
    const int width = gif_->Image.Width;
    if (DGifGetLine(gif_, raster_.data() + static_cast<size_t>(y) * width, width) !=
        GIF_OK) {
      return GifError(r_, size_, "failed to read the pixels", gif_->Error);
    }
    return absl::OkStatus();
  }

  GifFileType* gif_;
  const DecodeRequest& r_;
  const size_t size_;
  const int64_t width_, height_;
  int transparent_ = NO_TRANSPARENT_COLOR;
  int64_t frames_ = 0;
  std::vector<GifByteType> raster_;  // the current frame's indices
  std::vector<uint8_t> composed_;    // frames x height x width x 3
};

}  // namespace

void DecodeGifImage(OpKernelContext* c, absl::string_view data,
                    const DecodeRequest& r) {
  OP_REQUIRES(c, r.channels == 0 || r.channels == 3,
              absl::InvalidArgumentError(absl::StrCat(
                  "channels must be 0 or 3 for GIF, got ", r.channels)));
  GifSource source{reinterpret_cast<const unsigned char*>(data.data()), data.size()};
  int error = D_GIF_SUCCEEDED;
  std::unique_ptr<GifFileType, GifCloser> gif(DGifOpen(&source, ReadGifBytes, &error));
  OP_REQUIRES(c, gif != nullptr && error == D_GIF_SUCCEEDED,
              GifError(r, data.size(), "failed to open gif file", error));
  GifComposer composer(gif.get(), r, data.size());
  OP_REQUIRES_OK(c, composer.Run(/*first_frame_only=*/!r.frame_dim));
  Tensor scratch, *out = nullptr;
  uint8_t* pixels = nullptr;
  OP_REQUIRES_OK(c, AllocateDecoded(c, r, composer.frames(), composer.height(),
                                    composer.width(), 3, &scratch, &out, &pixels));
  std::memcpy(pixels, composer.composed().data(), composer.composed().size());
  WidenDecoded(c, scratch, out);
}

}  // namespace weft
