// EncodeJpeg and EncodeJpegVariableQuality with libjpeg-turbo, set up as
// TensorFlow sets it: libjpeg's defaults, then quality (with baseline
// tables), optimized Huffman tables, JFIF density, progressive scans, no
// chroma subsampling when chroma_downsampling is off, and the XMP packet
// in an APP1 marker behind Adobe's namespace. Rows are read straight from
// the input tensor; the output grows in one malloc'd buffer (libjpeg's
// destination) that becomes the output string.
//
// libjpeg reports errors by longjmp: setjmp lives in CompressJpeg, which
// holds no C++ objects; the caller owns the compress state and the buffer
// and frees both whatever happens.
#include <cstdlib>
#include <limits>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/cpu/image_codec.h"
#include "ops/cpu/image_codec_jpeg.h"
#include "ops/framework/kernel_registry.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

// The settings CompressJpeg applies (EncodeJpeg's attrs).
struct JpegEncodeSettings {
  int quality = 95;
  bool progressive = false;
  bool optimize_size = false;
  bool chroma_downsampling = true;
  int density_unit = 1;  // JFIF: 1 dots per inch, 2 per cm
  int x_density = 300;
  int y_density = 300;
  std::string xmp_metadata;
};

// A growing malloc'd buffer as libjpeg's destination.
struct JpegSink {
  jpeg_destination_mgr pub;
  unsigned char* buffer;
  size_t capacity;
};

void SinkInit(j_compress_ptr cinfo) {
  auto* sink = reinterpret_cast<JpegSink*>(cinfo->dest);
  sink->capacity = 1 << 16;
  sink->buffer = static_cast<unsigned char*>(std::malloc(sink->capacity));
  if (sink->buffer == nullptr) ERREXIT(cinfo, JERR_OUT_OF_MEMORY);
  sink->pub.next_output_byte = sink->buffer;
  sink->pub.free_in_buffer = sink->capacity;
}

boolean SinkGrow(j_compress_ptr cinfo) {
  auto* sink = reinterpret_cast<JpegSink*>(cinfo->dest);
  const size_t grown = sink->capacity * 2;
  void* bigger = std::realloc(sink->buffer, grown);
  if (bigger == nullptr) ERREXIT(cinfo, JERR_OUT_OF_MEMORY);
  sink->buffer = static_cast<unsigned char*>(bigger);
  sink->pub.next_output_byte = sink->buffer + sink->capacity;
  sink->pub.free_in_buffer = grown - sink->capacity;
  sink->capacity = grown;
  return TRUE;
}

void SinkTerm(j_compress_ptr) {}

struct JpegInput {
  const unsigned char* pixels;
  int height, width, components;
};

bool CompressJpeg(j_compress_ptr cinfo, JpegErrors* errors, JpegSink* sink,
                  const JpegInput* in, const JpegEncodeSettings* s) {
  if (setjmp(errors->jump)) return false;
  jpeg_create_compress(cinfo);
  cinfo->mem->max_memory_to_use = kJpegMaxMemory;
  sink->pub.init_destination = SinkInit;
  sink->pub.empty_output_buffer = SinkGrow;
  sink->pub.term_destination = SinkTerm;
  cinfo->dest = &sink->pub;
  cinfo->image_width = static_cast<JDIMENSION>(in->width);
  cinfo->image_height = static_cast<JDIMENSION>(in->height);
  cinfo->input_components = in->components;
  cinfo->in_color_space = in->components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(cinfo);
  if (s->optimize_size) cinfo->optimize_coding = TRUE;
  cinfo->density_unit = static_cast<UINT8>(s->density_unit);
  cinfo->X_density = static_cast<UINT16>(s->x_density);
  cinfo->Y_density = static_cast<UINT16>(s->y_density);
  jpeg_set_quality(cinfo, s->quality, TRUE);
  if (s->progressive) jpeg_simple_progression(cinfo);
  if (!s->chroma_downsampling) {
    for (int i = 0; i < cinfo->num_components; ++i) {
      cinfo->comp_info[i].h_samp_factor = 1;
      cinfo->comp_info[i].v_samp_factor = 1;
    }
  }
  jpeg_start_compress(cinfo, TRUE);
  if (!s->xmp_metadata.empty()) {
    static const char kXmpNamespace[] = "http://ns.adobe.com/xap/1.0/";
    const size_t prefix = sizeof(kXmpNamespace);  // with its NUL
    const size_t length = prefix + s->xmp_metadata.size();
    if (length > 65533) ERREXIT(cinfo, JERR_BAD_LENGTH);
    jpeg_write_m_header(cinfo, JPEG_APP0 + 1, static_cast<unsigned int>(length));
    for (size_t i = 0; i < prefix; ++i) {
      jpeg_write_m_byte(cinfo, static_cast<unsigned char>(kXmpNamespace[i]));
    }
    for (char ch : s->xmp_metadata) {
      jpeg_write_m_byte(cinfo, static_cast<unsigned char>(ch));
    }
  }
  const size_t stride = static_cast<size_t>(in->width) * in->components;
  while (cinfo->next_scanline < cinfo->image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(in->pixels + cinfo->next_scanline * stride);
    jpeg_write_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_compress(cinfo);
  return true;
}

// Encodes a [height, width, 1 or 3] image (checked by the caller).
absl::Status EncodeJpegImage(const Tensor& image, const JpegEncodeSettings& s,
                             const std::string& node, std::string* out) {
  const TensorShape& shape = image.shape();
  JpegInput in{static_cast<const unsigned char*>(image.raw_data()),
               static_cast<int>(shape.dim_size(0)),
               static_cast<int>(shape.dim_size(1)),
               static_cast<int>(shape.dim_size(2))};
  jpeg_compress_struct cinfo;
  std::memset(&cinfo, 0, sizeof(cinfo));
  JpegErrors errors;
  cinfo.err = InitJpegErrors(&errors);
  JpegSink sink{};
  const bool ok = CompressJpeg(&cinfo, &errors, &sink, &in, &s);
  if (ok) {
    out->assign(reinterpret_cast<const char*>(sink.buffer),
                sink.capacity - sink.pub.free_in_buffer);
  }
  jpeg_destroy_compress(&cinfo);
  std::free(sink.buffer);
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "JPEG encoding failed: ", errors.message, " (node '", node, "', image ",
      shape.DebugString(), ")"));
}

