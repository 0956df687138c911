#include "ops/data/record_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/checkpoint/crc32c.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {
namespace {

// Reads grow their buffers by at most this much at a time, so a length
// the stream cannot back costs no more memory than the stream holds.
constexpr uint64_t kChunk = 1 << 20;
constexpr int64_t kDefaultBuffer = 256 << 10;
constexpr int64_t kMaxBuffer = 16 << 20;

absl::Status ErrnoStatus(int err, const std::string& path) {
  const std::string msg = absl::StrCat(path, "; ", std::strerror(err));
  switch (err) {
    case ENOENT: return absl::NotFoundError(msg);
    case EACCES: return absl::PermissionDeniedError(msg);
    case EISDIR: return absl::FailedPreconditionError(msg);
    default: return absl::UnknownError(msg);
  }
}

class FileStream : public ByteStream {
 public:
  FileStream(std::FILE* f, std::string path, size_t buffer)
      : f_(f), path_(std::move(path)), buffer_(buffer) {
    std::setvbuf(f_, nullptr, _IOFBF, buffer_);
  }
  ~FileStream() override { std::fclose(f_); }

  absl::Status Read(uint64_t n, std::string* out) override {
    while (n > 0) {
      const size_t want = static_cast<size_t>(std::min(n, kChunk));
      const size_t old = out->size();
      out->resize(old + want);
      const size_t got = std::fread(&(*out)[old], 1, want, f_);
      out->resize(old + got);
      position_ += got;
      n -= got;
      if (got < want) {
        if (std::ferror(f_)) return ErrnoStatus(errno, path_);
        break;
      }
    }
    return absl::OkStatus();
  }
  uint64_t position() const override { return position_; }

 private:
  std::FILE* const f_;
  const std::string path_;
  const size_t buffer_;
  uint64_t position_ = 0;
};

// inflate over another stream. Concatenated gzip members are read as one
// stream, as gzip(1) does.
class InflateStream : public ByteStream {
 public:
  InflateStream(std::unique_ptr<ByteStream> in, Compression c, std::string path,
                size_t buffer)
      : in_(std::move(in)), path_(std::move(path)), buffer_(buffer) {
    std::memset(&z_, 0, sizeof(z_));
    init_ = inflateInit2(&z_, c == Compression::kGzip ? MAX_WBITS + 16 : MAX_WBITS);
  }
  ~InflateStream() override {
    if (init_ == Z_OK) inflateEnd(&z_);
  }

  absl::Status Read(uint64_t n, std::string* out) override {
    if (init_ != Z_OK) {
      return absl::InternalError(absl::StrCat(path_, ": inflateInit2 failed"));
    }
    while (n > 0 && !done_) {
      if (z_.avail_in == 0) {
        input_.clear();
        WEFT_RETURN_IF_ERROR(in_->Read(buffer_, &input_));
        if (input_.empty()) {
          if (!ended_) {
            return absl::DataLossError(absl::StrCat(
                path_, ": unexpected end of compressed stream"));
          }
          done_ = true;
          break;
        }
        z_.next_in = reinterpret_cast<Bytef*>(input_.data());
        z_.avail_in = static_cast<uInt>(input_.size());
      }
      if (ended_) {  // bytes after a member: the next gzip member
        inflateReset(&z_);
        ended_ = false;
      }
      const size_t want = static_cast<size_t>(std::min(n, kChunk));
      const size_t old = out->size();
      out->resize(old + want);
      z_.next_out = reinterpret_cast<Bytef*>(&(*out)[old]);
      z_.avail_out = static_cast<uInt>(want);
      const int rc = inflate(&z_, Z_NO_FLUSH);
      const size_t got = want - z_.avail_out;
      out->resize(old + got);
      position_ += got;
      n -= got;
      if (rc == Z_STREAM_END) {
        ended_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return absl::DataLossError(absl::StrCat(
            "inflate() failed with error ", rc, ": ",
            z_.msg != nullptr ? z_.msg : "corrupt compressed data", " (", path_, ")"));
      }
    }
    return absl::OkStatus();
  }
  uint64_t position() const override { return position_; }

 private:
  std::unique_ptr<ByteStream> in_;
  const std::string path_;
  const size_t buffer_;
  z_stream z_;
  int init_;
  std::string input_;
  bool ended_ = false;  // inflate reported the end of a member
  bool done_ = false;
  uint64_t position_ = 0;
};

// Reads and drops `n` bytes (fewer at the end of the stream).
absl::Status Skip(ByteStream* in, uint64_t n) {
  std::string chunk;
  while (n > 0) {
    chunk.clear();
    const uint64_t want = std::min(n, kChunk);
    WEFT_RETURN_IF_ERROR(in->Read(want, &chunk));
    n -= chunk.size();
    if (chunk.size() < want) break;
  }
  return absl::OkStatus();
}

uint64_t DecodeFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}
uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace

absl::StatusOr<Compression> ParseCompression(absl::string_view type) {
  if (type.empty()) return Compression::kNone;
  if (type == "ZLIB") return Compression::kZlib;
  if (type == "GZIP") return Compression::kGzip;
  return absl::InvalidArgumentError(
      absl::StrCat("Unsupported compression_type: ", type, "."));
}

absl::StatusOr<std::unique_ptr<ByteStream>> OpenByteStream(
    const std::string& path, Compression compression, int64_t buffer_size,
    uint64_t offset) {
  const size_t buffer = static_cast<size_t>(
      buffer_size <= 0 ? kDefaultBuffer : std::min(buffer_size, kMaxBuffer));
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return ErrnoStatus(errno, path);
  const bool seek = compression == Compression::kNone && offset > 0;
  if (seek && fseeko(f, static_cast<off_t>(offset), SEEK_SET) != 0) {
    const int err = errno;
    std::fclose(f);
    return ErrnoStatus(err, path);
  }
  std::unique_ptr<ByteStream> file = std::make_unique<FileStream>(f, path, buffer);
  if (compression == Compression::kNone) return file;
  std::unique_ptr<ByteStream> inflated =
      std::make_unique<InflateStream>(std::move(file), compression, path, buffer);
  WEFT_RETURN_IF_ERROR(Skip(inflated.get(), offset));
  return inflated;
}

absl::Status TFRecordReader::ReadChecked(uint64_t n, std::string* out, bool* end) {
  out->clear();
  const uint64_t at = offset_;
  WEFT_RETURN_IF_ERROR(in_->Read(n + 4, out));
  if (out->size() != n + 4) {
    if (out->empty() && end != nullptr) {
      *end = true;
      return absl::OkStatus();
    }
    return absl::DataLossError(absl::StrCat("truncated record at ", at));
  }
  const uint32_t stored = DecodeFixed32(out->data() + n);
  if (UnmaskCrc(stored) != Crc32c(out->data(), n)) {
    return absl::DataLossError(absl::StrCat(
        "corrupted record at ", at, at == 0 ? " (Is this even a TFRecord file?)" : ""));
  }
  out->resize(n);
  offset_ += n + 4;
  return absl::OkStatus();
}

absl::Status TFRecordReader::Read(std::string* record, bool* end) {
  *end = false;
  std::string header;
  WEFT_RETURN_IF_ERROR(ReadChecked(8, &header, end));
  if (*end) return absl::OkStatus();
  const uint64_t length = DecodeFixed64(header.data());
  const uint64_t start = offset_ - 12;  // a truncated record is named by its start
  if (length > UINT64_MAX - 4) {
    return absl::DataLossError(absl::StrCat("corrupted record at ", offset_));
  }
  absl::Status s = ReadChecked(length, record, nullptr);
  if (s.code() == absl::StatusCode::kDataLoss &&
      absl::StartsWith(s.message(), "truncated")) {
    return absl::DataLossError(absl::StrCat("truncated record at ", start));
  }
  return s;
}

absl::Status LineReader::Read(std::string* line, bool* end) {
  *end = false;
  line->clear();
  while (true) {
    const size_t nl = buf_.find('\n', pos_);
    if (nl != std::string::npos) {
      line->assign(buf_, pos_, nl - pos_);
      pos_ = nl + 1;
      break;
    }
    if (eof_) {
      if (pos_ >= buf_.size()) {
        *end = true;
        return absl::OkStatus();
      }
      line->assign(buf_, pos_, std::string::npos);
      pos_ = buf_.size();
      break;
    }
    buf_.erase(0, pos_);
    pos_ = 0;
    const size_t before = buf_.size();
    WEFT_RETURN_IF_ERROR(in_->Read(kChunk, &buf_));
    eof_ = buf_.size() - before < kChunk;
  }
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return absl::OkStatus();
}

absl::Status FixedLengthReader::Read(std::string* record, bool* end) {
  *end = false;
  if (!started_) {
    started_ = true;
    WEFT_RETURN_IF_ERROR(Skip(in_.get(), header_));
  }
  const uint64_t need = record_ + footer_;
  if (ahead_.size() < need) {
    WEFT_RETURN_IF_ERROR(in_->Read(need - ahead_.size(), &ahead_));
  }
  if (ahead_.size() < need) {
    *end = true;
    return absl::OkStatus();
  }
  record->assign(ahead_, 0, record_);
  ahead_.erase(0, record_);
  return absl::OkStatus();
}

}  // namespace data
}  // namespace weft
