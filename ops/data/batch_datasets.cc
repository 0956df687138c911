// BatchDatasetV2: consecutive elements stacked along a new dimension 0
// (ops/data/batch_util.h), batch_size at a time; the last, short batch is
// kept unless drop_remainder.
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/data/batch_util.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {
namespace {

class BatchDataset : public DatasetBase {
 public:
  BatchDataset(DataTypeVector dtypes, std::vector<PartialShape> shapes,
               DatasetPtr input, int64_t batch_size, bool drop_remainder)
      : DatasetBase("BatchDatasetV2", std::move(dtypes), std::move(shapes)),
        input_(std::move(input)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(
        new Iterator(self<BatchDataset>(), std::move(input)));
  }
  int64_t Cardinality() const override {
    const int64_t n = input_->Cardinality();
    if (n < 0) return n;
    return n / batch_size_ + (!drop_remainder_ && n % batch_size_ != 0 ? 1 : 0);
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const BatchDataset> ds, std::unique_ptr<IteratorBase> input)
        : ds_(std::move(ds)), input_(std::move(input)) {}

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      std::vector<std::vector<Tensor>> elements;
      bool end = input_ == nullptr;
      while (!end && static_cast<int64_t>(elements.size()) < ds_->batch_size_) {
        std::vector<Tensor> element;
        WEFT_RETURN_IF_ERROR(input_->GetNext(ctx, &element, &end));
        if (!end) elements.push_back(std::move(element));
      }
      if (end) input_.reset();
      *end_of_sequence =
          elements.empty() ||
          (ds_->drop_remainder_ &&
           static_cast<int64_t>(elements.size()) < ds_->batch_size_);
      if (*end_of_sequence) return absl::OkStatus();
      return WithContext(BatchElements(elements, out), "BatchDatasetV2");
    }

   private:
    const std::shared_ptr<const BatchDataset> ds_;
    std::unique_ptr<IteratorBase> input_;  // null once exhausted
  };

  const DatasetPtr input_;
  const int64_t batch_size_;
  const bool drop_remainder_;
};

class BatchDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* c) override {
    WEFT_ASSIGN_OR_RETURN(DatasetPtr input, DatasetFromInput(c, 0));
    WEFT_ASSIGN_OR_RETURN(int64_t batch_size, ScalarInt64Input(c, 1, "batch_size"));
    WEFT_ASSIGN_OR_RETURN(bool drop, ScalarBoolInput(c, 2, "drop_remainder"));
    if (batch_size <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(KernelLabel(c), ": Batch size must be greater than zero."));
    }
    return DatasetPtr(std::make_shared<BatchDataset>(
        output_dtypes(), output_shapes(), std::move(input), batch_size, drop));
  }
};

}  // namespace

void RegisterBatchDatasetKernels(KernelRegistry* r) {
  r->Register(KernelDef("BatchDatasetV2", kDeviceTypeCpu), MakeKernel<BatchDatasetOp>);
}

}  // namespace data
}  // namespace weft
