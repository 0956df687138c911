// The datasets that read files, one string scalar per element:
// TFRecordDataset(V2) (records), TextLineDataset (lines),
// FixedLengthRecordDataset(V2) (fixed-size records) and MatchingFilesDataset
// (file names matching glob patterns); and the MatchingFiles op.
//
// A dataset holds its file names and a copy of its device's file policy;
// its iterator opens the files one after another, lazily, in GetNext, each
// through the policy first (runtime/core/file_policy.h), and reads it
// through record_reader.h (bounded reads, CRC checks, zlib). An error
// reading a file is reported once and the iterator moves on to the next
// file, as TensorFlow's do (so ignore_errors-style readers make progress).
#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/data/data_kernels.h"
#include "ops/data/dataset.h"
#include "ops/data/file_match.h"
#include "ops/data/record_reader.h"
#include "runtime/core/device.h"
#include "runtime/core/file_policy.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {
namespace {

enum class Format { kTFRecord, kTextLine, kFixedLength };

// How the files of a dataset are read.
struct ReadSpec {
  Format format = Format::kTFRecord;
  Compression compression = Compression::kNone;
  int64_t buffer_size = 0;
  uint64_t header_bytes = 0, record_bytes = 0, footer_bytes = 0;
  std::vector<uint64_t> byte_offsets;  // per file, or empty
};

// A dataset of string scalars, given an iterator that yields strings.
class StringDataset : public DatasetBase {
 public:
  StringDataset(std::string op, std::shared_ptr<const FilePolicy> policy)
      : DatasetBase(std::move(op), {DT_STRING}, {PartialShape({})}),
        policy_(std::move(policy)) {}

 protected:
  static void Emit(std::string value, std::vector<Tensor>* out) {
    Tensor t(DT_STRING, TensorShape());
    t.scalar<std::string>() = std::move(value);
    out->push_back(std::move(t));
  }
  const std::shared_ptr<const FilePolicy> policy_;
};

class FileRecordDataset : public StringDataset {
 public:
  FileRecordDataset(std::string op, std::shared_ptr<const FilePolicy> policy,
                    std::vector<std::string> files, ReadSpec spec)
      : StringDataset(std::move(op), std::move(policy)),
        files_(std::move(files)),
        spec_(std::move(spec)) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(new Iterator(self<FileRecordDataset>()));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const FileRecordDataset> ds)
        : ds_(std::move(ds)) {}
    absl::Status GetNext(IteratorContext*, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      *end_of_sequence = false;
      while (true) {
        if (reader_ == nullptr) {
          if (next_file_ >= ds_->files_.size()) {
            *end_of_sequence = true;
            return absl::OkStatus();
          }
          absl::Status s = Open(next_file_);
          if (!s.ok()) {
            ++next_file_;
            return s;
          }
        }
        std::string record;
        bool end = false;
        absl::Status s = reader_->Read(&record, &end);
        if (!s.ok() || end) {
          reader_.reset();
          ++next_file_;
          if (!s.ok()) return s;
          continue;
        }
        Emit(std::move(record), out);
        return absl::OkStatus();
      }
    }

   private:
    absl::Status Open(size_t i) {
      const ReadSpec& spec = ds_->spec_;
      WEFT_ASSIGN_OR_RETURN(std::string path, ds_->policy_->Resolve(ds_->files_[i]));
      const uint64_t offset = spec.byte_offsets.empty() ? 0 : spec.byte_offsets[i];
      WEFT_ASSIGN_OR_RETURN(
          std::unique_ptr<ByteStream> in,
          OpenByteStream(path, spec.compression, spec.buffer_size, offset));
      switch (spec.format) {
        case Format::kTFRecord:
          reader_ = std::make_unique<TFRecordReader>(std::move(in), offset);
          break;
        case Format::kTextLine:
          reader_ = std::make_unique<LineReader>(std::move(in));
          break;
        case Format::kFixedLength:
          WEFT_RETURN_IF_ERROR(CheckFixedLengthBody(path, ds_->files_[i]));
          reader_ = std::make_unique<FixedLengthReader>(
              std::move(in), spec.header_bytes, spec.record_bytes, spec.footer_bytes);
          break;
      }
      return absl::OkStatus();
    }

