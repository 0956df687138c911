#include "runtime/checkpoint/tensor_bundle.h"

#include <unistd.h>

#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/checkpoint/coding.h"
#include "runtime/checkpoint/crc32c.h"
#include "runtime/checkpoint/file_util.h"
#include "runtime/checkpoint/table.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_shape.h"

namespace weft {
namespace {

bool Checkpointable(DataType dtype) {
  return DataTypeIsSupported(dtype) && dtype != DT_RESOURCE &&
         dtype != DT_VARIANT && dtype != DT_INVALID;
}

// The CRC covers each string length as 4 bytes (8 past 2^32 - 1).
void AppendLength(std::string* out, uint64_t n) {
  coding::PutFixed(out, n, n > 0xffffffffull ? 8 : 4);
}

}  // namespace

std::string DataFilename(absl::string_view prefix, int shard, int num_shards) {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix, shard, num_shards);
}

std::string IndexFilename(absl::string_view prefix) {
  return absl::StrCat(prefix, ".index");
}

BundleWriter::BundleWriter(std::string prefix) : prefix_(std::move(prefix)) {}

BundleWriter::~BundleWriter() {
  if (data_ != nullptr) std::fclose(data_);
  if (!finished_) {
    if (!data_tmp_.empty()) std::remove(data_tmp_.c_str());
  }
}

absl::Status BundleWriter::Open() {
  if (data_ != nullptr || !status_.ok()) return status_;
  status_ = CreateParentDirectories(prefix_);
  if (!status_.ok()) return status_;
  data_tmp_ = TempName(DataFilename(prefix_, 0, 1));
  data_ = std::fopen(data_tmp_.c_str(), "wb");
  if (data_ == nullptr) {
    status_ = FileError("cannot create the checkpoint's data file", data_tmp_);
    data_tmp_.clear();
  }
  return status_;
}

absl::Status BundleWriter::Write(const char* data, size_t n, uint32_t* crc) {
  if (n > 0 && std::fwrite(data, 1, n, data_) != n) {
    status_ = FileError("cannot write", data_tmp_);
    return status_;
  }
  *crc = Crc32cExtend(*crc, data, n);
  offset_ += static_cast<int64_t>(n);
  return absl::OkStatus();
}

absl::Status BundleWriter::Add(absl::string_view name, const Tensor& tensor) {
  WEFT_RETURN_IF_ERROR(status_);
  if (finished_) return absl::FailedPreconditionError("BundleWriter::Add after Finish");
  if (name.empty()) {
    return absl::InvalidArgumentError("a checkpoint tensor needs a name");
  }
  if (entries_.count(std::string(name)) > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", name, "' is saved twice in ", prefix_));
  }
  if (!tensor.IsInitialized() || !Checkpointable(tensor.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", name, "' of dtype ", DataTypeString(tensor.dtype()),
        " cannot be saved in a checkpoint"));
  }
  WEFT_RETURN_IF_ERROR(Open());
  tensorflow::BundleEntryProto entry;
  entry.set_dtype(tensor.dtype());
  tensor.shape().ToProto(entry.mutable_shape());
  entry.set_offset(offset_);
  const int64_t start = offset_;
  uint32_t crc = 0;
  if (tensor.dtype() == DT_STRING) {
    const auto strings = tensor.flat<std::string>();
    std::string lengths, raw_lengths;
    for (const std::string& s : strings) {
      coding::PutVarint(&lengths, s.size());
      AppendLength(&raw_lengths, s.size());
    }
    WEFT_RETURN_IF_ERROR(Write(lengths.data(), lengths.size(), &crc));
    // The CRC stored after the lengths is over their fixed-width forms;
    // the entry's running CRC takes those forms too, then the 4 bytes.
    crc = Crc32c(raw_lengths.data(), raw_lengths.size());
    const uint32_t masked = MaskCrc(crc);
    char m[4];
    for (int i = 0; i < 4; ++i) m[i] = static_cast<char>(masked >> (8 * i));
    WEFT_RETURN_IF_ERROR(Write(m, 4, &crc));
    for (const std::string& s : strings) {
      WEFT_RETURN_IF_ERROR(Write(s.data(), s.size(), &crc));
    }
  } else {
    WEFT_RETURN_IF_ERROR(Write(static_cast<const char*>(tensor.raw_data()),
                               tensor.TotalBytes(), &crc));
  }
  entry.set_size(offset_ - start);
  entry.set_crc32c(MaskCrc(crc));
  entries_[std::string(name)] = std::move(entry);
  return absl::OkStatus();
}

