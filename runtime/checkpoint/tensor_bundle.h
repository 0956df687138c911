// TensorFlow's V2 checkpoint, one shard: <prefix>.data-00000-of-00001 with
// the tensors' bytes back to back, and <prefix>.index, a table (table.h)
// mapping "" to a BundleHeaderProto and each tensor's name to a
// BundleEntryProto (dtype, shape, offset, size, masked CRC32C). What
// TensorFlow's SaveV2 writes and RestoreV2 and tf.train.load_checkpoint
// read (doc/checkpoint_format.md).
//
//   BundleWriter w("/ckpt/model-100");
//   WEFT_RETURN_IF_ERROR(w.Add("dense/kernel", kernel));
//   WEFT_RETURN_IF_ERROR(w.Finish());
//
//   WEFT_ASSIGN_OR_RETURN(auto r, BundleReader::Open("/ckpt/model-100"));
//   WEFT_ASSIGN_OR_RETURN(Tensor k, r->Read("dense/kernel", DT_FLOAT));
//
// Writing is atomic per file, as TensorFlow's: each file is written under a
// temporary name (<name>.tempstate<random>) and renamed, the data file
// before the index, so a crash leaves the previous checkpoint of the prefix
// whole (a reader needs the index, and an index is only ever complete). A
// failed writer removes its temporary files.
//
// Reading trusts nothing: the index's table checksums, each tensor's CRC
// and every size and offset are checked (DATA_LOSS "Checksum does not
// match", OUT_OF_RANGE for a truncated data file, NOT_FOUND for a missing
// file or name), each error naming the file and tensor. Partitioned
// (sliced) tensors are not read yet: UNIMPLEMENTED naming the tensor.
//
// Thread safety: a BundleWriter is used by one thread; a BundleReader's
// const methods may be called concurrently.
#ifndef WEFT_RUNTIME_CHECKPOINT_TENSOR_BUNDLE_H_
#define WEFT_RUNTIME_CHECKPOINT_TENSOR_BUNDLE_H_

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/tensor_bundle.pb.h"
#include "runtime/core/allocator.h"
#include "runtime/core/tensor.h"

namespace weft {

// "<prefix>.data-00003-of-00008", "<prefix>.index".
std::string DataFilename(absl::string_view prefix, int shard, int num_shards);
std::string IndexFilename(absl::string_view prefix);

class BundleWriter {
 public:
  explicit BundleWriter(std::string prefix);
  ~BundleWriter();  // removes the temporary files unless Finish succeeded
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // Appends a tensor's bytes; INVALID_ARGUMENT for a repeated name or a
  // dtype a checkpoint cannot hold (resources, variants).
  absl::Status Add(absl::string_view name, const Tensor& tensor);
  // Writes the index and renames both files into place.
  absl::Status Finish();

 private:
  absl::Status Open();
  absl::Status Write(const char* data, size_t n, uint32_t* crc);

  const std::string prefix_;
  std::string data_tmp_;  // while the data file is being written
  FILE* data_ = nullptr;
  int64_t offset_ = 0;
  std::map<std::string, tensorflow::BundleEntryProto> entries_;
  absl::Status status_;
  bool finished_ = false;
};

class BundleReader {
 public:
  static absl::StatusOr<std::unique_ptr<BundleReader>> Open(std::string prefix);

  // The tensor names, sorted.
  std::vector<std::string> Names() const;
  // NOT_FOUND "Key <name> not found in checkpoint".
  absl::StatusOr<tensorflow::BundleEntryProto> Entry(absl::string_view name) const;
  // The tensor, checked against `dtype` (INVALID_ARGUMENT "expected dtype
  // float does not equal original dtype int64") and its CRC.
  absl::StatusOr<Tensor> Read(absl::string_view name, DataType dtype,
                              Allocator* allocator = CpuAllocator()) const;

  const std::string& prefix() const { return prefix_; }
  const tensorflow::BundleHeaderProto& header() const { return header_; }
  const std::map<std::string, tensorflow::BundleEntryProto>& entries() const {
    return entries_;
  }

 private:
  explicit BundleReader(std::string prefix) : prefix_(std::move(prefix)) {}
  const std::string prefix_;
  tensorflow::BundleHeaderProto header_;
  std::map<std::string, tensorflow::BundleEntryProto> entries_;
};

// MergeV2Checkpoints: the checkpoints at `sources` (each written by its own
// BundleWriter, e.g. one per ps task) become one at `destination`: their
// data files renamed to destination's, numbered in the order given, and
// one index written. A name in two sources is INVALID_ARGUMENT; a missing
// source is NOT_FOUND unless allow_missing_files (at least one must
// exist). The sources' indexes are deleted, and their directories too when
// delete_old_dirs and empty. A failure part-way leaves the sources' data
// files wherever the renames had got to, and no destination index.
absl::Status MergeBundles(const std::vector<std::string>& sources,
                          const std::string& destination, bool delete_old_dirs,
                          bool allow_missing_files);

}  // namespace weft

#endif  // WEFT_RUNTIME_CHECKPOINT_TENSOR_BUNDLE_H_
