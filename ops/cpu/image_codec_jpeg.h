// libjpeg-turbo error handling shared by the JPEG decoder and encoder:
// errors longjmp back to the setjmp of the function that called the
// library (with the message saved), and nothing is printed.
#ifndef WEFT_OPS_CPU_IMAGE_CODEC_JPEG_H_
#define WEFT_OPS_CPU_IMAGE_CODEC_JPEG_H_

#include <csetjmp>
#include <cstddef>
#include <cstdio>

#include <jpeglib.h>
#include <jerror.h>

namespace weft {

struct JpegErrors {
  jpeg_error_mgr pub;  // first, so a j_common_ptr's err casts to this
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

inline void JpegErrorExit(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

inline void JpegNoOutput(j_common_ptr) {}

// Sets up `errors` for a compress or decompress object; returns its pub.
inline jpeg_error_mgr* InitJpegErrors(JpegErrors* errors) {
  jpeg_error_mgr* pub = jpeg_std_error(&errors->pub);
  pub->error_exit = JpegErrorExit;
  pub->output_message = JpegNoOutput;
  std::snprintf(errors->message, sizeof(errors->message), "unknown error");
  return pub;
}

// The most memory libjpeg may take for one image (its coefficient buffers
// for progressive data, say): beyond it decoding fails instead of
// allocating.
inline constexpr long kJpegMaxMemory = 1L << 31;

}  // namespace weft

#endif  // WEFT_OPS_CPU_IMAGE_CODEC_JPEG_H_
