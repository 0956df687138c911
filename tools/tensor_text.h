// Tensors as a user types and reads them on the command line.
//
// Feed values (`weft run --feed x=VALUE`):
//   3.5                       a scalar
//   [[1, 2], [3, 4]]          nested JSON lists (rectangular)
//   {"dtype": "int32", "shape": [2], "values": [1, 2]}
//                             explicit; a single value fills the shape
//   @data.npy                 a NumPy file
// Without an explicit dtype the value takes `hint` (the placeholder's dtype)
// when known, else float32 for numbers with a fraction, int32 for integers,
// bool for true/false, string for strings.
// Lists may nest at most kMaxTensorRank deep (checked on the text before it
// is parsed); a .npy file is read with the bound of ReadFileToString.
#ifndef WEFT_TOOLS_TENSOR_TEXT_H_
#define WEFT_TOOLS_TENSOR_TEXT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/core/tensor.h"
#include "tools/input_limits.h"

namespace weft {

absl::StatusOr<Tensor> ParseFeedValue(
    const std::string& text, DataType hint,
    int64_t max_file_bytes = kDefaultMaxInputBytes);

// {"dtype": "float32", "shape": [2], "values": [1.5, 2]}; floats in their
// shortest round-trip form, NaN/Infinity as the strings "nan"/"inf"/"-inf".
std::string TensorToJson(const Tensor& t);

// NumPy-style nested brackets; elides the middle of long dimensions.
std::string TensorToText(const Tensor& t);

}  // namespace weft

#endif  // WEFT_TOOLS_TENSOR_TEXT_H_
