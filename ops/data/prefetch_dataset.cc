// PrefetchDataset: the input's elements, read ahead by a producer thread of
// each iterator's own (ops/data/ordered_producer.h) into a buffer of
// buffer_size elements, so the input's work overlaps the reader's.
//   - buffer_size -1 (AUTOTUNE) is a fixed 8 elements here (TensorFlow tunes
//     it at run time; the elements are the same), and any size is capped at
//     kMaxBuffer elements so a hostile size cannot exhaust memory;
//   - buffer_size 0 reads synchronously, without a thread;
//   - errors and the end of the input arrive in order; a GetNext waiting for
//     the producer ends CANCELLED with its step; destroying the iterator
//     stops and joins the thread (cancelling what it waits on).
// The slack_period, legacy_autotune and buffer_size_min attrs tune
// TensorFlow's autotuner and change no element.
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "ops/data/ordered_producer.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {
namespace {

constexpr int64_t kAutotune = -1;
constexpr int64_t kAutotuneBuffer = 8;
constexpr int64_t kMaxBuffer = 1024;

class PrefetchDataset : public DatasetBase {
 public:
  PrefetchDataset(DatasetPtr input, int64_t buffer_size)
      : DatasetBase("PrefetchDataset", input->output_dtypes(), input->output_shapes()),
        input_(std::move(input)),
        buffer_size_(buffer_size) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    if (buffer_size_ == 0) return input;
    return std::unique_ptr<IteratorBase>(new Iterator(std::move(input), buffer_size_));
  }
  int64_t Cardinality() const override { return input_->Cardinality(); }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(std::unique_ptr<IteratorBase> input, int64_t buffer_size)
        : input_(std::move(input)),
          producer_(1, buffer_size,
                    [in = input_.get()](IteratorContext* ctx, std::vector<Tensor>* out,
                                        bool* end) { return in->GetNext(ctx, out, end); },
                    nullptr) {}

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      return producer_.GetNext(ctx, out, end_of_sequence);
    }

   private:
    // Declared first: the producer's threads are joined before it goes.
    const std::unique_ptr<IteratorBase> input_;
    OrderedProducer producer_;
  };

  const DatasetPtr input_;
  const int64_t buffer_size_;
};

class PrefetchDatasetOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<DatasetPtr> input = DatasetFromInput(c, 0);
    OP_REQUIRES_OK(c, input.status());
    absl::StatusOr<int64_t> size = ScalarInt64Input(c, 1, "buffer_size");
    OP_REQUIRES_OK(c, size.status());
    OP_REQUIRES(c, *size >= 0 || *size == kAutotune,
                absl::InvalidArgumentError(absl::StrCat(
                    "buffer_size must be >= 0 or set buffer_size to be ", kAutotune,
                    " for auto-tuning (", KernelLabel(c), " got ", *size, ")")));
    const int64_t buffer =
        *size == kAutotune ? kAutotuneBuffer : std::min(*size, kMaxBuffer);
    c->set_output(0, DatasetToTensor(std::make_shared<PrefetchDataset>(
                         *std::move(input), buffer)));
  }
};

}  // namespace

void RegisterPrefetchDatasetKernels(KernelRegistry* r) {
  r->Register(KernelDef("PrefetchDataset", kDeviceTypeCpu),
              MakeKernel<PrefetchDatasetOp>);
}

}  // namespace data
}  // namespace weft
