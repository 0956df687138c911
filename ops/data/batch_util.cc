#include "ops/data/batch_util.h"

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "runtime/core/allocator.h"
#include "runtime/core/status.h"

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

class BatchingDataset::Iterator : public IteratorBase {
 public:
  Iterator(std::shared_ptr<const BatchingDataset> ds, std::unique_ptr<IteratorBase> input)
      : ds_(std::move(ds)), input_(std::move(input)) {}

  absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                       bool* end_of_sequence) override {
    out->clear();
    std::vector<std::vector<Tensor>> elements;
    absl::Status first_error;
    int64_t read = 0;
    bool end = input_ == nullptr;
    while (!end && read < ds_->batch_size_) {
      std::vector<Tensor> element;
      absl::Status s = input_->GetNext(ctx, &element, &end);
      if (s.ok() && end) break;
      ++read;
      if (!s.ok()) {
        if (!ds_->finish_on_error_) return s;
        if (first_error.ok()) first_error = s;
        continue;
      }
      elements.push_back(std::move(element));
    }
    if (end) input_.reset();
    if (!first_error.ok()) return first_error;
    *end_of_sequence =
        elements.empty() ||
        (ds_->drop_remainder_ && static_cast<int64_t>(elements.size()) < ds_->batch_size_);
    if (*end_of_sequence) return absl::OkStatus();
    return WithContext(ds_->Combine(elements, out), ds_->op());
  }

 private:
  const std::shared_ptr<const BatchingDataset> ds_;
  std::unique_ptr<IteratorBase> input_;  // null once exhausted
};

absl::StatusOr<std::unique_ptr<IteratorBase>> BatchingDataset::MakeIterator() const {
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
  return std::unique_ptr<IteratorBase>(
      new Iterator(self<BatchingDataset>(), std::move(input)));
}

int64_t BatchingDataset::Cardinality() const {
  const int64_t n = input_->Cardinality();
  if (n < 0) return n;
  return n / batch_size_ + (!drop_remainder_ && n % batch_size_ != 0 ? 1 : 0);
}

}  // namespace data
}  // namespace weft
