// InterleaveDataset, ParallelInterleaveDataset V2, V3 and V4, and
// LegacyParallelInterleaveDatasetV2: f maps each input element to a
// dataset; up to cycle_length of those are open at once and are read
// round-robin, block_length elements from each in turn.
// TensorFlow's order, step by step: at the cycle's current slot, an open
// dataset gives its next element (after block_length of them the cycle
// moves on) or, once exhausted, closes and the cycle moves on; an empty
// slot opens f(next input element) there and is read at once; when the
// input is exhausted, empty slots are skipped until every slot is closed.
//
// The parallel ones produce the deterministic order whatever their
// `deterministic` or `sloppy` says (TensorFlow only may reorder), and
// compute it the same way, one call at a time; buffer_output_elements and
// prefetch_input_elements tune TensorFlow's read-ahead and change no
// element. cycle_length -1 (AUTOTUNE) is the number of cores, as in
// TensorFlow; num_parallel_calls -1 is cycle_length.
//
// TF1's parallel_interleave writes LegacyParallelInterleaveDatasetV2, whose
// deterministic order is another (LegacyIterator below): after an exhausted
// input it can leave a block early.
#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/data/captured_function.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {
namespace {

constexpr int64_t kAutotune = -1;
// A bound on the open datasets, whatever cycle_length asks.
constexpr int64_t kMaxCycleLength = 1 << 16;

class InterleaveDataset : public DatasetBase {
 public:
  InterleaveDataset(std::string op, DataTypeVector dtypes,
                    std::vector<PartialShape> shapes, DatasetPtr input,
                    std::shared_ptr<const CapturedFunction> fn, int64_t cycle_length,
                    int64_t block_length, int64_t legacy_prefetch = -1)
      : DatasetBase(std::move(op), std::move(dtypes), std::move(shapes)),
        input_(std::move(input)),
        fn_(std::move(fn)),
        cycle_length_(cycle_length),
        block_length_(block_length),
        legacy_prefetch_(legacy_prefetch) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    if (legacy_prefetch_ >= 0) {
      return std::unique_ptr<IteratorBase>(
          new LegacyIterator(self<InterleaveDataset>(), std::move(input)));
    }
    return std::unique_ptr<IteratorBase>(
        new Iterator(self<InterleaveDataset>(), std::move(input)));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const InterleaveDataset> ds,
             std::unique_ptr<IteratorBase> input)
        : ds_(std::move(ds)), input_(std::move(input)), slots_(ds_->cycle_length_) {}

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      const InterleaveDataset& ds = *ds_;
      out->clear();
      while (input_ != nullptr || open_ > 0) {
        std::unique_ptr<IteratorBase>& slot = slots_[cycle_index_];
        if (slot != nullptr) {
          bool end = false;
          WEFT_RETURN_IF_ERROR(slot->GetNext(ctx, out, &end));
          if (!end) {
            if (++block_index_ == ds.block_length_) Advance();
            *end_of_sequence = false;
            return CheckElement(*out, ds.output_dtypes(), ds.output_shapes(), Where());
          }
          slot.reset();
          --open_;
          Advance();
        } else if (input_ != nullptr) {
          std::vector<Tensor> element;
          bool end = false;
          WEFT_RETURN_IF_ERROR(input_->GetNext(ctx, &element, &end));
          if (end) {
            input_.reset();
            continue;
          }
          WEFT_ASSIGN_OR_RETURN(slot, ds.fn_->RunToIterator(ctx, std::move(element), Where()));
          ++open_;
        } else {
          Advance();
        }
      }
      *end_of_sequence = true;
      return absl::OkStatus();
    }

   private:
    std::string Where() const { return ds_->Where(); }
    void Advance() {
      block_index_ = 0;
      cycle_index_ = (cycle_index_ + 1) % ds_->cycle_length_;
    }
    const std::shared_ptr<const InterleaveDataset> ds_;
    std::unique_ptr<IteratorBase> input_;  // null once exhausted
    std::vector<std::unique_ptr<IteratorBase>> slots_;
    int64_t cycle_index_ = 0;
    int64_t block_index_ = 0;
    int64_t open_ = 0;
  };

  // LegacyParallelInterleaveDatasetV2's order: TensorFlow's threaded kernel
  // (a worker per open input, prefetch_input_elements of them staged ahead)
  // run one call at a time, each worker's next element taken as ready. The
  // cycle starts with the first cycle_length inputs and stages the next
  // prefetch ones. At the cycle's position, an element counts toward the
  // block even when empty slots were skipped to reach it; an exhausted input
  // takes the oldest staged one in its slot (the next input joins the
  // staging's back) and the cycle moves past it with a fresh block; with
  // nothing staged the slot stays empty and the scan goes on, the block
  // count kept. An input or function error is its slot's next element.
  class LegacyIterator : public IteratorBase {
   public:
    LegacyIterator(std::shared_ptr<const InterleaveDataset> ds,
                   std::unique_ptr<IteratorBase> input)
        : ds_(std::move(ds)), input_(std::move(input)) {}

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      if (!started_) {
        started_ = true;
        for (int64_t i = 0; input_ != nullptr && i < ds_->cycle_length_ + ds_->legacy_prefetch_;
             ++i) {
          std::unique_ptr<Worker> w;
          WEFT_RETURN_IF_ERROR(OpenNext(ctx, &w));
          if (w == nullptr) break;
          (i < ds_->cycle_length_ ? slots_.push_back(std::move(w))
                                  : staging_.push_back(std::move(w)));
        }
      }
      const int64_t n = static_cast<int64_t>(slots_.size());
      for (bool restart = true; restart;) {
        restart = false;
        for (int64_t i = 0; i < n && !restart; ++i) {
          const int64_t index = (next_ + i) % n;
          std::unique_ptr<Worker>& w = slots_[index];
          if (w == nullptr) continue;
          bool end = true;
          absl::Status element = std::move(w->error);
          w->error = absl::OkStatus();
          if (element.ok() && w->it != nullptr) {
            WEFT_RETURN_IF_ERROR(w->it->GetNext(ctx, out, &end));
          }
          if (!element.ok() || !end) {
            next_ = index;
            if (++block_ == ds_->block_length_) {
              next_ = (index + 1) % n;
              block_ = 0;
            }
            if (!element.ok()) w->it.reset();  // an error ends its input
            *end_of_sequence = false;
            WEFT_RETURN_IF_ERROR(element);
            return CheckElement(*out, ds_->output_dtypes(), ds_->output_shapes(), Where());
          }
          w.reset();
          std::unique_ptr<Worker> next;
          WEFT_RETURN_IF_ERROR(OpenNext(ctx, &next));
          if (next != nullptr) staging_.push_back(std::move(next));
          if (!staging_.empty()) {
            w = std::move(staging_.front());
            staging_.pop_front();
            next_ = (index + 1) % n;
            block_ = 0;
            restart = true;
          }
        }
      }
      *end_of_sequence = true;
      return absl::OkStatus();
    }

   private:
    // One input element's dataset: its iterator, or the error its input or
    // f gave (returned in its turn, then it is exhausted).
    struct Worker {
      std::unique_ptr<IteratorBase> it;
      absl::Status error;
    };
    // The next input's worker in *w, or null once the input is exhausted.
    absl::Status OpenNext(IteratorContext* ctx, std::unique_ptr<Worker>* w) {
      w->reset();
      if (input_ == nullptr) return absl::OkStatus();
      std::vector<Tensor> element;
      bool end = false;
      absl::Status s = input_->GetNext(ctx, &element, &end);
      if (s.ok() && end) {
        input_.reset();
        return absl::OkStatus();
      }
      *w = std::make_unique<Worker>();
      if (!s.ok()) {
        (*w)->error = s;
        return absl::OkStatus();
      }
      absl::StatusOr<std::unique_ptr<IteratorBase>> it =
          ds_->fn_->RunToIterator(ctx, std::move(element), Where());
      if (it.ok()) {
        (*w)->it = *std::move(it);
      } else {
        (*w)->error = it.status();
      }
      return absl::OkStatus();
    }
    std::string Where() const { return ds_->Where(); }

    const std::shared_ptr<const InterleaveDataset> ds_;
    std::unique_ptr<IteratorBase> input_;  // null once exhausted
    bool started_ = false;
    std::vector<std::unique_ptr<Worker>> slots_;  // null: empty
    std::deque<std::unique_ptr<Worker>> staging_;
    int64_t next_ = 0;
    int64_t block_ = 0;
  };

  // Names the op and its function in errors.
  std::string Where() const { return absl::StrCat(op(), " function ", fn_->name()); }

  const DatasetPtr input_;
  const std::shared_ptr<const CapturedFunction> fn_;
  const int64_t cycle_length_;
  const int64_t block_length_;
  const int64_t legacy_prefetch_;  // -1: not the legacy order
};

