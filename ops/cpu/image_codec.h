// Shared pieces of the image codec kernels (image_codec_*.cc): the format
// sniffer, what a decode kernel asks of a format's decoder, and the output
// allocation every decoder uses (8-bit decoders write straight into a uint8
// output and widen into uint16/float outputs from a scratch buffer).
//
// Each format's file owns its library (libpng, libjpeg-turbo, giflib) and
// its error handling: the libraries report errors by longjmp, so each keeps
// setjmp in a small function that holds no C++ object with a destructor,
// and frees the library state in the caller whatever happens.
#ifndef WEFT_OPS_CPU_IMAGE_CODEC_H_
#define WEFT_OPS_CPU_IMAGE_CODEC_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/tensor.h"

namespace weft {

class KernelRegistry;

enum class ImageFormat { kUnknown, kJpeg, kPng, kGif, kBmp, kWebp, kJpegXl };

// By the magic bytes at the start, as TensorFlow's DecodeImage does.
ImageFormat SniffImageFormat(absl::string_view data);
const char* ImageFormatName(ImageFormat format);

// DecodeJpeg's attrs (TensorFlow's defaults for the other decode ops).
struct JpegDecodeFlags {
  int ratio = 1;
  bool fancy_upscaling = true;
  bool try_recover_truncated = false;
  float acceptable_fraction = 1.0f;
  bool fast_dct = true;  // "" and "INTEGER_FAST"; "INTEGER_ACCURATE": false
  bool crop = false;     // DecodeAndCropJpeg: the window below
  int crop_y = 0, crop_x = 0, crop_height = 0, crop_width = 0;
};

// What a decode kernel asks of a format's decoder.
struct DecodeRequest {
  std::string op;          // the op type, for messages
  std::string node;        // the node's name, for messages
  int channels = 0;        // 0: the image's own
  DataType dtype = DT_UINT8;  // uint8, uint16 (PNG, DecodeImage) or float
  bool frame_dim = false;  // output [frames, h, w, c] (DecodeGif, animations)
  JpegDecodeFlags jpeg;
};

// INVALID_ARGUMENT "<what>: <detail> (node 'n')".
absl::Status CorruptImage(const DecodeRequest& r, absl::string_view what,
                          absl::string_view detail);

// Refuses an image of frames x height x width x channels elements of
// `bytes` bytes each that TensorFlow would refuse (a side of 2^27 or more,
// 2^29 pixels or more) or that would take more than 2^31 bytes, before
// anything is allocated. `format` names the format in the message.
absl::Status CheckImageSize(const DecodeRequest& r, const char* format,
                            int64_t frames, int64_t height, int64_t width,
                            int64_t channels, int bytes);

// Allocates output 0 for a decoded 8-bit image (with a leading frame
// dimension when r.frame_dim) and returns where to decode it: the output's
// own buffer when r.dtype is uint8, else `scratch`, which WidenDecoded then
// converts into the output as TensorFlow's DecodeImage does for JPEG, GIF
// and BMP data (uint16: x * 256; float: x / 255). PNG widens on its own
// (x * 257, libpng's expansion).
absl::Status AllocateDecoded(OpKernelContext* c, const DecodeRequest& r,
                             int64_t frames, int64_t height, int64_t width,
                             int64_t channels, Tensor* scratch, Tensor** out,
                             uint8_t** pixels);
void WidenDecoded(OpKernelContext* c, const Tensor& scratch, Tensor* out);

// The format decoders: each decodes `data` into output 0.
void DecodePngImage(OpKernelContext* c, absl::string_view data,
                    const DecodeRequest& r);
void DecodeJpegImage(OpKernelContext* c, absl::string_view data,
                     const DecodeRequest& r);
void DecodeBmpImage(OpKernelContext* c, absl::string_view data,
                    const DecodeRequest& r);
void DecodeGifImage(OpKernelContext* c, absl::string_view data,
                    const DecodeRequest& r);

// Per-file registrations, called by RegisterImageCodecKernels.
void RegisterImageDecodeKernels(KernelRegistry* r);   // image_codec_decode_kernel.cc
void RegisterPngEncodeKernel(KernelRegistry* r);      // image_codec_png_encode.cc
void RegisterJpegEncodeKernels(KernelRegistry* r);    // image_codec_jpeg_encode.cc
void RegisterJpegShapeKernel(KernelRegistry* r);      // image_codec_jpeg_kernels.cc

}  // namespace weft

#endif  // WEFT_OPS_CPU_IMAGE_CODEC_H_
