// How TensorFlow names one element of a tensor in its error messages, so
// Weft's errors read the same (and TensorFlow's tests that match them pass).
//
//   IndexName(TensorShape({2, 3}), 4) == "[1,1]"
//   IndexName(TensorShape({5}), 4)    == "[4]"
//   IndexName(TensorShape(), 0)       == ""
#ifndef WEFT_OPS_CPU_INDEX_NAME_H_
#define WEFT_OPS_CPU_INDEX_NAME_H_

#include <cstdint>
#include <string>

#include "runtime/core/tensor_shape.h"

namespace weft {

// Element `flat` (row-major, < shape.num_elements()) of a tensor shaped
// `shape`: its coordinates in brackets, comma-separated; "" for a scalar.
std::string IndexName(const TensorShape& shape, int64_t flat);

}  // namespace weft

#endif  // WEFT_OPS_CPU_INDEX_NAME_H_