// The inputs an interleave op has after cycle_length and block_length, in
// order (each is checked as TensorFlow does; none changes the order).
enum class Tuning { kBufferOutputElements, kPrefetchInputElements, kNumParallelCalls };

class InterleaveDatasetOp : public DatasetOpKernel {
 public:
  // `legacy`: LegacyParallelInterleaveDatasetV2's order (its tuning is
  // buffer_output_elements, prefetch_input_elements).
  InterleaveDatasetOp(OpKernelConstruction* c, std::vector<Tuning> tuning, bool legacy)
      : DatasetOpKernel(c), tuning_(std::move(tuning)), legacy_(legacy) {
    absl::StatusOr<tensorflow::NameAttrList> f = FuncAttr(c, "f");
    if (f.ok()) fn_ = *std::move(f);
    c->SetStatus(f.status());
  }

 protected:
  absl::StatusOr<DatasetPtr> MakeDataset(OpKernelContext* c) override {
    WEFT_ASSIGN_OR_RETURN(DatasetPtr input, DatasetFromInput(c, 0));
    const int first = c->num_inputs() - 2 - static_cast<int>(tuning_.size());
    WEFT_ASSIGN_OR_RETURN(int64_t cycle, ScalarInt64Input(c, first, "cycle_length"));
    WEFT_ASSIGN_OR_RETURN(int64_t block, ScalarInt64Input(c, first + 1, "block_length"));
    if (cycle == kAutotune) cycle = std::max(1u, std::thread::hardware_concurrency());
    if (cycle <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cycle_length must be greater than zero. (", KernelLabel(c), " got ", cycle,
          ")"));
    }
    if (cycle > kMaxCycleLength) {
      return absl::InvalidArgumentError(absl::StrCat(
          KernelLabel(c), ": cycle_length ", cycle, " is larger than the ",
          kMaxCycleLength, " datasets one interleave may keep open"));
    }
    if (block <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "block_length must be greater than zero. (", KernelLabel(c), " got ", block,
          ")"));
    }
    for (size_t i = 0; i < tuning_.size(); ++i) {
      WEFT_RETURN_IF_ERROR(CheckTuning(c, first + 2 + static_cast<int>(i), tuning_[i], cycle));
    }
    int64_t legacy_prefetch = -1;
    if (legacy_) {
      WEFT_ASSIGN_OR_RETURN(legacy_prefetch,
                            ScalarInt64Input(c, first + 3, "prefetch_input_elements"));
      if (legacy_prefetch < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            KernelLabel(c), ": prefetch_input_elements must be >= 0, got ",
            legacy_prefetch));
      }
      if (legacy_prefetch > kMaxCycleLength) {
        return absl::InvalidArgumentError(absl::StrCat(
            KernelLabel(c), ": prefetch_input_elements ", legacy_prefetch,
            " is larger than the ", kMaxCycleLength, " inputs one interleave may stage"));
      }
    }
    WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const CapturedFunction> fn,
                          CapturedFunction::Create(c, fn_, 1, first));
    return DatasetPtr(std::make_shared<InterleaveDataset>(
        type_string(), output_dtypes(), output_shapes(), std::move(input),
        std::move(fn), cycle, block, legacy_prefetch));
  }

 private:
  // TensorFlow's check of one tuning input.
  static absl::Status CheckTuning(OpKernelContext* c, int i, Tuning what, int64_t cycle) {
    switch (what) {
      case Tuning::kBufferOutputElements: {
        WEFT_ASSIGN_OR_RETURN(int64_t buffer, ScalarInt64Input(c, i, "buffer_output_elements"));
        if (buffer != kAutotune && buffer <= 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "`buffer_output_elements` must be ", kAutotune, " or > 0 but is ", buffer));
        }
        return absl::OkStatus();
      }
      case Tuning::kPrefetchInputElements: {
        WEFT_ASSIGN_OR_RETURN(int64_t prefetch,
                              ScalarInt64Input(c, i, "prefetch_input_elements"));
        if (prefetch != kAutotune && prefetch < 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "`prefetch_input_elements` must be ", kAutotune, " or >= 0 but is ",
              prefetch));
        }
        return absl::OkStatus();
      }
      default: {
        WEFT_ASSIGN_OR_RETURN(int64_t calls, ScalarInt64Input(c, i, "num_parallel_calls"));
        if (calls != kAutotune && calls <= 0) {
          return absl::InvalidArgumentError("num_parallel_calls must be greater than zero.");
        }
        if (calls > cycle) {
          return absl::InvalidArgumentError(
              "num_parallel_calls must less than or equal to cycle_length.");
        }
        return absl::OkStatus();
      }
    }
  }

  const std::vector<Tuning> tuning_;
  const bool legacy_;
  tensorflow::NameAttrList fn_;
};

void RegisterInterleave(KernelRegistry* r, const char* op, std::vector<Tuning> tuning,
                        bool legacy = false) {
  r->Register(KernelDef(op, kDeviceTypeCpu),
              [tuning, legacy](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<InterleaveDatasetOp>(c, tuning, legacy);
              });
}

}  // namespace

void RegisterInterleaveDatasetKernels(KernelRegistry* r) {
  using T = Tuning;
  RegisterInterleave(r, "InterleaveDataset", {});
  RegisterInterleave(r, "ParallelInterleaveDatasetV2", {T::kNumParallelCalls});
  RegisterInterleave(r, "ParallelInterleaveDatasetV3", {T::kNumParallelCalls});
  RegisterInterleave(r, "ParallelInterleaveDatasetV4",
                     {T::kBufferOutputElements, T::kPrefetchInputElements,
                      T::kNumParallelCalls});
  RegisterInterleave(r, "LegacyParallelInterleaveDatasetV2",
                     {T::kBufferOutputElements, T::kPrefetchInputElements},
                     /*legacy=*/true);
}

}  // namespace data
}  // namespace weft
