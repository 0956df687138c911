// JPEG decoding with libjpeg-turbo (DecodeJpeg, DecodeAndCropJpeg and JPEG
// data given to DecodePng, DecodeGif or DecodeImage) and ExtractJpegShape.
// As TensorFlow decodes: channels 0 means min(components, 3); CMYK/YCCK
// data decodes as CMYK and converts to RGB (inverted when the file has an
// Adobe marker); ratio scales by 1/ratio; dct_method "" is INTEGER_FAST;
// a truncated file with try_recover_truncated gets a fake end-of-image
// marker (libjpeg fills the rest), and rows past a failed read copy the
// row above; a decode that read fewer than acceptable_fraction of the rows
// fails, one that read enough is zero-filled below. Crops use libjpeg's
// jpeg_crop_scanline/jpeg_skip_scanlines, so only the window is decoded.
//
// Rows decode straight into the output tensor unless they need converting
// (CMYK) or trimming to the crop window (through one scratch row).
// libjpeg reports errors by longjmp: setjmp lives in the small functions
// that call the library (ReadJpegHeader, StartJpeg, ReadJpegRows), which
// hold no C++ objects; the caller owns the decompress state and destroys
// it on every path. Sizes are checked before anything is allocated and
// libjpeg's own memory is bounded (image_codec_jpeg.h).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/image_codec.h"
#include "ops/cpu/image_codec_jpeg.h"
#include "ops/framework/kernel_registry.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// A memory source that, like TensorFlow's, may end a truncated file with a
// fake EOI marker once.
struct JpegSource {
  jpeg_source_mgr pub;
  const JOCTET* data;
  size_t size;
  bool try_recover;
};

const JOCTET kFakeEoi[2] = {0xFF, JPEG_EOI};

void SourceInit(j_decompress_ptr) {}
void SourceTerm(j_decompress_ptr) {}

boolean SourceFill(j_decompress_ptr cinfo) {
  auto* src = reinterpret_cast<JpegSource*>(cinfo->src);
  if (src->pub.bytes_in_buffer == 0 && src->pub.next_input_byte == src->data) {
    ERREXIT(cinfo, JERR_INPUT_EMPTY);
    return FALSE;
  }
  if (src->pub.bytes_in_buffer != 0) return src->try_recover ? TRUE : FALSE;
  if (src->pub.next_input_byte != kFakeEoi && src->try_recover) {
    WARNMS(cinfo, JWRN_JPEG_EOF);
    src->pub.next_input_byte = kFakeEoi;
    src->pub.bytes_in_buffer = 2;
    return TRUE;
  }
  ERREXIT(cinfo, JERR_FILE_READ);
  return FALSE;
}

void SourceSkip(j_decompress_ptr cinfo, long count) {
  auto* src = reinterpret_cast<JpegSource*>(cinfo->src);
  if (count <= 0) return;
  if (static_cast<size_t>(count) > src->pub.bytes_in_buffer) {
    src->pub.bytes_in_buffer = 0;
    SourceFill(cinfo);
  } else {
    src->pub.next_input_byte += count;
    src->pub.bytes_in_buffer -= count;
  }
}

void InitSource(JpegSource* src, absl::string_view data, bool try_recover) {
  src->data = reinterpret_cast<const JOCTET*>(data.data());
  src->size = data.size();
  src->try_recover = try_recover;
  src->pub.init_source = SourceInit;
  src->pub.fill_input_buffer = SourceFill;
  src->pub.skip_input_data = SourceSkip;
  src->pub.resync_to_restart = jpeg_resync_to_restart;
  src->pub.term_source = SourceTerm;
  src->pub.next_input_byte = src->data;
  src->pub.bytes_in_buffer = src->size;
}

