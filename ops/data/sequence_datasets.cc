// Datasets that reorder or cut their inputs' sequences without touching the
// elements:
//   - RepeatDataset: count passes (-1: forever; a pass that yields nothing
//     ends it, as TensorFlow does, instead of spinning).
//   - TakeDataset, SkipDataset: the first count elements, or all but them
//     (-1: all).
//   - ConcatenateDataset: one dataset, then the other.
//   - ZipDataset: the i-th elements of every input, flattened into one;
//     it ends with the shortest input.
//   - OptionsDataset, ModelDataset, OptimizeDatasetV2, FinalizeDataset: the
//     input itself. In TensorFlow they carry options, autotuning and static
//     rewrites, none of which changes an element; here the pipeline runs as
//     written.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {
namespace {

enum class SeqKind { kRepeat, kTake, kSkip, kConcatenate, kZip };

class SequenceDataset : public DatasetBase {
 public:
  SequenceDataset(std::string op, DataTypeVector dtypes,
                  std::vector<PartialShape> shapes, SeqKind kind,
                  std::vector<DatasetPtr> inputs, int64_t count)
      : DatasetBase(std::move(op), std::move(dtypes), std::move(shapes)),
        kind_(kind),
        inputs_(std::move(inputs)),
        count_(count) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    auto it = std::make_unique<Iterator>(self<SequenceDataset>());
    const size_t first = kind_ == SeqKind::kZip ? inputs_.size() : 1;
    for (size_t i = 0; i < first; ++i) {
      if (kind_ == SeqKind::kRepeat && count_ == 0) break;
      WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> in, inputs_[i]->MakeIterator());
      it->inputs_.push_back(std::move(in));
    }
    return std::unique_ptr<IteratorBase>(std::move(it));
  }

  int64_t Cardinality() const override {
    const int64_t n = inputs_[0]->Cardinality();
    switch (kind_) {
      case SeqKind::kRepeat:
        if (count_ == 0 || n == 0) return 0;
        if (count_ < 0 || n == kInfiniteCardinality) return kInfiniteCardinality;
        return n < 0 ? n : (n > INT64_MAX / count_ ? kUnknownCardinality : n * count_);
      case SeqKind::kTake:
        if (count_ < 0) return n;
        return n == kUnknownCardinality ? n : (n == kInfiniteCardinality ? count_ : std::min(n, count_));
      case SeqKind::kSkip:
        if (n < 0) return n;
        return count_ < 0 ? 0 : std::max<int64_t>(0, n - count_);
      case SeqKind::kConcatenate: {
        const int64_t m = inputs_[1]->Cardinality();
        if (n == kInfiniteCardinality || m == kInfiniteCardinality) return kInfiniteCardinality;
        return n < 0 || m < 0 ? kUnknownCardinality : n + m;
      }
      case SeqKind::kZip: {
        int64_t shortest = kInfiniteCardinality;
        for (const DatasetPtr& in : inputs_) {
          const int64_t c = in->Cardinality();
          if (c == kUnknownCardinality) return c;
          if (c >= 0) shortest = shortest < 0 ? c : std::min(shortest, c);
        }
        return shortest;
      }
    }
    return kUnknownCardinality;
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const SequenceDataset> ds) : ds_(std::move(ds)) {}

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      *end_of_sequence = true;
      if (inputs_.empty()) return absl::OkStatus();
      switch (ds_->kind_) {
        case SeqKind::kRepeat: return Repeat(ctx, out, end_of_sequence);
        case SeqKind::kTake: return Take(ctx, out, end_of_sequence);
        case SeqKind::kSkip: return Skip(ctx, out, end_of_sequence);
        case SeqKind::kConcatenate: return Concatenate(ctx, out, end_of_sequence);
        case SeqKind::kZip: return Zip(ctx, out, end_of_sequence);
      }
      return absl::OkStatus();
    }

   private:
    friend class SequenceDataset;

    // Reads the current input; at its end (which drops it) *end is true.
    absl::Status Read(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) {
      WEFT_RETURN_IF_ERROR(inputs_[0]->GetNext(ctx, out, end));
      if (*end) inputs_.clear();
      return absl::OkStatus();
    }

    absl::Status Repeat(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) {
      while (true) {
        WEFT_RETURN_IF_ERROR(Read(ctx, out, end));
        if (!*end) {
          pass_had_elements_ = true;
          return absl::OkStatus();
        }
        ++passes_;
        const bool more = ds_->count_ < 0 ? pass_had_elements_ : passes_ < ds_->count_;
        if (!more) return absl::OkStatus();
        pass_had_elements_ = false;
        WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> in,
                              ds_->inputs_[0]->MakeIterator());
        inputs_.push_back(std::move(in));
      }
    }

    absl::Status Take(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) {
      if (ds_->count_ >= 0 && taken_ >= ds_->count_) {
        inputs_.clear();
        return absl::OkStatus();
      }
      WEFT_RETURN_IF_ERROR(Read(ctx, out, end));
      if (!*end) ++taken_;
      return absl::OkStatus();
    }

    absl::Status Skip(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) {
      while (ds_->count_ < 0 || taken_ < ds_->count_) {
        WEFT_RETURN_IF_ERROR(Read(ctx, out, end));
        if (*end) return absl::OkStatus();
        ++taken_;
      }
      return Read(ctx, out, end);
    }

    absl::Status Concatenate(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) {
      WEFT_RETURN_IF_ERROR(Read(ctx, out, end));
      if (!*end || second_) return absl::OkStatus();
      second_ = true;
      WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> in,
                            ds_->inputs_[1]->MakeIterator());
      inputs_.push_back(std::move(in));
      return Read(ctx, out, end);
    }

    absl::Status Zip(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) {
      for (std::unique_ptr<IteratorBase>& in : inputs_) {
        std::vector<Tensor> part;
        WEFT_RETURN_IF_ERROR(in->GetNext(ctx, &part, end));
        if (*end) {
          inputs_.clear();
          out->clear();
          return absl::OkStatus();
        }
        for (Tensor& t : part) out->push_back(std::move(t));
      }
      return absl::OkStatus();
    }

    const std::shared_ptr<const SequenceDataset> ds_;
    // The inputs being read: all of them for Zip, else the current one;
    // empty once the sequence has ended.
    std::vector<std::unique_ptr<IteratorBase>> inputs_;
    int64_t passes_ = 0;       // Repeat: passes finished
    bool pass_had_elements_ = false;
    int64_t taken_ = 0;        // Take, Skip: elements read
    bool second_ = false;      // Concatenate: reading the second input
  };

  const SeqKind kind_;
  const std::vector<DatasetPtr> inputs_;
  const int64_t count_;
};

