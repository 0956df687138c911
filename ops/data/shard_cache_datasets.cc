// Datasets that pick or keep elements of their input without changing them:
//   - ShardDataset: the elements at positions index, index + num_shards,
//     ...; require_non_empty (auto-sharding's) fails, as TensorFlow does,
//     when the input has fewer than num_shards elements and the shard has one.
//   - CacheDataset (TensorFlow 1.x) and CacheDatasetV2, in memory
//     (filename ""): the first pass that reads the input to its end fills
//     the dataset's cache, and passes started after that read the cache,
//     so a shuffled or random input repeats its first pass exactly, as in
//     TensorFlow. CacheDatasetV2's `cache` resource (DummyMemoryCache,
//     AnonymousMemoryCache) is not needed: each dataset holds its cache.
//   - The same ops with a filename: TensorFlow's file cache, in its files,
//     so that either can read what the other wrote. A pass that finds
//     <filename>.index reads the elements from that V2 checkpoint (element
//     i's component j under the key "%7d_%*d" % (i, digits, j)). Otherwise
//     the pass writes one: the elements go to the checkpoint <filename>_0
//     while they are produced, guarded by <filename>_0.lockfile (a second
//     writer fails ALREADY_EXISTS, naming the lock, as in TensorFlow), and
//     when the input ends the files are renamed to <filename> and the lock
//     removed. A pass stopped before its end removes what it wrote. The
//     path goes through the device's file policy (runtime/core/file_policy.h).
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/shared_resource.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "runtime/checkpoint/file_util.h"
#include "runtime/checkpoint/tensor_bundle.h"
#include "runtime/core/file_policy.h"
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