// Owns a decompress object (and its error manager and source), destroyed
// however the decode ends.
class JpegDecompress {
 public:
  JpegDecompress(absl::string_view data, bool try_recover) {
    cinfo_.err = InitJpegErrors(&errors_);
    cinfo_.client_data = nullptr;
    created_ = Create();
    InitSource(&source_, data, try_recover);
    cinfo_.src = &source_.pub;
  }
  ~JpegDecompress() {
    if (created_) jpeg_destroy_decompress(&cinfo_);
  }
  bool created() const { return created_; }
  j_decompress_ptr cinfo() { return &cinfo_; }
  JpegErrors* errors() { return &errors_; }
  const char* message() const { return errors_.message; }

 private:
  bool Create() {
    if (setjmp(errors_.jump)) return false;
    jpeg_create_decompress(&cinfo_);
    cinfo_.mem->max_memory_to_use = kJpegMaxMemory;
    return true;
  }

  jpeg_decompress_struct cinfo_;
  JpegErrors errors_;
  JpegSource source_;
  bool created_ = false;
};

bool ReadJpegHeaderOnly(j_decompress_ptr cinfo, JpegErrors* errors) {
  if (setjmp(errors->jump)) return false;
  jpeg_read_header(cinfo, TRUE);
  return true;
}

// Reads the header, sets the output colour space for `components` (0:
// TensorFlow's choice, written back) and the flags, and computes the
// output size.
bool ReadJpegHeader(j_decompress_ptr cinfo, JpegErrors* errors,
                    const JpegDecodeFlags* f, int* components) {
  if (setjmp(errors->jump)) return false;
  jpeg_read_header(cinfo, TRUE);
  if (*components == 0) *components = std::min(cinfo->num_components, 3);
  if (*components == 1) {
    cinfo->out_color_space = JCS_GRAYSCALE;
  } else if (*components == 3) {
    const bool cmyk = cinfo->jpeg_color_space == JCS_CMYK ||
                      cinfo->jpeg_color_space == JCS_YCCK;
    cinfo->out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  }
  cinfo->do_fancy_upsampling = f->fancy_upscaling ? TRUE : FALSE;
  cinfo->scale_num = 1;
  cinfo->scale_denom = static_cast<unsigned int>(f->ratio);
  cinfo->dct_method = f->fast_dct ? JDCT_IFAST : JDCT_ISLOW;
  jpeg_calc_output_dimensions(cinfo);
  return true;
}

// Starts decompressing and, for a crop, narrows the scanlines to the
// window's columns (libjpeg widens it leftwards to an iMCU boundary) and
// skips the rows above it.
bool StartJpeg(j_decompress_ptr cinfo, JpegErrors* errors,
               const JpegDecodeFlags* f) {
  if (setjmp(errors->jump)) return false;
  jpeg_start_decompress(cinfo);
  if (f->crop) {
    JDIMENSION x = static_cast<JDIMENSION>(f->crop_x);
    JDIMENSION width = static_cast<JDIMENSION>(f->crop_width);
    jpeg_crop_scanline(cinfo, &x, &width);
    if (jpeg_skip_scanlines(cinfo, f->crop_y) !=
        static_cast<JDIMENSION>(f->crop_y)) {
      ERREXIT(cinfo, JERR_BAD_STATE);
    }
  }
  return true;
}

// Where ReadJpegRows puts the rows and how.
struct JpegRows {
  unsigned char* out;       // the first output row
  size_t stride;            // bytes per output row
  int height;               // rows to produce
  int width;                // pixels per output row
  int components;           // output channels
  unsigned char* scratch;   // one decoded row when converting/cropping
  int offset;               // bytes to skip at the scratch row's start
  bool cmyk;                // scratch holds CMYK to turn into RGB
  bool adobe;               // ... stored inverted (Adobe)
  int first_row;            // the decoder's scanline of output row 0
  int rows_read;            // out: rows decoded before a stop
};

