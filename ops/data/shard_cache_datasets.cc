// Datasets that pick or keep elements of their input without changing them:
//   - ShardDataset: the elements at positions index, index + num_shards,
//     ...; require_non_empty (auto-sharding's) fails, as TensorFlow does,
//     when the input has fewer than num_shards elements and the shard has one.
//   - CacheDataset (TensorFlow 1.x) and CacheDatasetV2, in memory
//     (filename ""): the first pass that reads the input to its end fills
//     the dataset's cache, and passes started after that read the cache,
//     so a shuffled or random input repeats its first pass exactly, as in
//     TensorFlow. A file cache (a non-empty filename) is UNIMPLEMENTED.
//     CacheDatasetV2's `cache` resource (DummyMemoryCache,
//     AnonymousMemoryCache) is not needed: each dataset holds its cache.
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/shared_resource.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {
namespace {

class ShardDataset : public DatasetBase {
 public:
  ShardDataset(DatasetPtr input, int64_t num_shards, int64_t index, bool require_non_empty)
      : DatasetBase("ShardDataset", input->output_dtypes(), input->output_shapes()),
        input_(std::move(input)),
        num_shards_(num_shards),
        index_(index),
        require_non_empty_(require_non_empty) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(
        new Iterator(self<ShardDataset>(), std::move(input)));
  }
  int64_t Cardinality() const override {
    const int64_t n = input_->Cardinality();
    if (n < 0) return n;
    return n / num_shards_ + (index_ < n % num_shards_ ? 1 : 0);
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const ShardDataset> ds, std::unique_ptr<IteratorBase> input)
        : ds_(std::move(ds)), input_(std::move(input)) {}

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      *end_of_sequence = true;
      const ShardDataset& ds = *ds_;
      while (input_ != nullptr) {
        std::vector<Tensor> element;
        bool end = false;
        WEFT_RETURN_IF_ERROR(input_->GetNext(ctx, &element, &end));
        if (end) {
          input_.reset();
          return absl::OkStatus();
        }
        if (position_++ % ds.num_shards_ != ds.index_) continue;
        // TensorFlow's auto-sharding check: the input must have at least
        // num_shards elements, else the first element becomes an error.
        if (ds.require_non_empty_ && position_ < ds.num_shards_) {
          const int64_t have = position_;
          while (position_ < ds.num_shards_) {
            std::vector<Tensor> skipped;
            WEFT_RETURN_IF_ERROR(input_->GetNext(ctx, &skipped, &end));
            if (end) {
              input_.reset();
              return ds.NotEnoughFiles(have);
            }
            ++position_;
          }
        }
        *out = std::move(element);
        *end_of_sequence = false;
        return absl::OkStatus();
      }
      return absl::OkStatus();
    }

   private:
    const std::shared_ptr<const ShardDataset> ds_;
    std::unique_ptr<IteratorBase> input_;  // null once exhausted
    int64_t position_ = 0;                 // input elements read
  };

  absl::Status NotEnoughFiles(int64_t have) const {
    return absl::InvalidArgumentError(absl::StrCat(
        "Could not apply FILE based sharding: the dataset only has ", have,
        " file(s), which is not enough for the required ", num_shards_,
        " shards/workers. If you are using datasets with distribution "
        "strategy, consider setting the auto sharding policy to either DATA "
        "or OFF using the `experimental_distribute.auto_shard_policy` option "
        "of `tf.data.Options()`. Or, split your input files into a larger "
        "number of small files such that number of files is greater than "
        "number of shards/workers."));
  }

  const DatasetPtr input_;
  const int64_t num_shards_;
  const int64_t index_;
  const bool require_non_empty_;
};

class ShardDatasetOp : public OpKernel {
 public:
  explicit ShardDatasetOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("require_non_empty", &require_non_empty_));
  }
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<DatasetPtr> input = DatasetFromInput(c, 0);
    OP_REQUIRES_OK(c, input.status());
    absl::StatusOr<int64_t> shards = ScalarInt64Input(c, 1, "num_shards");
    OP_REQUIRES_OK(c, shards.status());
    OP_REQUIRES(c, *shards > 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Number of shards must be greater than zero (currently "
                    "num_shards = ", *shards, ").")));
    absl::StatusOr<int64_t> index = ScalarInt64Input(c, 2, "index");
    OP_REQUIRES_OK(c, index.status());
    OP_REQUIRES(c, *index >= 0 && *index < *shards,
                absl::InvalidArgumentError(absl::StrCat(
                    "Index must be between 0 and ", *shards - 1,
                    " (currently index = ", *index, ").")));
    c->set_output(0, DatasetToTensor(std::make_shared<ShardDataset>(
                         *std::move(input), *shards, *index, require_non_empty_)));
  }

 private:
  bool require_non_empty_ = false;
};