absl::Status CheckQuality(int64_t quality) {
  if (quality < 0 || quality > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat("quality must be in [0,100], got ", quality));
  }
  return absl::OkStatus();
}

// `format`'s channel count (0: 1 or 3) against the image's shape.
absl::Status CheckJpegImage(const Tensor& image, const std::string& format) {
  const TensorShape& shape = image.shape();
  if (shape.dims() != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "image must be 3-dimensional", shape.DebugString()));
  }
  if (image.NumElements() >= std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Cannot encode images with >= max int32 elements: ",
        shape.DebugString()));
  }
  const int64_t channels = shape.dim_size(2);
  if (format == "grayscale" && channels != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "format grayscale expects 1 channel, got ", shape.DebugString()));
  }
  if (format == "rgb" && channels != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "format rgb expects 3 channels, got ", shape.DebugString()));
  }
  if (channels != 1 && channels != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "image must have 1 or 3 channels, got ", shape.DebugString()));
  }
  return absl::OkStatus();
}

class EncodeJpegOp : public OpKernel {
 public:
  explicit EncodeJpegOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(Init(c));
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& image = c->input(0);
    OP_REQUIRES_OK(c, CheckJpegImage(image, format_));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({}), &out));
    OP_REQUIRES_OK(c, EncodeJpegImage(image, settings_, name(),
                                      &out->data<std::string>()[0]));
  }

 private:
  absl::Status Init(OpKernelConstruction* c) {
    int64_t quality = 95, x = 300, y = 300;
    std::string unit;
    WEFT_RETURN_IF_ERROR(c->GetAttr("format", &format_));
    WEFT_RETURN_IF_ERROR(c->GetAttr("quality", &quality));
    WEFT_RETURN_IF_ERROR(CheckQuality(quality));
    WEFT_RETURN_IF_ERROR(c->GetAttr("progressive", &settings_.progressive));
    WEFT_RETURN_IF_ERROR(c->GetAttr("optimize_size", &settings_.optimize_size));
    WEFT_RETURN_IF_ERROR(
        c->GetAttr("chroma_downsampling", &settings_.chroma_downsampling));
    WEFT_RETURN_IF_ERROR(c->GetAttr("density_unit", &unit));
    if (unit != "in" && unit != "cm") {
      return absl::InvalidArgumentError(absl::StrCat(
          "density_unit must be 'in' or 'cm', got '", unit, "'"));
    }
    WEFT_RETURN_IF_ERROR(c->GetAttr("x_density", &x));
    WEFT_RETURN_IF_ERROR(c->GetAttr("y_density", &y));
    for (int64_t d : {x, y}) {
      if (d < 0 || d > 65535) {
        return absl::InvalidArgumentError(absl::StrCat(
            "x_density and y_density must be in [0, 65535], got ", d));
      }
    }
    WEFT_RETURN_IF_ERROR(c->GetAttr("xmp_metadata", &settings_.xmp_metadata));
    settings_.quality = static_cast<int>(quality);
    settings_.density_unit = unit == "in" ? 1 : 2;
    settings_.x_density = static_cast<int>(x);
    settings_.y_density = static_cast<int>(y);
    return absl::OkStatus();
  }

  std::string format_;
  JpegEncodeSettings settings_;
};

class EncodeJpegVariableQualityOp : public OpKernel {
 public:
  explicit EncodeJpegVariableQualityOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(true);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& image = c->input(0);
    OP_REQUIRES_OK(c, CheckJpegImage(image, ""));
    const Tensor& quality = c->input(1);
    OP_REQUIRES(c, quality.shape().dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "quality must be scalar: ", quality.shape().DebugString())));
    const int32_t q = quality.data<int32_t>()[0];
    OP_REQUIRES_OK(c, CheckQuality(q));
    JpegEncodeSettings settings;
    settings.quality = q;
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape({}), &out));
    OP_REQUIRES_OK(c, EncodeJpegImage(image, settings, name(),
                                      &out->data<std::string>()[0]));
  }
};

}  // namespace

void RegisterJpegEncodeKernels(KernelRegistry* r) {
  r->Register(KernelDef("EncodeJpeg", kDeviceTypeCpu), MakeKernel<EncodeJpegOp>);
  r->Register(KernelDef("EncodeJpegVariableQuality", kDeviceTypeCpu),
              MakeKernel<EncodeJpegVariableQualityOp>);
}

}  // namespace weft
