#include "runtime/checkpoint/table.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "runtime/checkpoint/coding.h"
#include "runtime/checkpoint/crc32c.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

constexpr uint64_t kMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooterSize = 48;
constexpr size_t kTrailerSize = 5;  // type byte + masked CRC
constexpr size_t kBlockCut = 262144;

void PutFixed32(std::string* out, uint32_t v) { coding::PutFixed(out, v, 4); }
void PutFixed64(std::string* out, uint64_t v) { coding::PutFixed(out, v, 8); }
uint32_t Fixed32(const char* p) { return static_cast<uint32_t>(coding::Fixed(p, 4)); }
uint64_t Fixed64(const char* p) { return coding::Fixed(p, 8); }
using coding::GetVarint;
using coding::PutVarint;

absl::Status Corrupt(absl::string_view what, absl::string_view why) {
  return absl::DataLossError(absl::StrCat(what, ": ", why));
}

// The contents of the block at `handle` (checksum verified).
absl::StatusOr<absl::string_view> ReadBlock(absl::string_view file,
                                            absl::string_view* handle,
                                            absl::string_view what) {
  uint64_t offset, size;
  if (!GetVarint(handle, &offset) || !GetVarint(handle, &size)) {
    return Corrupt(what, "bad block handle");
  }
  if (offset > file.size() || size > file.size() - offset ||
      file.size() - offset - size < kTrailerSize) {
    return Corrupt(what, absl::StrCat("block at ", offset, " of ", size,
                                      " bytes is past the end of the file"));
  }
  const char* p = file.data() + offset;
  const uint32_t want = UnmaskCrc(Fixed32(p + size + 1));
  if (Crc32c(p, size + 1) != want) return Corrupt(what, "block checksum mismatch");
  if (p[size] != 0) {
    return Corrupt(what, absl::StrCat("block compression type ",
                                      static_cast<int>(p[size]),
                                      " is not supported (only uncompressed)"));
  }
  return absl::string_view(p, size);
}

// Calls `entry(key, value)` for each record of a block.
template <typename Fn>
absl::Status ParseBlock(absl::string_view block, absl::string_view what,
                        Fn entry) {
  if (block.size() < 4) return Corrupt(what, "block too short");
  const uint32_t restarts = Fixed32(block.data() + block.size() - 4);
  if (restarts == 0 || restarts > (block.size() - 4) / 4) {
    return Corrupt(what, "bad restart count in block");
  }
  absl::string_view in = block.substr(0, block.size() - 4 - 4 * size_t{restarts});
  std::string key;
  while (!in.empty()) {
    uint64_t shared, non_shared, value_len;
    if (!GetVarint(&in, &shared) || !GetVarint(&in, &non_shared) ||
        !GetVarint(&in, &value_len) || shared > key.size() ||
        non_shared > in.size() || value_len > in.size() - non_shared) {
      return Corrupt(what, "bad entry in block");
    }
    key.resize(shared);
    key.append(in.data(), non_shared);
    in.remove_prefix(non_shared);
    WEFT_RETURN_IF_ERROR(entry(key, in.substr(0, value_len)));
    in.remove_prefix(value_len);
  }
  return absl::OkStatus();
}

}  // namespace

void TableBuilder::Block::Add(absl::string_view key, absl::string_view value) {
  size_t shared = 0;
  if (since_restart_ < interval_) {
    const size_t n = std::min(last_key_.size(), key.size());
    while (shared < n && last_key_[shared] == key[shared]) ++shared;
  } else {
    restarts_.push_back(static_cast<uint32_t>(buf_.size()));
    since_restart_ = 0;
  }
  PutVarint(&buf_, shared);
  PutVarint(&buf_, key.size() - shared);
  PutVarint(&buf_, value.size());
  buf_.append(key.data() + shared, key.size() - shared);
  buf_.append(value.data(), value.size());
  last_key_.assign(key.data(), key.size());
  ++since_restart_;
  ++count_;
}

std::string TableBuilder::Block::Finish() {
  std::string out = std::move(buf_);
  for (uint32_t r : restarts_) PutFixed32(&out, r);
  PutFixed32(&out, static_cast<uint32_t>(restarts_.size()));
  buf_.clear();
  last_key_.clear();
  restarts_.assign(1, 0);
  count_ = since_restart_ = 0;
  return out;
}

std::string TableBuilder::WriteBlock(const std::string& contents) {
  std::string handle;
  PutVarint(&handle, out_.size());
  PutVarint(&handle, contents.size());
  out_.append(contents);
  out_.push_back(0);  // no compression
  PutFixed32(&out_, MaskCrc(Crc32c(out_.data() + out_.size() - contents.size() - 1,
                                   contents.size() + 1)));
  return handle;
}

void TableBuilder::FlushData() {
  if (data_.empty()) return;
  // The block's last key separates it from the next block's keys.
  const std::string handle = WriteBlock(data_.Finish());
  index_.Add(last_key_, handle);
}

absl::Status TableBuilder::Add(absl::string_view key, absl::string_view value) {
  if (has_key_ && !(absl::string_view(last_key_) < key)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "table keys must increase: '", absl::CEscape(key), "' after '",
        absl::CEscape(last_key_), "'"));
  }
  data_.Add(key, value);
  last_key_.assign(key.data(), key.size());
  has_key_ = true;
  if (data_.EstimatedSize() >= kBlockCut) FlushData();
  return absl::OkStatus();
}

std::string TableBuilder::Finish() {
  FlushData();
  const std::string metaindex = WriteBlock(Block(16).Finish());
  const std::string index = WriteBlock(index_.Finish());
  std::string footer = metaindex + index;
  footer.resize(kFooterSize - 8, '\0');
  PutFixed64(&footer, kMagic);
  out_.append(footer);
  return std::move(out_);
}

absl::StatusOr<std::map<std::string, std::string>> ReadTable(
    absl::string_view file, absl::string_view what) {
  if (file.size() < kFooterSize) {
    return Corrupt(what, "file is too short to be an sstable");
  }
  const char* footer = file.data() + file.size() - kFooterSize;
  if (Fixed64(footer + kFooterSize - 8) != kMagic) {
    return Corrupt(what, "not an sstable (bad magic number)");
  }
  absl::string_view handles(footer, kFooterSize - 8);
  uint64_t skip;
  if (!GetVarint(&handles, &skip) || !GetVarint(&handles, &skip)) {
    return Corrupt(what, "bad metaindex handle");
  }
  WEFT_ASSIGN_OR_RETURN(absl::string_view index, ReadBlock(file, &handles, what));
  std::map<std::string, std::string> out;
  WEFT_RETURN_IF_ERROR(ParseBlock(
      index, what, [&](const std::string&, absl::string_view handle) {
        absl::StatusOr<absl::string_view> block = ReadBlock(file, &handle, what);
        if (!block.ok()) return block.status();
        return ParseBlock(*block, what,
                          [&](const std::string& key, absl::string_view value) {
                            out[key] = std::string(value);
                            return absl::OkStatus();
                          });
      }));
  return out;
}

}  // namespace weft
