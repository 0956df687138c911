// TensorFlow 1.x's readers on the CPU: TFRecordReaderV2, TextLineReaderV2,
// FixedLengthRecordReaderV2, WholeFileReaderV2 and IdentityReaderV2, and the
// verbs ReaderReadV2, ReaderReadUpToV2, ReaderNumRecordsProducedV2,
// ReaderNumWorkUnitsCompletedV2, ReaderResetV2, ReaderSerializeStateV2 and
// ReaderRestoreStateV2.
//
// A reader is a shared resource (container, shared_name) holding its
// current work unit (a file name taken from a queue) and counters. A read
// takes the reader's mutex for its whole length, as TensorFlow's does: when
// no work is in progress it dequeues the next file name from the queue
// (waiting for one; OUT_OF_RANGE once the queue is closed and empty), opens
// it through the device's file policy (runtime/core/file_policy.h; a
// server's --file-root) and reads records with ops/data/record_reader, the
// readers of tf.data's file datasets (so the same size bounds and CRC
// checks; fixed-length records, which may overlap here, through its byte
// stream); at the end of a file the work unit is complete and the next read
// moves on. Keys are TensorFlow's: "file:offset" (TFRecord, the record's
// start), "file:line" (text, counting from 1 with the header lines),
// "file:index" (fixed length, from 0), the file name (whole file) and the
// work itself (identity, whose value is the work too). ReadUpTo(n) returns
// up to n records, stopping early at the end of a file once it has some.
//
// Reads block on the queue, so they run on a thread of their own, never on
// the executor's pool (whose threads the enqueuing steps need). A cancelled
// step ends a waiting read CANCELLED.
//
// Reader state: IdentityReader's counters and work serialize to
// TensorFlow's ReaderBaseState proto and restore from it; the other readers
// say UNIMPLEMENTED, as TensorFlow's do.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "ops/cpu/shared_resource.h"
#include "ops/data/record_reader.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/device.h"
#include "runtime/core/file_policy.h"
#include "runtime/core/resource_mgr.h"
#include "runtime/core/status.h"

namespace weft {

// ops/cpu/queue_kernels.cc: one element of the queue input `i` names, or
// the queue's error (OUT_OF_RANGE once closed and empty).
void DequeueOneFromInput(OpKernelContext* c, int i,
                         std::function<void(absl::StatusOr<std::vector<Tensor>>)> done);

namespace {

using data::ByteStream;
using data::Compression;

// One record (or none, at the end of the work unit).
struct Record {
  std::string key, value;
  bool produced = false;
  bool at_end = false;
};

// What a kind of reader does with a work unit.
class ReaderKind {
 public:
  virtual ~ReaderKind() = default;
  // Opens `work` (its path resolved by the policy).
  virtual absl::Status Start(const std::string& work, const FilePolicy& policy) = 0;
  virtual absl::Status Next(const std::string& work, Record* r) = 0;
  virtual void Finish() {}
  // Whether the reader's state can be saved and restored (TensorFlow's
  // IdentityReader only).
  virtual bool HasState() const { return false; }
};

absl::StatusOr<std::unique_ptr<ByteStream>> Open(const std::string& work,
                                                 const FilePolicy& policy,
                                                 Compression compression) {
  WEFT_ASSIGN_OR_RETURN(std::string path, policy.Resolve(work));
  return data::OpenByteStream(path, compression, 0);
}

class TFRecordKind : public ReaderKind {
 public:
  explicit TFRecordKind(Compression z) : compression_(z) {}
  absl::Status Start(const std::string& work, const FilePolicy& policy) override {
    WEFT_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> in, Open(work, policy, compression_));
    records_ = std::make_unique<data::TFRecordReader>(std::move(in));
    offset_ = 0;
    return absl::OkStatus();
  }
  absl::Status Next(const std::string& work, Record* r) override {
    r->key = absl::StrCat(work, ":", offset_);
    WEFT_RETURN_IF_ERROR(records_->Read(&r->value, &r->at_end));
    r->produced = !r->at_end;
    // A record is its length (8 bytes), the length's CRC (4), the data and
    // the data's CRC (4), in the uncompressed stream.
    if (r->produced) offset_ += r->value.size() + 16;
    return absl::OkStatus();
  }
  void Finish() override { records_.reset(); }