void CmykRowToRgb(const JpegRows* rows, unsigned char* dst) {
  const unsigned char* src = rows->scratch + rows->offset;
  for (int i = 0; i < rows->width; ++i, src += 4, dst += 3) {
    const int c = src[0], m = src[1], y = src[2], k = src[3];
    if (rows->adobe) {
      dst[0] = static_cast<unsigned char>(k * c / 255);
      dst[1] = static_cast<unsigned char>(k * m / 255);
      dst[2] = static_cast<unsigned char>(k * y / 255);
    } else {
      dst[0] = static_cast<unsigned char>((255 - k) * (255 - c) / 255);
      dst[1] = static_cast<unsigned char>((255 - k) * (255 - m) / 255);
      dst[2] = static_cast<unsigned char>((255 - k) * (255 - y) / 255);
    }
  }
}

// Decodes the rows; a read that stops early sets rows_read (and, with
// try_recover, fills the rest from the row above). Then finishes, or
// aborts after a short read. False on a libjpeg error.
bool ReadJpegRows(j_decompress_ptr cinfo, JpegErrors* errors, JpegRows* rows,
                  const JpegDecodeFlags* f) {
  if (setjmp(errors->jump)) return false;
  const JDIMENSION end = static_cast<JDIMENSION>(rows->first_row + rows->height);
  const size_t row_bytes = static_cast<size_t>(rows->width) * rows->components;
  unsigned char* line = rows->out;
  bool short_read = false;
  rows->rows_read = rows->height;
  while (cinfo->output_scanline < end) {
    JSAMPROW target = rows->scratch != nullptr ? rows->scratch : line;
    if (jpeg_read_scanlines(cinfo, &target, 1) != 1) {
      if (!f->try_recover_truncated) {
        rows->rows_read = static_cast<int>(cinfo->output_scanline) - rows->first_row;
        short_read = true;
      } else {
        for (JDIMENSION y = cinfo->output_scanline; y < end; ++y) {
          if (y == 0) {
            std::memset(line, 0, row_bytes);
          } else {
            std::memcpy(line, line - rows->stride, row_bytes);
          }
          line += rows->stride;
        }
        cinfo->output_scanline = end;
      }
      break;
    }
    if (rows->cmyk) {
      CmykRowToRgb(rows, line);
    } else if (rows->scratch != nullptr) {
      std::memcpy(line, rows->scratch + rows->offset, row_bytes);
    }
    line += rows->stride;
  }
  if (f->crop && cinfo->output_scanline < cinfo->output_height) {
    jpeg_skip_scanlines(cinfo, cinfo->output_height - cinfo->output_scanline);
  }
  if (short_read) {
    jpeg_abort_decompress(cinfo);
  } else {
    jpeg_finish_decompress(cinfo);
  }
  return true;
}

absl::Status JpegFailed(const DecodeRequest& r, const char* message) {
  return CorruptImage(
      r, "jpeg::Uncompress failed. Invalid JPEG data or crop window", message);
}

}  // namespace