class CacheDataset : public DatasetBase {
 public:
  CacheDataset(std::string op, DatasetPtr input)
      : DatasetBase(std::move(op), input->output_dtypes(), input->output_shapes()),
        input_(std::move(input)) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    std::shared_ptr<const Elements> cached;
    {
      absl::MutexLock lock(&mu_);
      cached = cache_;
    }
    if (cached != nullptr) {
      return std::unique_ptr<IteratorBase>(new CachedIterator(std::move(cached)));
    }
    WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(
        new FillingIterator(self<CacheDataset>(), std::move(input)));
  }
  int64_t Cardinality() const override { return input_->Cardinality(); }

 private:
  using Elements = std::vector<std::vector<Tensor>>;

  // Reads the input, keeping every element; at its end, offers them as the
  // cache (the first pass to finish wins).
  class FillingIterator : public IteratorBase {
   public:
    FillingIterator(std::shared_ptr<const CacheDataset> ds,
                    std::unique_ptr<IteratorBase> input)
        : ds_(std::move(ds)), input_(std::move(input)) {}

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      *end_of_sequence = input_ == nullptr;
      if (*end_of_sequence) return absl::OkStatus();
      WEFT_RETURN_IF_ERROR(input_->GetNext(ctx, out, end_of_sequence));
      if (!*end_of_sequence) {
        elements_.push_back(*out);
        return absl::OkStatus();
      }
      input_.reset();
      absl::MutexLock lock(&ds_->mu_);
      if (ds_->cache_ == nullptr) {
        ds_->cache_ = std::make_shared<const Elements>(std::move(elements_));
      }
      return absl::OkStatus();
    }

   private:
    const std::shared_ptr<const CacheDataset> ds_;
    std::unique_ptr<IteratorBase> input_;  // null once exhausted
    Elements elements_;
  };

  class CachedIterator : public IteratorBase {
   public:
    explicit CachedIterator(std::shared_ptr<const Elements> elements)
        : elements_(std::move(elements)) {}

    absl::Status GetNext(IteratorContext*, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      *end_of_sequence = next_ >= elements_->size();
      if (*end_of_sequence) {
        out->clear();
      } else {
        *out = (*elements_)[next_++];
      }
      return absl::OkStatus();
    }

   private:
    const std::shared_ptr<const Elements> elements_;
    size_t next_ = 0;
  };

  const DatasetPtr input_;
  mutable absl::Mutex mu_;
  mutable std::shared_ptr<const Elements> cache_ ABSL_GUARDED_BY(mu_);
};

class CacheDatasetOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<DatasetPtr> input = DatasetFromInput(c, 0);
    OP_REQUIRES_OK(c, input.status());
    const Tensor& filename = c->input(1);
    OP_REQUIRES(c, filename.dtype() == DT_STRING && filename.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    KernelLabel(c), ": filename must be a string scalar, got ",
                    DataTypeString(filename.dtype()), " ",
                    filename.shape().DebugString())));
    const std::string& name = filename.scalar<std::string>();
    OP_REQUIRES(c, name.empty(),
                absl::UnimplementedError(absl::StrCat(
                    KernelLabel(c), ": caching to a file ('", name,
                    "') is not supported; only the in-memory cache (filename '')")));
    c->set_output(0, DatasetToTensor(std::make_shared<CacheDataset>(
                         type_string(), *std::move(input))));
  }
};

// DummyMemoryCache and AnonymousMemoryCache: a handle (naming nothing) and,
// for the anonymous one, an empty deleter; DeleteMemoryCache: nothing to do.
class MemoryCacheHandleOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    static std::atomic<int64_t> next{0};
    ResourceHandle h;
    h.device = c->device()->name();
    h.container = c->resource_manager()->default_container();
    h.name = absl::StrCat("_MemoryCache", next.fetch_add(1));
    c->set_output(0, ResourceHandleTensor(h));
    if (c->num_outputs() > 1) c->set_output(1, Tensor(DT_VARIANT, TensorShape()));
  }
};

class NoOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext*) override {}
};

}  // namespace

void RegisterShardCacheDatasetKernels(KernelRegistry* r) {
  r->Register(KernelDef("ShardDataset", kDeviceTypeCpu), MakeKernel<ShardDatasetOp>);
  for (const char* op : {"CacheDataset", "CacheDatasetV2"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<CacheDatasetOp>);
  }
  for (const char* op : {"DummyMemoryCache", "AnonymousMemoryCache"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<MemoryCacheHandleOp>);
  }
  r->Register(KernelDef("DeleteMemoryCache", kDeviceTypeCpu), MakeKernel<NoOpKernel>);
}

}  // namespace data
}  // namespace weft