 private:
  const Compression compression_;
  std::unique_ptr<data::TFRecordReader> records_;
  uint64_t offset_ = 0;  // of the next record
};

class TextLineKind : public ReaderKind {
 public:
  explicit TextLineKind(int64_t skip) : skip_(skip) {}
  absl::Status Start(const std::string& work, const FilePolicy& policy) override {
    WEFT_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> in,
                          Open(work, policy, Compression::kNone));
    lines_ = std::make_unique<data::LineReader>(std::move(in));
    line_ = 0;
    std::string header;
    bool end = false;
    // A file shorter than its header is read as empty.
    for (; line_ < skip_ && !end; ++line_) WEFT_RETURN_IF_ERROR(lines_->Read(&header, &end));
    ended_ = end;
    return absl::OkStatus();
  }
  absl::Status Next(const std::string& work, Record* r) override {
    if (!ended_) WEFT_RETURN_IF_ERROR(lines_->Read(&r->value, &ended_));
    r->at_end = ended_;
    r->produced = !ended_;
    if (r->produced) r->key = absl::StrCat(work, ":", ++line_);
    return absl::OkStatus();
  }
  void Finish() override { lines_.reset(); }

 private:
  const int64_t skip_;
  std::unique_ptr<data::LineReader> lines_;
  int64_t line_ = 0;
  bool ended_ = false;
};

// Records of record_bytes after the header, each `step` bytes (hop_bytes,
// or record_bytes when 0) after the one before, kept while record_bytes +
// footer_bytes bytes remain from their start: a window of those bytes
// slides over the stream, so nothing past it is read ahead.
class FixedLengthKind : public ReaderKind {
 public:
  FixedLengthKind(int64_t header, int64_t record, int64_t footer, int64_t hop,
                  Compression z)
      : header_(header), record_(record), footer_(footer),
        step_(hop > 0 ? hop : record), compression_(z) {}
  absl::Status Start(const std::string& work, const FilePolicy& policy) override {
    WEFT_ASSIGN_OR_RETURN(in_, Open(work, policy, compression_));
    // A file shorter than its header is an error (OUT_OF_RANGE, as
    // TensorFlow's), not an empty work unit.
    std::string header;
    WEFT_RETURN_IF_ERROR(in_->Read(header_, &header));
    if (header.size() < header_) {
      return absl::OutOfRangeError(absl::StrCat(
          "reached end of file: ", work, " is shorter than its ", header_,
          " header bytes"));
    }
    window_.clear();
    index_ = 0;
    return absl::OkStatus();
  }
  absl::Status Next(const std::string& work, Record* r) override {
    const uint64_t want = index_ == 0 ? record_ + footer_ : step_;
    const size_t before = window_.size();
    WEFT_RETURN_IF_ERROR(in_->Read(want, &window_));
    if (window_.size() - before < want) {
      r->at_end = true;
      return absl::OkStatus();
    }
    if (index_ > 0) window_.erase(0, step_);
    r->value = window_.substr(0, record_);
    r->key = absl::StrCat(work, ":", index_++);
    r->produced = true;
    return absl::OkStatus();
  }
  void Finish() override {
    in_.reset();
    window_.clear();
  }

 private:
  const uint64_t header_, record_, footer_, step_;
  const Compression compression_;
  std::unique_ptr<ByteStream> in_;
  std::string window_;  // the current record and what follows it
  int64_t index_ = 0;
};

class WholeFileKind : public ReaderKind {
 public:
  absl::Status Start(const std::string& work, const FilePolicy& policy) override {
    WEFT_ASSIGN_OR_RETURN(in_, Open(work, policy, Compression::kNone));
    return absl::OkStatus();
  }
  absl::Status Next(const std::string& work, Record* r) override {
    constexpr uint64_t kChunk = 1 << 20;
    for (uint64_t before = 1; r->value.size() != before;) {
      before = r->value.size();
      WEFT_RETURN_IF_ERROR(in_->Read(kChunk, &r->value));
    }
    r->key = work;
    r->produced = r->at_end = true;
    return absl::OkStatus();
  }
  void Finish() override { in_.reset(); }

 private:
  std::unique_ptr<ByteStream> in_;
};

class IdentityKind : public ReaderKind {
 public:
  absl::Status Start(const std::string&, const FilePolicy&) override {
    return absl::OkStatus();
  }
  absl::Status Next(const std::string& work, Record* r) override {
    r->key = r->value = work;
    r->produced = r->at_end = true;
    return absl::OkStatus();
  }
  bool HasState() const override { return true; }
};

// TensorFlow's ReaderBaseState proto, written and read here by hand (fields
// 1 to 3 varints, 4 bytes; zeros left out, as proto3 leaves them).
struct BaseState {
  int64_t started = 0, finished = 0, produced = 0;
  std::string work;

