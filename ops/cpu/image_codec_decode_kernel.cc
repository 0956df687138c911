// The decode ops' one kernel: DecodePng, DecodeJpeg, DecodeAndCropJpeg,
// DecodeBmp, DecodeGif and DecodeImage all sniff the format by its magic
// bytes and hand the data to that format's decoder (image_codec_*.cc), as
// TensorFlow's do: DecodeJpeg reads a PNG and DecodePng a JPEG, while
// DecodeBmp and DecodeAndCropJpeg refuse other formats. The op decides the
// attrs (JPEG flags for the JPEG ops, dtype for DecodePng and DecodeImage,
// channels 3 and a frame dimension for DecodeGif).
#include <cctype>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/cpu/image_codec.h"
#include "ops/framework/kernel_registry.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

class DecodeImageOp : public OpKernel {
 public:
  explicit DecodeImageOp(OpKernelConstruction* c) : OpKernel(c) {
    req_.op = type_string();
    req_.node = name();
    c->SetStatus(Init(c));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& contents = c->input(0);
    OP_REQUIRES(c, contents.shape().dims() == 0,
                absl::InvalidArgumentError(
                    absl::StrCat("`contents` must be scalar but got shape",
                                 contents.shape().DebugString())));
    const std::string& data = contents.data<std::string>()[0];
    OP_REQUIRES(c, !data.empty(), absl::InvalidArgumentError("Input is empty."));
    OP_REQUIRES(c, data.size() <= static_cast<size_t>(std::numeric_limits<int>::max()),
                absl::InvalidArgumentError(absl::StrCat(
                    "Input contents are too large for int: ", data.size())));
    const ImageFormat format = SniffImageFormat(data);
    DecodeRequest req = req_;
    if (req_.op == "DecodeAndCropJpeg") {
      OP_REQUIRES(c, format == ImageFormat::kJpeg,
                  absl::InvalidArgumentError(absl::StrCat(
                      "DecodeAndCropJpeg operation can run on JPEG only, but "
                      "detected ", ImageFormatName(format), ".")));
      OP_REQUIRES_OK(c, ReadCropWindow(c->input(1), &req.jpeg));
    }
    if (req_.op == "DecodeBmp" && format != ImageFormat::kBmp &&
        format != ImageFormat::kUnknown) {
      const char* name = ImageFormatName(format);
      std::string lower = name;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(ch));
      OP_REQUIRES(c, false, absl::InvalidArgumentError(absl::StrCat(
                                "Trying to decode ", name,
                                " format using DecodeBmp op. Use `decode_",
                                lower, "` or `decode_image` instead.")));
    }
    switch (format) {
      case ImageFormat::kPng:
        DecodePngImage(c, data, req);
        return;
      case ImageFormat::kJpeg:
        OP_REQUIRES(c, req.channels != 4,
                    absl::InvalidArgumentError("JPEG does not support 4 channels"));
        DecodeJpegImage(c, data, req);
        return;
      case ImageFormat::kBmp:
        DecodeBmpImage(c, data, req);
        return;
      case ImageFormat::kGif:
        // DecodeImage gives a GIF a frame dimension only with
        // expand_animations.
        if (req_.op == "DecodeImage") req.frame_dim = expand_animations_;
        DecodeGifImage(c, data, req);
        return;
      case ImageFormat::kWebp:
      case ImageFormat::kJpegXl:
        OP_REQUIRES(c, false, absl::UnimplementedError(absl::StrCat(
                                  ImageFormatName(format),
                                  " images are not supported by Weft (",
                                  req_.op, " node '", name(), "')")));
        return;
      case ImageFormat::kUnknown:
        break;
    }
    OP_REQUIRES(c, false, absl::InvalidArgumentError(
                              "Unknown image file format. One of JPEG, PNG, "
                              "GIF, BMP required."));
  }

 private:
  absl::Status Init(OpKernelConstruction* c) {
    const std::string& op = req_.op;
    if (op == "DecodeJpeg" || op == "DecodeAndCropJpeg") {
      JpegDecodeFlags& f = req_.jpeg;
      int64_t ratio = 1;
      WEFT_RETURN_IF_ERROR(c->GetAttr("ratio", &ratio));
      if (ratio != 1 && ratio != 2 && ratio != 4 && ratio != 8) {
        return absl::InvalidArgumentError(
            absl::StrCat("ratio must be 1, 2, 4, or 8, got ", ratio));
      }
      f.ratio = static_cast<int>(ratio);
      WEFT_RETURN_IF_ERROR(c->GetAttr("fancy_upscaling", &f.fancy_upscaling));
      WEFT_RETURN_IF_ERROR(
          c->GetAttr("try_recover_truncated", &f.try_recover_truncated));
      WEFT_RETURN_IF_ERROR(
          c->GetAttr("acceptable_fraction", &f.acceptable_fraction));
      std::string dct;
      WEFT_RETURN_IF_ERROR(c->GetAttr("dct_method", &dct));
      if (!dct.empty() && dct != "INTEGER_FAST" && dct != "INTEGER_ACCURATE") {
        return absl::InvalidArgumentError(
            "dct_method must be one of {'', 'INTEGER_FAST', "
            "'INTEGER_ACCURATE'}");
      }
      f.fast_dct = dct != "INTEGER_ACCURATE";
    }
    if (op == "DecodePng" || op == "DecodeImage") {
      WEFT_RETURN_IF_ERROR(c->GetAttr("dtype", &req_.dtype));
    }
    if (op == "DecodeGif") {
      req_.channels = 3;
      req_.frame_dim = true;
    } else {
      int64_t channels = 0;
      WEFT_RETURN_IF_ERROR(c->GetAttr("channels", &channels));
      if (channels != 0 && channels != 1 && channels != 3 && channels != 4) {
        return absl::InvalidArgumentError(absl::StrCat(
            "`channels` must be 0, 1, 3 or 4 but got ", channels));
      }
      req_.channels = static_cast<int>(channels);
    }
    if (op == "DecodeImage") {
      WEFT_RETURN_IF_ERROR(c->GetAttr("expand_animations", &expand_animations_));
    }
    return absl::OkStatus();
  }

  static absl::Status ReadCropWindow(const Tensor& window, JpegDecodeFlags* f) {
    if (window.shape().dims() != 1 || window.NumElements() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          "crop_size must have four elements ", window.shape().DebugString()));
    }
    const int32_t* w = window.data<int32_t>();
    f->crop = true;
    f->crop_y = w[0];
    f->crop_x = w[1];
    f->crop_height = w[2];
    f->crop_width = w[3];
    return absl::OkStatus();
  }

  DecodeRequest req_;
  bool expand_animations_ = true;
};

}  // namespace

void RegisterImageDecodeKernels(KernelRegistry* r) {
  for (const char* op : {"DecodePng", "DecodeJpeg", "DecodeAndCropJpeg",
                         "DecodeBmp", "DecodeGif", "DecodeImage"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<DecodeImageOp>);
  }
}

}  // namespace weft
