// Reading the records of files: a byte stream over a file (optionally
// through zlib's inflate, for GZIP and ZLIB files) and the three record
// formats of tf.data's file datasets on top of it.
//
//   WEFT_ASSIGN_OR_RETURN(Compression z, ParseCompression(type_string));
//   WEFT_ASSIGN_OR_RETURN(std::unique_ptr<ByteStream> in,
//                         OpenByteStream(resolved_path, z, buffer_size));
//   TFRecordReader records(std::move(in));
//   std::string record; bool end;
//   WEFT_RETURN_IF_ERROR(records.Read(&record, &end));
//
// Bounds: nothing is allocated ahead of the bytes actually read. A record
// length field is trusted only as far as the stream delivers bytes (reads
// grow their buffer chunk by chunk), so a corrupt or hostile length ends in
// DATA_LOSS ("truncated record at N") after at most the file's size, never
// in a huge allocation. TFRecord lengths and data are checked against their
// masked CRC32C as TensorFlow does ("corrupted record at N", N the offset of
// the checked bytes in the uncompressed stream).
//
// Thread safety: none; one reader per iterator.
#ifndef WEFT_OPS_DATA_RECORD_READER_H_
#define WEFT_OPS_DATA_RECORD_READER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace weft {
namespace data {

enum class Compression { kNone, kZlib, kGzip };

// "", "ZLIB" or "GZIP"; INVALID_ARGUMENT otherwise.
absl::StatusOr<Compression> ParseCompression(absl::string_view type);

// Uncompressed bytes in order.
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Appends up to `n` bytes to *out; fewer only at the end of the stream.
  virtual absl::Status Read(uint64_t n, std::string* out) = 0;
  // Uncompressed bytes delivered so far.
  virtual uint64_t position() const = 0;
};

// `path` (already resolved by the file policy) opened for reading, from byte
// `offset` of its uncompressed bytes (skipped through inflate when
// compressed), through inflate
// unless `compression` is kNone. `buffer_size` bytes of read buffer (0: a
// default; capped). NOT_FOUND when it cannot be opened, with TensorFlow's
// "<path>; No such file or directory" wording.
absl::StatusOr<std::unique_ptr<ByteStream>> OpenByteStream(
    const std::string& path, Compression compression, int64_t buffer_size,
    uint64_t offset = 0);

// The records of one stream, in order.
class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // The next record, or *end at the end of the stream.
  virtual absl::Status Read(std::string* record, bool* end) = 0;
};

// TFRecord: [length u64][masked crc32c of length u32][data][masked crc32c of
// data u32], little-endian.
class TFRecordReader : public RecordSource {
 public:
  explicit TFRecordReader(std::unique_ptr<ByteStream> in, uint64_t offset = 0)
      : in_(std::move(in)), offset_(offset) {}
  // The next record, or *end at a clean end of the stream.
  absl::Status Read(std::string* record, bool* end) override;

 private:
  absl::Status ReadChecked(uint64_t n, std::string* out, bool* end);
  std::unique_ptr<ByteStream> in_;
  uint64_t offset_;  // of the next unread byte, as TensorFlow reports it
};

// Lines ending in '\n' (a '\r' before it dropped); a last line without
// one counts too.
class LineReader : public RecordSource {
 public:
  explicit LineReader(std::unique_ptr<ByteStream> in) : in_(std::move(in)) {}
  absl::Status Read(std::string* line, bool* end) override;

 private:
  std::unique_ptr<ByteStream> in_;
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
};

// Records of `record_bytes` after `header_bytes`, the last `footer_bytes`
// of the stream excluded; a trailing partial record is dropped.
class FixedLengthReader : public RecordSource {
 public:
  FixedLengthReader(std::unique_ptr<ByteStream> in, uint64_t header_bytes,
                    uint64_t record_bytes, uint64_t footer_bytes)
      : in_(std::move(in)), header_(header_bytes), record_(record_bytes),
        footer_(footer_bytes) {}
  absl::Status Read(std::string* record, bool* end) override;

 private:
  std::unique_ptr<ByteStream> in_;
  const uint64_t header_, record_, footer_;
  bool started_ = false;
  std::string ahead_;  // read but not yet delivered (holds the footer-to-be)
};

}  // namespace data
}  // namespace weft

#endif  // WEFT_OPS_DATA_RECORD_READER_H_
