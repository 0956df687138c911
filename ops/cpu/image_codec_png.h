// libpng error handling shared by the PNG decoder and encoder: an error
// saves its message in the PngErrorText given as libpng's error pointer
// and longjmps back to the setjmp of the function that called libpng;
// warnings are dropped.
#ifndef WEFT_OPS_CPU_IMAGE_CODEC_PNG_H_
#define WEFT_OPS_CPU_IMAGE_CODEC_PNG_H_

#include <png.h>

#include <cstdio>

namespace weft {

struct PngErrorText {
  char text[160] = "unknown error";
};

inline void PngSaveErrorAndJump(png_structp png, png_const_charp msg) {
  auto* error = static_cast<PngErrorText*>(png_get_error_ptr(png));
  std::snprintf(error->text, sizeof(error->text), "%s", msg);
  png_longjmp(png, 1);
}

inline void PngDropWarning(png_structp, png_const_charp) {}

}  // namespace weft

#endif  // WEFT_OPS_CPU_IMAGE_CODEC_PNG_H_
