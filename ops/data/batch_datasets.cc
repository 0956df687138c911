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

class BatchDataset : public BatchingDataset {
 public:
  BatchDataset(DataTypeVector dtypes, std::vector<PartialShape> shapes,
               DatasetPtr input, int64_t batch_size, bool drop_remainder)
      : BatchingDataset("BatchDatasetV2", std::move(dtypes), std::move(shapes),
                        std::move(input), batch_size, drop_remainder,
                        /*finish_on_error=*/false) {}

 protected:
  absl::Status Combine(const std::vector<std::vector<Tensor>>& elements,
                       std::vector<Tensor>* out) const override {
    return BatchElements(elements, out);
  }
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