// TensorFlow's file cache (see the top of the file).
class FileCacheDataset : public DatasetBase {
 public:
  // `prefix`: the filename as the file policy resolved it.
  FileCacheDataset(std::string op, DatasetPtr input, std::string prefix)
      : DatasetBase(std::move(op), input->output_dtypes(), input->output_shapes()),
        input_(std::move(input)),
        prefix_(std::move(prefix)),
        tensor_digits_(static_cast<int>(
            absl::StrCat(std::max<size_t>(output_dtypes().size(), 1) - 1).size())) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    if (Exists(IndexFilename(prefix_))) {
      WEFT_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader,
                            BundleReader::Open(prefix_));
      return std::unique_ptr<IteratorBase>(
          new ReadingIterator(self<FileCacheDataset>(), std::move(reader)));
    }
    WEFT_ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> input, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(
        new WritingIterator(self<FileCacheDataset>(), std::move(input)));
  }
  int64_t Cardinality() const override { return input_->Cardinality(); }

 private:
  static constexpr int64_t kMaxItems = 10000000;  // TensorFlow's limit

  static bool Exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
  }

  // Element `item`'s component `tensor`: TensorFlow's key, space padded.
  std::string Key(int64_t item, size_t tensor) const {
    return absl::StrFormat("%7d_%*d", item, tensor_digits_, tensor);
  }

  // Writes the cache while passing the input's elements on.
  class WritingIterator : public IteratorBase {
   public:
    WritingIterator(std::shared_ptr<const FileCacheDataset> ds,
                    std::unique_ptr<IteratorBase> input)
        : ds_(std::move(ds)),
          input_(std::move(input)),
          shard_(absl::StrCat(ds_->prefix_, "_0")),
          lockfile_(absl::StrCat(shard_, ".lockfile")) {}

    ~WritingIterator() override {
      if (!locked_ || done_) return;
      // Stopped part-way: nothing of this pass may look like a cache.
      writer_.reset();  // removes its temporary files
      std::remove(DataFilename(shard_, 0, 1).c_str());
      std::remove(IndexFilename(shard_).c_str());
      std::remove(lockfile_.c_str());
    }

    absl::Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      *end_of_sequence = done_;
      if (done_) return absl::OkStatus();
      if (!locked_) WEFT_RETURN_IF_ERROR(Lock());
      if (next_ >= kMaxItems) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Upstream iterator is producing more than ", kMaxItems,
            " items, which is more than the cache limit (", ds_->op(), " to '",
            ds_->prefix_, "')"));
      }
      WEFT_RETURN_IF_ERROR(input_->GetNext(ctx, out, end_of_sequence));
      if (*end_of_sequence) return Finish();
      for (size_t i = 0; i < out->size(); ++i) {
        absl::Status s = writer_->Add(ds_->Key(next_, i), (*out)[i]);
        if (!s.ok()) {
          return WithContext(s, absl::StrCat("caching element ", next_, " to '",
                                          ds_->prefix_, "'"));
        }
      }
      ++next_;
      return absl::OkStatus();
    }

   private:
    absl::Status Lock() {
      if (Exists(IndexFilename(shard_))) {
        return absl::AlreadyExistsError(absl::StrCat(
            "Existing cache files found: \n", IndexFilename(shard_), "\n",
            DataFilename(shard_, 0, 1), "\nTo continue delete the above files."));
      }
      if (Exists(lockfile_)) {
        std::string contents(150, '\0');
        std::ifstream in(lockfile_, std::ios::binary);
        in.read(contents.data(), static_cast<std::streamsize>(contents.size()));
        contents.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
        return absl::AlreadyExistsError(absl::StrCat(
            "There appears to be a concurrent caching iterator running - cache "
            "lockfile already exists ('", lockfile_,
            "'). If you are sure no other running TF computations are using "
            "this cache prefix, delete the lockfile and re-initialize the "
            "iterator. Lockfile contents: ", contents));
      }
      std::FILE* f = std::fopen(lockfile_.c_str(), "wx");
      if (f == nullptr) return FileError("cannot create the cache lockfile", lockfile_);
      const std::string created = absl::StrCat("Created at: ", std::time(nullptr));
      const bool written = std::fwrite(created.data(), 1, created.size(), f) == created.size();
      if (std::fclose(f) != 0 || !written) {
        std::remove(lockfile_.c_str());
        return FileError("cannot write the cache lockfile", lockfile_);
      }
      locked_ = true;
      writer_ = std::make_unique<BundleWriter>(shard_);
      return absl::OkStatus();
    }

    // The input is done: the shard becomes the cache, data file first (a
    // reader looks for the index).
    absl::Status Finish() {
      WEFT_RETURN_IF_ERROR(writer_->Finish());
      writer_.reset();
      for (const auto& [from, to] :
           {std::pair{DataFilename(shard_, 0, 1), DataFilename(ds_->prefix_, 0, 1)},
            std::pair{IndexFilename(shard_), IndexFilename(ds_->prefix_)}}) {
        if (std::rename(from.c_str(), to.c_str()) != 0) {
          return FileError(absl::StrCat("cannot move the finished cache to ", to,
                                        ": renaming"),
                           from);
        }
      }
      std::remove(lockfile_.c_str());
      done_ = true;
      return absl::OkStatus();
    }

    const std::shared_ptr<const FileCacheDataset> ds_;
    std::unique_ptr<IteratorBase> input_;
    const std::string shard_, lockfile_;
    std::unique_ptr<BundleWriter> writer_;
    bool locked_ = false, done_ = false;
    int64_t next_ = 0;
  };

  // Reads a finished cache, element by element.
  class ReadingIterator : public IteratorBase {
   public:
    ReadingIterator(std::shared_ptr<const FileCacheDataset> ds,
                    std::unique_ptr<BundleReader> reader)
        : ds_(std::move(ds)), reader_(std::move(reader)) {}

    absl::Status GetNext(IteratorContext*, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      const DataTypeVector& dtypes = ds_->output_dtypes();
      *end_of_sequence = reader_->entries().count(ds_->Key(next_, 0)) == 0;
      if (*end_of_sequence) return absl::OkStatus();
      for (size_t i = 0; i < dtypes.size(); ++i) {
        absl::StatusOr<Tensor> t = reader_->Read(ds_->Key(next_, i), dtypes[i]);
        if (!t.ok()) {
          out->clear();
          return WithContext(t.status(),
                          absl::StrCat("reading element ", next_, " of the cache '",
                                       ds_->prefix_, "' (", ds_->op(),
                                       "; delete its files if the pipeline changed)"));
        }
        out->push_back(*std::move(t));
      }
      ++next_;
      return absl::OkStatus();
    }

   private:
    const std::shared_ptr<const FileCacheDataset> ds_;
    const std::unique_ptr<BundleReader> reader_;
    int64_t next_ = 0;
  };

  const DatasetPtr input_;
  const std::string prefix_;
  const int tensor_digits_;
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
    if (name.empty()) {
      c->set_output(0, DatasetToTensor(std::make_shared<CacheDataset>(
                           type_string(), *std::move(input))));
      return;
    }
    absl::StatusOr<std::string> prefix = c->device()->file_policy().Resolve(name);
    OP_REQUIRES(c, prefix.ok(),
                WithContext(prefix.status(), absl::StrCat(KernelLabel(c), ": the cache file")));
    c->set_output(0, DatasetToTensor(std::make_shared<FileCacheDataset>(
                         type_string(), *std::move(input), *std::move(prefix))));
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