absl::Status BundleWriter::Finish() {
  WEFT_RETURN_IF_ERROR(status_);
  WEFT_RETURN_IF_ERROR(Open());  // an empty checkpoint still has a data file
  const bool closed = std::fclose(data_) == 0;
  data_ = nullptr;
  if (!closed) return status_ = FileError("cannot write", data_tmp_);
  const std::string data_path = DataFilename(prefix_, 0, 1);
  if (std::rename(data_tmp_.c_str(), data_path.c_str()) != 0) {
    return status_ = FileError(absl::StrCat("cannot rename ", data_tmp_, " to"),
                               data_path);
  }
  data_tmp_.clear();
  TableBuilder table;
  tensorflow::BundleHeaderProto header;
  header.set_num_shards(1);
  header.set_endianness(tensorflow::BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(1);
  WEFT_RETURN_IF_ERROR(table.Add("", header.SerializeAsString()));
  for (const auto& [name, entry] : entries_) {  // sorted by name
    WEFT_RETURN_IF_ERROR(table.Add(name, entry.SerializeAsString()));
  }
  status_ = WriteFileAtomically(IndexFilename(prefix_), table.Finish());
  finished_ = status_.ok();
  return status_;
}

absl::StatusOr<std::unique_ptr<BundleReader>> BundleReader::Open(std::string prefix) {
  std::unique_ptr<BundleReader> r(new BundleReader(std::move(prefix)));
  const std::string path = IndexFilename(r->prefix_);
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return FileError("cannot open the checkpoint index", path);
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
    bytes.append(buf, n);
    if (bytes.size() > (size_t{1} << 31)) {
      std::fclose(f);
      return absl::ResourceExhaustedError(
          absl::StrCat(path, " is over 2 GiB: not a checkpoint index"));
    }
  }
  std::fclose(f);
  WEFT_ASSIGN_OR_RETURN(auto table, ReadTable(bytes, path));
  auto header = table.find("");
  if (header == table.end() || !r->header_.ParseFromString(header->second)) {
    return absl::DataLossError(absl::StrCat(path, ": no checkpoint header"));
  }
  if (r->header_.version().min_consumer() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": Checkpoint min consumer version ",
        r->header_.version().min_consumer(), " above current version 1"));
  }
  if (r->header_.endianness() != tensorflow::BundleHeaderProto::LITTLE) {
    return absl::UnimplementedError(
        absl::StrCat(path, ": a big-endian checkpoint cannot be read here"));
  }
  if (r->header_.num_shards() < 1) {
    return absl::DataLossError(absl::StrCat(path, ": num_shards is ",
                                            r->header_.num_shards()));
  }
  table.erase(header);
  for (auto& [key, value] : table) {
    tensorflow::BundleEntryProto entry;
    if (!entry.ParseFromString(value)) {
      return absl::DataLossError(absl::StrCat(
          path, ": the entry of tensor '", absl::CEscape(key), "' does not parse"));
    }
    r->entries_[key] = std::move(entry);
  }
  return r;
}

std::vector<std::string> BundleReader::Names() const {
  std::vector<std::string> out;
  for (const auto& [name, entry] : entries_) out.push_back(name);
  return out;
}

absl::StatusOr<tensorflow::BundleEntryProto> BundleReader::Entry(
    absl::string_view name) const {
  auto it = entries_.find(std::string(name));
  if (it == entries_.end()) {
    return absl::NotFoundError(absl::StrCat(
        "Key ", name, " not found in checkpoint ", prefix_));
  }
  return it->second;
}