  std::string Serialize() const {
    std::string out;
    auto varint = [&](uint64_t v) {
      for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      out.push_back(static_cast<char>(v));
    };
    const int64_t fields[] = {started, finished, produced};
    for (int i = 0; i < 3; ++i) {
      if (fields[i] == 0) continue;
      varint((i + 1) << 3);
      varint(static_cast<uint64_t>(fields[i]));
    }
    if (!work.empty()) {
      varint((4 << 3) | 2);
      varint(work.size());
      out += work;
    }
    return out;
  }

  // False for bytes that are not such a proto.
  bool Parse(absl::string_view in) {
    size_t pos = 0;
    auto varint = [&](uint64_t* v) {
      *v = 0;
      for (int shift = 0; shift < 64 && pos < in.size(); shift += 7) {
        const uint8_t b = static_cast<uint8_t>(in[pos++]);
        *v |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (b < 0x80) return true;
      }
      return false;
    };
    while (pos < in.size()) {
      uint64_t tag = 0, v = 0;
      if (!varint(&tag)) return false;
      const uint64_t field = tag >> 3, wire = tag & 7;
      if (wire == 0) {
        if (!varint(&v)) return false;
        if (field >= 1 && field <= 3) {
          (field == 1 ? started : field == 2 ? finished : produced) = static_cast<int64_t>(v);
        }
      } else if (wire == 2) {
        if (!varint(&v) || v > in.size() - pos) return false;
        if (field == 4) work = std::string(in.substr(pos, v));
        pos += v;
      } else if (wire == 1 || wire == 5) {
        const size_t n = wire == 1 ? 8 : 4;
        if (n > in.size() - pos) return false;
        pos += n;
      } else {
        return false;
      }
    }
    return true;
  }

  std::string DebugString() const {
    return absl::StrCat("work_started: ", started, " work_finished: ", finished,
                        " num_records_produced: ", produced, " current_work: \"",
                        absl::CEscape(work), "\"");
  }
};

// The shared resource: a kind, its work and counters, behind one mutex.
class Reader : public ResourceBase {
 public:
  Reader(std::string name, std::unique_ptr<ReaderKind> kind)
      : name_(std::move(name)), kind_(std::move(kind)) {}
  std::string DebugString() const override { return absl::StrCat("Reader '", name_, "'"); }

  // Up to `n` records (n < 0: exactly one, as ReaderRead), taking work from
  // the queue input 1 of `c` names.
  absl::Status Read(OpKernelContext* c, int64_t n, std::vector<std::string>* keys,
                    std::vector<std::string>* values) {
    absl::MutexLock lock(&mu_);
    const int64_t want = n < 0 ? 1 : n;
    while (static_cast<int64_t>(keys->size()) < want) {
      if (started_ == finished_) WEFT_RETURN_IF_ERROR(NextWork(c));
      Record r;
      absl::Status s = kind_->Next(work_, &r);
      if (!s.ok()) return s;
      if (r.produced) {
        keys->push_back(std::move(r.key));
        values->push_back(std::move(r.value));
        ++produced_;
      }
      if (r.at_end) {
        kind_->Finish();
        finished_ = started_;
        if (n >= 0 && !keys->empty()) break;
      }
    }
    return absl::OkStatus();
  }

  int64_t produced() {
    absl::MutexLock lock(&mu_);
    return produced_;
  }
  int64_t finished() {
    absl::MutexLock lock(&mu_);
    return finished_;
  }
  void Reset() {
    absl::MutexLock lock(&mu_);
    kind_->Finish();
    started_ = finished_ = produced_ = 0;
    work_.clear();
  }