    // An uncompressed file's body must hold whole records (TensorFlow's
    // check; a compressed one's length is not known ahead).
    absl::Status CheckFixedLengthBody(const std::string& path, const std::string& name) {
      const ReadSpec& spec = ds_->spec_;
      struct stat st;
      if (spec.compression != Compression::kNone || stat(path.c_str(), &st) != 0) {
        return absl::OkStatus();
      }
      const uint64_t size = static_cast<uint64_t>(st.st_size);
      const uint64_t frame = spec.header_bytes + spec.footer_bytes;
      if (spec.header_bytes > size || frame > size) return absl::OkStatus();
      const uint64_t body = size - frame;
      if (body % spec.record_bytes == 0) return absl::OkStatus();
      return absl::InvalidArgumentError(absl::StrCat(
          "Excluding the header (", spec.header_bytes, " bytes) and footer (",
          spec.footer_bytes, " bytes), input file \"", name, "\" has body length ",
          body, " bytes, which is not an exact multiple of the record length (",
          spec.record_bytes, " bytes)."));
    }

    const std::shared_ptr<const FileRecordDataset> ds_;
    size_t next_file_ = 0;
    std::unique_ptr<RecordSource> reader_;
  };

  const std::vector<std::string> files_;
  const ReadSpec spec_;
};

// The patterns' matches, pattern by pattern (each sorted), matched when the
// iterator reaches the pattern.
class MatchingFilesDataset : public StringDataset {
 public:
  MatchingFilesDataset(std::shared_ptr<const FilePolicy> policy,
                       std::vector<std::string> patterns)
      : StringDataset("MatchingFilesDataset", std::move(policy)),
        patterns_(std::move(patterns)) {}

  absl::StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    return std::unique_ptr<IteratorBase>(new Iterator(self<MatchingFilesDataset>()));
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const MatchingFilesDataset> ds)
        : ds_(std::move(ds)) {}
    absl::Status GetNext(IteratorContext*, std::vector<Tensor>* out,
                         bool* end_of_sequence) override {
      out->clear();
      while (next_match_ >= matches_.size()) {
        if (next_pattern_ >= ds_->patterns_.size()) {
          *end_of_sequence = true;
          return absl::OkStatus();
        }
        matches_.clear();
        next_match_ = 0;
        WEFT_RETURN_IF_ERROR(
            MatchFiles(*ds_->policy_, ds_->patterns_[next_pattern_++], &matches_));
      }
      *end_of_sequence = false;
      Emit(matches_[next_match_++], out);
      return absl::OkStatus();
    }

   private:
    const std::shared_ptr<const MatchingFilesDataset> ds_;
    size_t next_pattern_ = 0;
    std::vector<std::string> matches_;
    size_t next_match_ = 0;
  };

  const std::vector<std::string> patterns_;
};

// A string scalar or vector input's values.
absl::StatusOr<std::vector<std::string>> StringsInput(OpKernelContext* c, int i,
                                                      const char* what) {
  const Tensor& t = c->input(i);
  if (t.dtype() != DT_STRING || t.dims() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "`", what, "` must be a scalar or a vector. (", KernelLabel(c), ", got ",
        t.shape().DebugString(), ")"));
  }
  std::vector<std::string> out;
  for (const std::string& s : t.flat<std::string>()) out.push_back(s);
  return out;
}

absl::StatusOr<std::string> ScalarStringInput(OpKernelContext* c, int i,
                                              const char* what) {
  const Tensor& t = c->input(i);
  if (t.dtype() != DT_STRING || t.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        KernelLabel(c), ": `", what, "` must be a string scalar, got ",
        t.shape().DebugString()));
  }
  return t.scalar<std::string>();
}

// input `i` as an int64 scalar that is at least `min`.
absl::StatusOr<int64_t> BoundedInput(OpKernelContext* c, int i, const char* what,
                                     int64_t min, const char* rule) {
  WEFT_ASSIGN_OR_RETURN(int64_t v, ScalarInt64Input(c, i, what));
  if (v < min) {
    return absl::InvalidArgumentError(absl::StrCat(
        "`", what, "` must be ", rule, " but is ", v, " (", KernelLabel(c), ")"));
  }
  return v;
}

std::shared_ptr<const FilePolicy> PolicyOf(OpKernelContext* c) {
  return std::make_shared<const FilePolicy>(c->device()->file_policy());
}

// The file datasets' kernels; the inputs after `filenames` depend on the op.
class FileDatasetOp : public OpKernel {
 public:
  FileDatasetOp(OpKernelConstruction* c, Format format, int compression_input,
                bool byte_offsets)
      : OpKernel(c), format_(format), compression_input_(compression_input),
        byte_offsets_(byte_offsets) {}

  void Compute(OpKernelContext* c) override {
    absl::StatusOr<DatasetPtr> ds = Make(c);
    OP_REQUIRES_OK(c, ds.status());
    c->set_output(0, DatasetToTensor(*std::move(ds)));
  }