absl::StatusOr<Tensor> BundleReader::Read(absl::string_view name, DataType dtype,
                                          Allocator* allocator) const {
  WEFT_ASSIGN_OR_RETURN(tensorflow::BundleEntryProto entry, Entry(name));
  const std::string what = absl::StrCat("tensor '", name, "' of checkpoint ", prefix_);
  if (entry.slices_size() > 0) {
    return absl::UnimplementedError(absl::StrCat(
        what, " is partitioned; reading partitioned tensors is not supported yet"));
  }
  if (entry.dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": expected dtype ", DataTypeString(dtype),
        " does not equal original dtype ", DataTypeString(entry.dtype())));
  }
  if (!Checkpointable(dtype)) {
    return absl::UnimplementedError(absl::StrCat(
        what, ": dtype ", DataTypeString(dtype), " cannot be read"));
  }
  WEFT_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(entry.shape()));
  if (entry.shard_id() < 0 || entry.shard_id() >= header_.num_shards() ||
      entry.offset() < 0 || entry.size() < 0) {
    return absl::DataLossError(absl::StrCat(what, ": bad shard, offset or size"));
  }
  if (dtype != DT_STRING &&
      static_cast<uint64_t>(entry.size()) !=
          static_cast<uint64_t>(shape.num_elements()) * DataTypeSize(dtype)) {
    return absl::DataLossError(absl::StrCat(
        what, ": ", entry.size(), " bytes stored for shape ", shape.DebugString()));
  }
  const std::string path =
      DataFilename(prefix_, entry.shard_id(), header_.num_shards());
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return FileError("cannot open the checkpoint data", path);
  std::string bytes;
  absl::Status s;
  if (std::fseek(f, entry.offset(), SEEK_SET) != 0) {
    s = absl::OutOfRangeError(absl::StrCat(what, ": cannot seek in ", path));
  } else if (entry.size() > (int64_t{1} << 40)) {
    s = absl::ResourceExhaustedError(absl::StrCat(what, ": ", entry.size(), " bytes"));
  } else {
    bytes.resize(entry.size());
    if (std::fread(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
      s = absl::OutOfRangeError(absl::StrCat(
          what, ": Read less bytes than requested from ", path));
    }
  }
  std::fclose(f);
  WEFT_RETURN_IF_ERROR(s);
  uint32_t crc = 0;
  WEFT_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(allocator, dtype, shape));
  if (dtype == DT_STRING) {
    absl::string_view in = bytes;
    std::vector<uint64_t> lengths(shape.num_elements());
    std::string raw_lengths;
    for (uint64_t& n : lengths) {
      if (!coding::GetVarint(&in, &n)) {
        return absl::DataLossError(absl::StrCat(what, ": bad string length"));
      }
      AppendLength(&raw_lengths, n);
    }
    crc = Crc32c(raw_lengths.data(), raw_lengths.size());
    if (in.size() < 4) return absl::DataLossError(absl::StrCat(what, ": truncated"));
    uint32_t masked = 0;
    for (int i = 3; i >= 0; --i) masked = (masked << 8) | static_cast<uint8_t>(in[i]);
    if (UnmaskCrc(masked) != crc) {
      return absl::DataLossError(absl::StrCat(what, ": Checksum does not match"));
    }
    crc = Crc32cExtend(crc, in.data(), 4);
    in.remove_prefix(4);
    auto out = t.flat<std::string>();
    for (size_t i = 0; i < lengths.size(); ++i) {
      if (lengths[i] > in.size()) {
        return absl::DataLossError(absl::StrCat(what, ": truncated string"));
      }
      out[i].assign(in.data(), lengths[i]);
      crc = Crc32cExtend(crc, in.data(), lengths[i]);
      in.remove_prefix(lengths[i]);
    }
  } else {
    crc = Crc32c(bytes.data(), bytes.size());
    CopyFromExternalBytes(bytes.data(), &t);
  }
  if (MaskCrc(crc) != entry.crc32c()) {
    return absl::DataLossError(absl::StrCat(what, ": Checksum does not match"));
  }
  return t;
}

absl::Status MergeBundles(const std::vector<std::string>& sources,
                          const std::string& destination, bool delete_old_dirs,
                          bool allow_missing_files) {
  std::vector<std::unique_ptr<BundleReader>> readers;
  for (const std::string& source : sources) {
    absl::StatusOr<std::unique_ptr<BundleReader>> r = BundleReader::Open(source);
    if (absl::IsNotFound(r.status()) && allow_missing_files) continue;
    if (!r.ok()) return WithContext(r.status(), "MergeV2Checkpoints");
    readers.push_back(*std::move(r));
  }
  if (readers.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "MergeV2Checkpoints: none of the ", sources.size(),
        " checkpoints to merge into ", destination, " exists"));
  }
  WEFT_RETURN_IF_ERROR(CreateParentDirectories(destination));
  int total = 0;
  for (const auto& r : readers) total += r->header().num_shards();
  std::map<std::string, tensorflow::BundleEntryProto> merged;
  int first_shard = 0;
  for (const auto& r : readers) {
    for (const auto& [name, entry] : r->entries()) {
      tensorflow::BundleEntryProto e = entry;
      e.set_shard_id(first_shard + entry.shard_id());
      if (!merged.emplace(name, std::move(e)).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "MergeV2Checkpoints: tensor '", name, "' is in more than one of "
            "the checkpoints merged into ", destination));
      }
    }
    first_shard += r->header().num_shards();
  }
  first_shard = 0;
  for (const auto& r : readers) {
    for (int i = 0; i < r->header().num_shards(); ++i) {
      const std::string from = DataFilename(r->prefix(), i, r->header().num_shards());
      const std::string to = DataFilename(destination, first_shard + i, total);
      if (std::rename(from.c_str(), to.c_str()) != 0) {
        return FileError(absl::StrCat("MergeV2Checkpoints: cannot rename ", from,
                                      " to"), to);
      }
    }
    first_shard += r->header().num_shards();
  }
  TableBuilder table;
  tensorflow::BundleHeaderProto header = readers.front()->header();
  header.set_num_shards(total);
  WEFT_RETURN_IF_ERROR(table.Add("", header.SerializeAsString()));
  for (const auto& [name, entry] : merged) {
    WEFT_RETURN_IF_ERROR(table.Add(name, entry.SerializeAsString()));
  }
  WEFT_RETURN_IF_ERROR(WriteFileAtomically(IndexFilename(destination), table.Finish()));
  for (const auto& r : readers) {
    std::remove(IndexFilename(r->prefix()).c_str());
    if (delete_old_dirs) {
      const size_t slash = r->prefix().rfind('/');
      if (slash != std::string::npos && slash > 0) {
        rmdir(r->prefix().substr(0, slash).c_str());  // only if empty
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace weft
