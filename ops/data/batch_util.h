// Stacking elements into a batch, shared by the batching datasets.
#ifndef WEFT_OPS_DATA_BATCH_UTIL_H_
#define WEFT_OPS_DATA_BATCH_UTIL_H_

#include <vector>

#include "absl/status/status.h"
#include "runtime/core/tensor.h"

namespace weft {
namespace data {

// out[i] = the i-th components of `elements` stacked along a new dimension
// 0. INVALID_ARGUMENT in TensorFlow's words when two elements' components
// differ in shape ("Cannot batch tensors with different shapes in component
// 0. ..."); RESOURCE_EXHAUSTED when the batch cannot be allocated.
absl::Status BatchElements(const std::vector<std::vector<Tensor>>& elements,
                           std::vector<Tensor>* out);

}  // namespace data
}  // namespace weft

#endif  // WEFT_OPS_DATA_BATCH_UTIL_H_