class SequenceDatasetOp : public DatasetOpKernel {
 public:
  SequenceDatasetOp(OpKernelConstruction* c, SeqKind kind)
      : DatasetOpKernel(c), kind_(kind) {}

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* c) override {
    std::vector<DatasetPtr> inputs;
    int64_t count = 0;
    const bool counted = kind_ == SeqKind::kRepeat || kind_ == SeqKind::kTake ||
                         kind_ == SeqKind::kSkip;
    const int n = counted ? 1 : c->num_inputs();
    for (int i = 0; i < n; ++i) {
      WEFT_ASSIGN_OR_RETURN(DatasetPtr in, DatasetFromInput(c, i));
      inputs.push_back(std::move(in));
    }
    if (counted) {
      WEFT_ASSIGN_OR_RETURN(count, ScalarInt64Input(c, 1, "count"));
      if (count < 0) count = -1;
    }
    if (kind_ == SeqKind::kConcatenate &&
        inputs[0]->output_dtypes() != inputs[1]->output_dtypes()) {
      return absl::InvalidArgumentError(absl::StrCat(
          KernelLabel(c), ": input dataset and dataset to concatenate have "
                          "different types: ",
          DataTypeVectorString(inputs[0]->output_dtypes()), " and ",
          DataTypeVectorString(inputs[1]->output_dtypes())));
    }
    return DatasetPtr(std::make_shared<SequenceDataset>(
        type_string(), output_dtypes(), output_shapes(), kind_, std::move(inputs),
        count));
  }

 private:
  const SeqKind kind_;
};

// The input dataset, unchanged.
class PassThroughDatasetOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<DatasetPtr> ds = DatasetFromInput(c, 0);
    OP_REQUIRES_OK(c, ds.status());
    c->set_output(0, c->input(0));
  }
};

}  // namespace

void RegisterSequenceDatasetKernels(KernelRegistry* r) {
  struct Kind {
    const char* op;
    SeqKind kind;
  };
  for (const Kind& k : {Kind{"RepeatDataset", SeqKind::kRepeat},
                        Kind{"TakeDataset", SeqKind::kTake},
                        Kind{"SkipDataset", SeqKind::kSkip},
                        Kind{"ConcatenateDataset", SeqKind::kConcatenate},
                        Kind{"ZipDataset", SeqKind::kZip}}) {
    const SeqKind kind = k.kind;
    r->Register(KernelDef(k.op, kDeviceTypeCpu),
                [kind](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                  return std::make_unique<SequenceDatasetOp>(c, kind);
                });
  }
  for (const char* op : {"OptionsDataset", "ModelDataset", "OptimizeDatasetV2",
                         "FinalizeDataset"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<PassThroughDatasetOp>);
  }
}

}  // namespace data
}  // namespace weft