 private:
  absl::StatusOr<DatasetPtr> Make(OpKernelContext* c) {
    WEFT_ASSIGN_OR_RETURN(std::vector<std::string> files,
                          StringsInput(c, 0, "filenames"));
    ReadSpec spec;
    spec.format = format_;
    int buffer_input = 2;
    if (format_ == Format::kFixedLength) {
      WEFT_ASSIGN_OR_RETURN(int64_t header,
                            BoundedInput(c, 1, "header_bytes", 0, ">= 0"));
      WEFT_ASSIGN_OR_RETURN(int64_t record,
                            BoundedInput(c, 2, "record_bytes", 1, "> 0"));
      WEFT_ASSIGN_OR_RETURN(int64_t footer,
                            BoundedInput(c, 3, "footer_bytes", 0, ">= 0"));
      spec.header_bytes = header;
      spec.record_bytes = record;
      spec.footer_bytes = footer;
      buffer_input = 4;
    }
    // -1 (what newer Python layers pass for "unspecified") means the default.
    WEFT_ASSIGN_OR_RETURN(
        spec.buffer_size,
        BoundedInput(c, buffer_input, "buffer_size", -1, ">= 0 (0 == no buffering)"));
    if (compression_input_ >= 0) {
      WEFT_ASSIGN_OR_RETURN(std::string type,
                            ScalarStringInput(c, compression_input_, "compression_type"));
      WEFT_ASSIGN_OR_RETURN(spec.compression, ParseCompression(type));
    }
    if (byte_offsets_) {
      const Tensor& t = c->input(3);
      if (t.dtype() != DT_INT64 || t.dims() > 1 ||
          (t.NumElements() != 0 &&
           t.NumElements() != static_cast<int64_t>(files.size()))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "`byte_offsets` must be empty or have one offset per file: got ",
            t.shape().DebugString(), " for ", files.size(), " files (",
            KernelLabel(c), ")"));
      }
      for (int64_t v : t.flat<int64_t>()) {
        if (v < 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "`byte_offsets` must be >= 0 but has ", v, " (", KernelLabel(c), ")"));
        }
        spec.byte_offsets.push_back(static_cast<uint64_t>(v));
      }
    }
    return DatasetPtr(std::make_shared<FileRecordDataset>(
        type_string(), PolicyOf(c), std::move(files), std::move(spec)));
  }

  const Format format_;
  const int compression_input_;  // -1: none
  const bool byte_offsets_;
};

class MatchingFilesDatasetOp : public OpKernel {
 public:
  explicit MatchingFilesDatasetOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::vector<std::string>> patterns =
        StringsInput(c, 0, "patterns");
    OP_REQUIRES_OK(c, patterns.status());
    c->set_output(0, DatasetToTensor(std::make_shared<MatchingFilesDataset>(
                         PolicyOf(c), *std::move(patterns))));
  }
};

class MatchingFilesOp : public OpKernel {
 public:
  explicit MatchingFilesOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::vector<std::string>> patterns =
        StringsInput(c, 0, "pattern");
    OP_REQUIRES_OK(c, patterns.status());
    std::vector<std::string> all;
    for (const std::string& p : *patterns) {
      OP_REQUIRES_OK(c, MatchFiles(c->device()->file_policy(), p, &all));
    }
    std::sort(all.begin(), all.end());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(
                          0, TensorShape({static_cast<int64_t>(all.size())}), &out));
    for (size_t i = 0; i < all.size(); ++i) {
      out->flat<std::string>()[i] = std::move(all[i]);
    }
  }
};

template <Format F, int kCompression, bool kOffsets>
std::unique_ptr<OpKernel> MakeFileDatasetOp(OpKernelConstruction* c) {
  return std::make_unique<FileDatasetOp>(c, F, kCompression, kOffsets);
}

}  // namespace

void RegisterFileDatasetKernels(KernelRegistry* r) {
  r->Register(KernelDef("TFRecordDataset", kDeviceTypeCpu),
              MakeFileDatasetOp<Format::kTFRecord, 1, false>);
  r->Register(KernelDef("TFRecordDatasetV2", kDeviceTypeCpu),
              MakeFileDatasetOp<Format::kTFRecord, 1, true>);
  r->Register(KernelDef("TextLineDataset", kDeviceTypeCpu),
              MakeFileDatasetOp<Format::kTextLine, 1, false>);
  r->Register(KernelDef("FixedLengthRecordDataset", kDeviceTypeCpu),
              MakeFileDatasetOp<Format::kFixedLength, -1, false>);
  r->Register(KernelDef("FixedLengthRecordDatasetV2", kDeviceTypeCpu),
              MakeFileDatasetOp<Format::kFixedLength, 5, false>);
  r->Register(KernelDef("MatchingFilesDataset", kDeviceTypeCpu),
              MakeKernel<MatchingFilesDatasetOp>);
  r->Register(KernelDef("MatchingFiles", kDeviceTypeCpu), MakeKernel<MatchingFilesOp>);
}

}  // namespace data
}  // namespace weft
