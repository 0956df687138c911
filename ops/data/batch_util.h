// Stacking elements into a batch, shared by the batching datasets.
#ifndef WEFT_OPS_DATA_BATCH_UTIL_H_
#define WEFT_OPS_DATA_BATCH_UTIL_H_

#include <vector>

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "ops/data/dataset.h"
#include "runtime/core/tensor.h"

namespace weft {
namespace data {

// out[i] = the i-th components of `elements` stacked along a new dimension
// 0. INVALID_ARGUMENT in TensorFlow's words when two elements' components
// differ in shape ("Cannot batch tensors with different shapes in component
// 0. ..."); RESOURCE_EXHAUSTED when the batch cannot be allocated.
absl::Status BatchElements(const std::vector<std::vector<Tensor>>& elements,
                           std::vector<Tensor>* out);

// A dataset of batches: batch_size consecutive input elements (fewer for
// the last batch, dropped with drop_remainder) made into one element by
// Combine. An input error fails the batch at once or, with finish_on_error
// (the fused map-and-batch), after the rest of the batch was read, so the
// next batch starts where TensorFlow's would.
class BatchingDataset : public DatasetBase {
 public:
  BatchingDataset(std::string op, DataTypeVector dtypes, std::vector<PartialShape> shapes,
                  DatasetPtr input, int64_t batch_size, bool drop_remainder,
                  bool finish_on_error)
      : DatasetBase(std::move(op), std::move(dtypes), std::move(shapes)),
        input_(std::move(input)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder),
        finish_on_error_(finish_on_error) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override;
  int64_t Cardinality() const override;

 protected:
  // The batch made of `elements` (1 to batch_size of them).
  virtual absl::Status Combine(const std::vector<std::vector<Tensor>>& elements,
                               std::vector<Tensor>* out) const = 0;

 private:
  class Iterator;

  const DatasetPtr input_;
  const int64_t batch_size_;
  const bool drop_remainder_;
  const bool finish_on_error_;
};

}  // namespace data
}  // namespace weft

#endif  // WEFT_OPS_DATA_BATCH_UTIL_H_
