// Reading NumPy .npy files (format versions 1-3, little-endian, C order).
#ifndef WEFT_TOOLS_NPY_H_
#define WEFT_TOOLS_NPY_H_

#include <string>

#include "absl/status/statusor.h"
#include "runtime/core/tensor.h"

namespace weft {

// Decodes the bytes of a .npy file; `path` is used in messages.
absl::StatusOr<Tensor> ParseNpy(const std::string& bytes,
                                const std::string& path);

}  // namespace weft

#endif  // WEFT_TOOLS_NPY_H_
