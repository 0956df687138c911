// The sorted key/value table of a V2 checkpoint's .index file: LevelDB's
// table format without compression (doc/checkpoint_format.md, "The
// index"): prefix-compressed data
// blocks of up to 256 KiB, an empty metaindex block, an index block, a
// 48-byte footer; every block followed by a type byte and a masked CRC32C.
//
//   TableBuilder b;
//   WEFT_RETURN_IF_ERROR(b.Add("", header));    // keys in increasing order
//   WEFT_RETURN_IF_ERROR(b.Add("w", entry));
//   std::string file = b.Finish();
//
//   WEFT_ASSIGN_OR_RETURN(auto entries, ReadTable(file, "ckpt.index"));
//
// An index holds one small record per tensor, so both sides work on the
// whole file in memory. ReadTable takes untrusted bytes: every length and
// offset is checked, and a bad file is DATA_LOSS naming `what` (TensorFlow's
// wording: "not an sstable (bad magic number)", "block checksum mismatch").
// Thread safety: a TableBuilder is used by one thread; ReadTable is pure.
#ifndef WEFT_RUNTIME_CHECKPOINT_TABLE_H_
#define WEFT_RUNTIME_CHECKPOINT_TABLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace weft {

class TableBuilder {
 public:
  // INVALID_ARGUMENT unless `key` sorts (unsigned bytewise) after the last.
  absl::Status Add(absl::string_view key, absl::string_view value);
  // The whole file. The builder is spent afterwards.
  std::string Finish();

 private:
  class Block {
   public:
    explicit Block(int restart_interval) : interval_(restart_interval) {}
    void Add(absl::string_view key, absl::string_view value);
    size_t EstimatedSize() const { return buf_.size() + 4 * restarts_.size() + 4; }
    bool empty() const { return count_ == 0; }
    // Contents with the restart array; resets the block.
    std::string Finish();

   private:
    int interval_;
    std::string buf_, last_key_;
    std::vector<uint32_t> restarts_{0};
    int count_ = 0, since_restart_ = 0;
  };
  // Appends a block and its trailer; the handle (offset, size) encoded.
  std::string WriteBlock(const std::string& contents);
  void FlushData();

  std::string out_;
  std::string last_key_;
  bool has_key_ = false;
  Block data_{16};
  Block index_{1};
};

// Every key and value of a table, in key order.
absl::StatusOr<std::map<std::string, std::string>> ReadTable(
    absl::string_view file, absl::string_view what);

}  // namespace weft

#endif  // WEFT_RUNTIME_CHECKPOINT_TABLE_H_