  // ReaderSerializeState and ReaderRestoreState: TensorFlow's words where
  // the reader has no state to save.
  absl::StatusOr<std::string> SerializeState() {
    absl::MutexLock lock(&mu_);
    if (!kind_->HasState()) return absl::UnimplementedError("Reader SerializeState");
    return BaseState{started_, finished_, produced_, work_}.Serialize();
  }
  absl::Status RestoreState(absl::string_view bytes) {
    absl::MutexLock lock(&mu_);
    if (!kind_->HasState()) return absl::UnimplementedError("Reader RestoreState");
    BaseState state;
    if (!state.Parse(bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Could not parse state for ", DebugString(), ": ", absl::CEscape(bytes)));
    }
    started_ = state.started;
    finished_ = state.finished;
    produced_ = state.produced;
    work_ = state.work;
    if (started_ < 0 || finished_ < 0 || produced_ < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Unexpected negative value when restoring in ", DebugString(), ": ",
          state.DebugString()));
    }
    if (started_ > finished_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Inconsistent work started vs. finished when restoring in ", DebugString(), ": ",
          state.DebugString()));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status NextWork(OpKernelContext* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::Notification dequeued;
    absl::StatusOr<std::vector<Tensor>> element;
    DequeueOneFromInput(c, 1, [&](absl::StatusOr<std::vector<Tensor>> e) {
      element = std::move(e);
      dequeued.Notify();
    });
    dequeued.WaitForNotification();
    if (!element.ok()) return element.status();
    if (element->size() != 1) {
      return absl::InvalidArgumentError("Expected single component queue");
    }
    const Tensor& t = (*element)[0];
    if (t.dtype() != DT_STRING || t.NumElements() != 1) {
      return absl::InvalidArgumentError("Expected queue with single string");
    }
    work_ = t.data<std::string>()[0];
    WEFT_RETURN_IF_ERROR(kind_->Start(work_, c->device()->file_policy()));
    ++started_;
    return absl::OkStatus();
  }

  const std::string name_;
  absl::Mutex mu_;
  std::unique_ptr<ReaderKind> kind_ ABSL_GUARDED_BY(mu_);
  std::string work_ ABSL_GUARDED_BY(mu_);
  int64_t started_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t finished_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t produced_ ABSL_GUARDED_BY(mu_) = 0;
};

// A reader-making op's attrs.
struct KindSpec {
  std::string op;
  Compression compression = Compression::kNone;
  int64_t skip = 0, header = 0, record = 0, footer = 0, hop = 0;
};

absl::StatusOr<KindSpec> ParseKind(OpKernelConstruction* c) {
  KindSpec k;
  k.op = c->def().op();
  auto compression = [&](const char* attr) -> absl::Status {
    std::string type;
    WEFT_RETURN_IF_ERROR(c->GetAttr(attr, &type));
    WEFT_ASSIGN_OR_RETURN(k.compression, data::ParseCompression(type));
    return absl::OkStatus();
  };
  if (k.op == "TFRecordReaderV2") WEFT_RETURN_IF_ERROR(compression("compression_type"));
  if (k.op == "TextLineReaderV2") WEFT_RETURN_IF_ERROR(c->GetAttr("skip_header_lines", &k.skip));
  if (k.op == "FixedLengthRecordReaderV2") {
    WEFT_RETURN_IF_ERROR(c->GetAttr("header_bytes", &k.header));
    WEFT_RETURN_IF_ERROR(c->GetAttr("record_bytes", &k.record));
    WEFT_RETURN_IF_ERROR(c->GetAttr("footer_bytes", &k.footer));
    WEFT_RETURN_IF_ERROR(c->GetAttr("hop_bytes", &k.hop));
    for (const auto& [name, v] : {std::pair<const char*, int64_t>{"header_bytes", k.header},
                                  {"record_bytes", k.record},
                                  {"footer_bytes", k.footer},
                                  {"hop_bytes", k.hop}}) {
      if (v < 0) {
        return absl::InvalidArgumentError(absl::StrCat(name, " must be >= 0 not ", v));
      }
    }
    if (k.record == 0 && k.hop == 0) {  // endless empty records in TensorFlow
      return absl::InvalidArgumentError(absl::StrCat(
          c->def().name(), ": record_bytes and hop_bytes are both 0"));
    }
    WEFT_RETURN_IF_ERROR(compression("encoding"));
  }
  return k;
}

std::unique_ptr<ReaderKind> MakeKind(const KindSpec& k) {
  if (k.op == "TFRecordReaderV2") return std::make_unique<TFRecordKind>(k.compression);
  if (k.op == "TextLineReaderV2") return std::make_unique<TextLineKind>(k.skip);
  if (k.op == "FixedLengthRecordReaderV2") {
    return std::make_unique<FixedLengthKind>(k.header, k.record, k.footer, k.hop,
                                             k.compression);
  }
  if (k.op == "WholeFileReaderV2") return std::make_unique<WholeFileKind>();
  return std::make_unique<IdentityKind>();
}

// The reader-making ops: a resource handle to the (shared) reader, made on
// the first run.
class ReaderOp : public OpKernel {
 public:
  explicit ReaderOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::StatusOr<KindSpec> spec = ParseKind(c);
    c->SetStatus(spec.status());
    if (spec.ok()) spec_ = *std::move(spec);
    handle_ = SharedResourceName(c, DT_INVALID);
  }

  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<Reader>> r = c->resource_manager()->LookupOrCreate<Reader>(
        handle_.container, handle_.name,
        [&] { return std::make_shared<Reader>(handle_.name, MakeKind(spec_)); });
    OP_REQUIRES_OK(c, r.status());
    c->set_output(0, ResourceHandleTensor(handle_));
  }

 private:
  KindSpec spec_;
  ResourceHandle handle_;
};