void DecodeJpegImage(OpKernelContext* c, absl::string_view data,
                     const DecodeRequest& r) {
  const JpegDecodeFlags& f = r.jpeg;
  JpegDecompress jpeg(data, f.try_recover_truncated);
  OP_REQUIRES(c, jpeg.created(), JpegFailed(r, jpeg.message()));
  int components = r.channels;
  OP_REQUIRES(c, ReadJpegHeader(jpeg.cinfo(), jpeg.errors(), &f, &components),
              JpegFailed(r, jpeg.message()));
  OP_REQUIRES(c, components == 1 || components == 3,
              JpegFailed(r, absl::StrCat("invalid components value ",
                                         components).c_str()));
  j_decompress_ptr cinfo = jpeg.cinfo();
  const int64_t full_width = cinfo->output_width;
  const int64_t full_height = cinfo->output_height;
  OP_REQUIRES_OK(c, CheckImageSize(r, "JPEG", 1, full_height, full_width,
                                   cinfo->num_components, 1));
  int64_t height = full_height, width = full_width;
  if (f.crop) {
    OP_REQUIRES(c, f.crop_width > 0 && f.crop_height > 0 && f.crop_x >= 0 &&
                       f.crop_y >= 0 &&
                       int64_t{f.crop_y} + f.crop_height <= full_height &&
                       int64_t{f.crop_x} + f.crop_width <= full_width,
                JpegFailed(r, absl::StrCat("crop window [", f.crop_y, ", ",
                                           f.crop_x, ", ", f.crop_height, ", ",
                                           f.crop_width, "] is outside the ",
                                           full_height, "x", full_width,
                                           " image").c_str()));
    height = f.crop_height;
    width = f.crop_width;
  }
  OP_REQUIRES(c, StartJpeg(cinfo, jpeg.errors(), &f),
              JpegFailed(r, jpeg.message()));
  Tensor scratch, *out = nullptr;
  uint8_t* pixels = nullptr;
  OP_REQUIRES_OK(c, AllocateDecoded(c, r, 1, height, width, components,
                                    &scratch, &out, &pixels));
  const bool cmyk = cinfo->out_color_space == JCS_CMYK;
  const int decoded_components = cmyk ? 4 : components;
  std::vector<unsigned char> row;
  if (cmyk || f.crop) {
    row.resize(static_cast<size_t>(cinfo->output_width) * decoded_components);
  }
  JpegRows rows{pixels,
                static_cast<size_t>(width) * components,
                static_cast<int>(height),
                static_cast<int>(width),
                components,
                row.empty() ? nullptr : row.data(),
                static_cast<int>(cinfo->output_width - width) * decoded_components,
                cmyk,
                cinfo->saw_Adobe_marker != 0,
                f.crop ? f.crop_y : 0,
                0};
  OP_REQUIRES(c, ReadJpegRows(cinfo, jpeg.errors(), &rows, &f),
              JpegFailed(r, jpeg.message()));
  if (rows.rows_read < height) {
    const float fraction = static_cast<float>(rows.rows_read) / height;
    OP_REQUIRES(c, fraction >= std::min(1.0f, f.acceptable_fraction),
                JpegFailed(r, absl::StrCat("premature end of data after ",
                                           rows.rows_read, " of ", height,
                                           " rows").c_str()));
    std::memset(pixels + rows.rows_read * rows.stride, 0,
                (height - rows.rows_read) * rows.stride);
  }
  WidenDecoded(c, scratch, out);
}

namespace {

class ExtractJpegShapeOp : public OpKernel {
 public:
  explicit ExtractJpegShapeOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("output_type", &output_type_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& contents = c->input(0);
    OP_REQUIRES(c, contents.shape().dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "contents must be scalar, got shape ",
                    contents.shape().DebugString())));
    const std::string& data = contents.data<std::string>()[0];
    JpegDecompress jpeg(data, false);
    const bool ok = jpeg.created() &&
                    ReadJpegHeaderOnly(jpeg.cinfo(), jpeg.errors());
    OP_REQUIRES(c, ok, absl::InvalidArgumentError(absl::StrCat(
                           "Invalid JPEG data, size ", data.size(), ": ",
                           jpeg.message(), " (ExtractJpegShape node '",
                           name(), "')")));
    const int64_t dims[3] = {jpeg.cinfo()->image_height,
                             jpeg.cinfo()->image_width,
                             jpeg.cinfo()->num_components};
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({3}), &out));
    for (int i = 0; i < 3; ++i) {
      if (output_type_ == DT_INT32) {
        out->data<int32_t>()[i] = static_cast<int32_t>(dims[i]);
      } else {
        out->data<int64_t>()[i] = dims[i];
      }
    }
  }

 private:
  DataType output_type_ = DT_INT32;
};

}  // namespace

void RegisterJpegShapeKernel(KernelRegistry* r) {
  r->Register(KernelDef("ExtractJpegShape", kDeviceTypeCpu),
              MakeKernel<ExtractJpegShapeOp>);
}

}  // namespace weft
