#include "ops/data/batch_util.h"

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "runtime/core/allocator.h"

namespace weft {
namespace data {

absl::Status BatchElements(const std::vector<std::vector<Tensor>>& elements,
                           std::vector<Tensor>* out) {
  out->clear();
  if (elements.empty()) return absl::OkStatus();
  const size_t n = elements.size();
  for (size_t k = 0; k < elements[0].size(); ++k) {
    const Tensor& first = elements[0][k];
    for (size_t e = 1; e < n; ++e) {
      if (elements[e][k].shape() != first.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Cannot batch tensors with different shapes in component ", k,
            ". First element had shape ", first.shape().DebugString(),
            " and element ", e, " had shape ",
            elements[e][k].shape().DebugString(), "."));
      }
    }
    TensorShape shape = first.shape();
    shape.InsertDim(0, static_cast<int64_t>(n));
    absl::StatusOr<Tensor> batch = Tensor::Allocate(CpuAllocator(), first.dtype(), shape);
    if (!batch.ok()) return batch.status();
    const int64_t row = first.NumElements();
    for (size_t e = 0; e < n; ++e) {
      CopyElements(elements[e][k], 0, *batch, static_cast<int64_t>(e) * row, row);
    }
    out->push_back(*std::move(batch));
  }
  return absl::OkStatus();
}

}  // namespace data
}  // namespace weft
