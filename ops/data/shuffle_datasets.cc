// The shuffling datasets: ShuffleDataset (V1: seeds as inputs, TensorFlow
// 1.x's graphs), ShuffleDatasetV2 (a seed generator resource), V3 (seeds
// and a resource, TensorFlow 2's traced graphs), ShuffleAndRepeatDataset(V2)
// (shuffle and repeat fused: `count` passes shuffled as one stream).
//
// TensorFlow's algorithm, reproduced element for element so that the same
// seeds give the same order:
//   - each pass (a new iterator, or the next epoch of a fused repeat) takes
//     (seed, seed2) from the dataset's SeedGenerator (seed_generator.h) and
//     seeds a Philox stream with them, read one 32-bit word at a time;
//   - before each output the buffer is filled to buffer_size elements from
//     the input (across epochs when repeating, keeping each epoch's elements
//     in a slice of their own; filling stops while more than 3 epochs are
//     buffered);
//   - the output is the element at offset (word % size) of the oldest
//     slice, whose first element then takes its place.
// The slices hold only the elements read, so a huge buffer_size costs
// nothing until elements arrive.
//
// Seed generators: V1 and ShuffleAndRepeatDataset make one per dataset
// (fixed seeds unless reshuffle_each_iteration); V2, V3 and
// ShuffleAndRepeatDatasetV2 use the generator of the resource their handle
// names, or, when it names none (DummySeedGenerator), one of their own made
// from their seed inputs (V2: unseeded, reshuffling), as TensorFlow does.
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/philox_random.h"
#include "ops/cpu/shared_resource.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "ops/data/seed_generator.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {
namespace {

// Filling stops while the buffer spans more epochs than this (TensorFlow's
// bound on the memory of a fused shuffle-and-repeat over a small dataset).
constexpr size_t kMaxEpochsInBuffer = 3;

class ShuffleDataset : public DatasetBase {
 public:
  ShuffleDataset(std::string op, DatasetPtr input, int64_t buffer_size,
                 int64_t count, SeedGeneratorPtr seeds)
      : DatasetBase(std::move(op), input->output_dtypes(), input->output_shapes()),
        input_(std::move(input)),
        buffer_size_(buffer_size),
        count_(count),
        seeds_(std::move(seeds)) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(new Iterator(self<ShuffleDataset>()));
  }
  int64_t Cardinality() const override {
    const int64_t n = input_->Cardinality();
    if (count_ == -1 || n == kInfiniteCardinality) return kInfiniteCardinality;
    if (n == kUnknownCardinality) return n;
    return n * count_;
  }

 private:
  using Element = std::vector<Tensor>;

  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const ShuffleDataset> ds) : ds_(std::move(ds)) {
      Reseed();
    }

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      WEFT_RETURN_IF_ERROR(FillBuffer(ctx));
      *end_of_sequence = num_elements_ == 0;
      if (*end_of_sequence) return absl::OkStatus();
      // Epochs fully produced give their slices up; each new epoch reseeds.
      while (slices_.front().empty()) {
        slices_.pop_front();
        Reseed();
      }
      std::deque<Element>& slice = slices_.front();
      const size_t offset = words_() % slice.size();
      *out = std::move(slice[offset]);
      if (offset != 0) slice[offset] = std::move(slice.front());
      slice.pop_front();
      --num_elements_;
      return absl::OkStatus();
    }

   private:
    void Reseed() {
      int64_t seed, seed2;
      ds_->seeds_->GenerateSeeds(&seed, &seed2);
      parent_ = philox::PhiloxRandom(static_cast<uint64_t>(seed),
                                     static_cast<uint64_t>(seed2));
      words_ = philox::SingleSampleAdapter(&parent_);
    }

    bool ShouldFill() const {
      const ShuffleDataset& ds = *ds_;
      if (input_ == nullptr && ds.count_ != -1 && epoch_ >= ds.count_) return false;
      if (slices_.size() > kMaxEpochsInBuffer && num_elements_ > 0) return false;
      return num_elements_ < ds.buffer_size_;
    }

    absl::Status FillBuffer(IteratorContext* ctx) {
      while (ShouldFill()) {
        if (input_ == nullptr) {
          WEFT_ASSIGN_OR_RETURN(input_, ds_->input_->MakeIterator());
          slices_.emplace_back();
          ++epoch_;
        }
        Element element;
        bool end = false;
        WEFT_RETURN_IF_ERROR(input_->GetNext(ctx, &element, &end));
        if (!end) {
          slices_.back().push_back(std::move(element));
          ++num_elements_;
          produced_ = true;
          continue;
        }
        input_.reset();
        // An endless repeat of an empty input ends instead of spinning.
        if (!produced_ && ds_->count_ == -1) return absl::OkStatus();
      }
      return absl::OkStatus();
    }

    const std::shared_ptr<const ShuffleDataset> ds_;
    std::unique_ptr<IteratorBase> input_;  // the current epoch's; null between
    int64_t epoch_ = 0;                    // epochs started
    int64_t num_elements_ = 0;             // in all slices
    bool produced_ = false;                // any input element yet
    std::deque<std::deque<Element>> slices_;  // buffered elements per epoch
    philox::PhiloxRandom parent_;
    philox::SingleSampleAdapter words_{&parent_};
  };

  const DatasetPtr input_;
  const int64_t buffer_size_;
  const int64_t count_;  // epochs; -1: forever
  const SeedGeneratorPtr seeds_;
};