absl::StatusOr<std::shared_ptr<Reader>> LookupReader(OpKernelContext* c) {
  return LookupSharedResource<Reader>(c, "reader", "a ReaderV2 op");
}

// ReaderReadV2 (scalar outputs) and ReaderReadUpToV2 (vectors).
class ReaderReadOp : public OpKernel {
 public:
  ReaderReadOp(OpKernelConstruction* c, bool up_to) : OpKernel(c), up_to_(up_to) {}
  bool IsAsync() const override { return true; }
  void Compute(OpKernelContext* c) override {
    c->SetStatus(absl::InternalError(absl::StrCat(name(), " is asynchronous")));
  }
  void ComputeAsync(OpKernelContext* c, std::function<void()> done) override {
    absl::StatusOr<std::shared_ptr<Reader>> reader = LookupReader(c);
    int64_t n = -1;
    if (reader.ok() && up_to_) {
      const Tensor& t = c->input(2);
      if (t.dims() != 0 || t.scalar<int64_t>() < 0) {
        reader = absl::InvalidArgumentError(absl::StrCat(
            "num_records must be a non-negative scalar, got ", t.DebugString()));
      } else {
        n = t.scalar<int64_t>();
      }
    }
    if (!reader.ok()) {
      c->SetStatus(reader.status());
      done();
      return;
    }
    std::thread([this, c, n, reader = *std::move(reader), done = std::move(done)] {
      std::vector<std::string> keys, values;
      absl::Status s = reader->Read(c, n, &keys, &values);
      if (s.ok()) s = Output(c, keys, values);
      c->SetStatus(s);
      done();
    }).detach();
  }

 private:
  absl::Status Output(OpKernelContext* c, std::vector<std::string>& keys,
                      std::vector<std::string>& values) const {
    const TensorShape shape =
        up_to_ ? TensorShape({static_cast<int64_t>(keys.size())}) : TensorShape();
    for (int i = 0; i < 2; ++i) {
      std::vector<std::string>& from = i == 0 ? keys : values;
      Tensor* out = nullptr;
      WEFT_RETURN_IF_ERROR(c->allocate_output(i, shape, &out));
      for (size_t k = 0; k < from.size(); ++k) out->data<std::string>()[k] = std::move(from[k]);
    }
    return absl::OkStatus();
  }

  const bool up_to_;
};

// The counters, Reset, and the state verbs.
class ReaderVerbOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<Reader>> reader = LookupReader(c);
    OP_REQUIRES_OK(c, reader.status());
    const std::string& op = type_string();
    if (op == "ReaderResetV2") {
      (*reader)->Reset();
    } else if (op == "ReaderNumRecordsProducedV2" || op == "ReaderNumWorkUnitsCompletedV2") {
      Tensor* out = nullptr;
      OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &out));
      out->scalar<int64_t>() = op == "ReaderNumRecordsProducedV2" ? (*reader)->produced()
                                                                  : (*reader)->finished();
    } else if (op == "ReaderSerializeStateV2") {
      absl::StatusOr<std::string> state = (*reader)->SerializeState();
      OP_REQUIRES_OK(c, state.status());
      Tensor* out = nullptr;
      OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &out));
      out->scalar<std::string>() = *std::move(state);
    } else {
      const Tensor& state = c->input(1);
      OP_REQUIRES(c, state.dims() == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Reader state must be a scalar, got shape ", state.shape().DebugString())));
      OP_REQUIRES_OK(c, (*reader)->RestoreState(state.scalar<std::string>()));
    }
  }
};

}  // namespace

void RegisterReaderKernels(KernelRegistry* r) {
  for (const char* op : {"TFRecordReaderV2", "TextLineReaderV2", "FixedLengthRecordReaderV2",
                         "WholeFileReaderV2", "IdentityReaderV2"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<ReaderOp>);
  }
  r->Register(KernelDef("ReaderReadV2", kDeviceTypeCpu),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<ReaderReadOp>(c, false);
              });
  r->Register(KernelDef("ReaderReadUpToV2", kDeviceTypeCpu),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<ReaderReadOp>(c, true);
              });
  for (const char* op : {"ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2",
                         "ReaderResetV2", "ReaderSerializeStateV2", "ReaderRestoreStateV2"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<ReaderVerbOp>);
  }
}

}  // namespace weft