// Which shuffle op a kernel runs: where its inputs are.
struct ShuffleInputs {
  int seed = -1;       // seed, then seed2; -1: none
  int count = -1;      // -1: none (one epoch)
  int generator = -1;  // the seed generator resource; -1: none
};

class ShuffleDatasetOp : public OpKernel {
 public:
  ShuffleDatasetOp(OpKernelConstruction* c, ShuffleInputs in) : OpKernel(c), in_(in) {
    if (c->HasAttr("reshuffle_each_iteration")) {
      c->SetStatus(c->GetAttr("reshuffle_each_iteration", &reshuffle_));
    }
  }

  void Compute(OpKernelContext* c) override {
    absl::StatusOr<DatasetPtr> ds = Make(c);
    OP_REQUIRES_OK(c, ds.status());
    c->set_output(0, DatasetToTensor(*std::move(ds)));
  }

 private:
  absl::StatusOr<DatasetPtr> Make(OpKernelContext* c) {
    WEFT_ASSIGN_OR_RETURN(DatasetPtr input, DatasetFromInput(c, 0));
    WEFT_ASSIGN_OR_RETURN(int64_t buffer_size, ScalarInt64Input(c, 1, "buffer_size"));
    if (buffer_size <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer_size must be greater than zero. (", KernelLabel(c), " got ",
          buffer_size, ")"));
    }
    int64_t seed = 0, seed2 = 0, count = 1;
    bool reshuffle = reshuffle_;
    if (in_.seed >= 0) {
      WEFT_ASSIGN_OR_RETURN(seed, ScalarInt64Input(c, in_.seed, "seed"));
      WEFT_ASSIGN_OR_RETURN(seed2, ScalarInt64Input(c, in_.seed + 1, "seed2"));
    } else {
      reshuffle = true;  // V2 without a resource: unseeded, reshuffling
    }
    if (in_.count >= 0) {
      WEFT_ASSIGN_OR_RETURN(count, ScalarInt64Input(c, in_.count, "count"));
      if (count <= 0 && count != -1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "count must be greater than zero or equal to -1. (", KernelLabel(c),
            " got ", count, ")"));
      }
    }
    SeedGeneratorPtr seeds;
    if (in_.generator >= 0) {
      WEFT_ASSIGN_OR_RETURN(ResourceHandle h,
                            HandleFromInput(c, in_.generator, "seed_generator"));
      absl::StatusOr<std::shared_ptr<SeedGeneratorResource>> r =
          c->resource_manager()->Lookup<SeedGeneratorResource>(h.container, h.name);
      if (r.ok()) seeds = (*r)->generator();
    }
    if (seeds == nullptr) seeds = std::make_shared<SeedGenerator>(seed, seed2, reshuffle);
    return DatasetPtr(std::make_shared<ShuffleDataset>(
        type_string(), std::move(input), buffer_size, count, std::move(seeds)));
  }

  const ShuffleInputs in_;
  bool reshuffle_ = true;
};

void RegisterShuffle(KernelRegistry* r, const char* op, ShuffleInputs in) {
  r->Register(KernelDef(op, kDeviceTypeCpu),
              [in](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<ShuffleDatasetOp>(c, in);
              });
}

}  // namespace

void RegisterShuffleDatasetKernels(KernelRegistry* r) {
  //                                          seed count generator
  RegisterShuffle(r, "ShuffleDataset", ShuffleInputs{2, -1, -1});
  RegisterShuffle(r, "ShuffleDatasetV2", ShuffleInputs{-1, -1, 2});
  RegisterShuffle(r, "ShuffleDatasetV3", ShuffleInputs{2, -1, 4});
  RegisterShuffle(r, "ShuffleAndRepeatDataset", ShuffleInputs{2, 4, -1});
  RegisterShuffle(r, "ShuffleAndRepeatDatasetV2", ShuffleInputs{2, 4, 5});
}

}  // namespace data
}  // namespace weft
