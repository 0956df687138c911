// The record readers behind the file datasets (ops/data/record_reader.h):
// TFRecord framing and CRC checks, bounded reads of hostile lengths,
// truncation, zlib streams, text lines and fixed-length records; and
// DecodeRaw's size checks.
#include "ops/data/record_reader.h"

#include <zlib.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/checkpoint/crc32c.h"

namespace weft {
namespace data {
namespace {

std::string Fixed64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}
std::string Fixed32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}
std::string Record(const std::string& data) {
  const std::string len = Fixed64(data.size());
  return len + Fixed32(MaskCrc(Crc32c(len.data(), 8))) + data +
         Fixed32(MaskCrc(Crc32c(data.data(), data.size())));
}

std::string WriteFile(const std::string& name, const std::string& bytes) {
  const std::string path = std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") +
                           "/record_reader_test_" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  return path;
}

// Every record of the file, then the status that ended the reading.
absl::Status ReadAll(RecordSource* r, std::vector<std::string>* out) {
  while (true) {
    std::string rec;
    bool end = false;
    absl::Status s = r->Read(&rec, &end);
    if (!s.ok() || end) return s;
    out->push_back(rec);
  }
}

absl::Status ReadRecords(const std::string& bytes, std::vector<std::string>* out,
                         Compression z = Compression::kNone) {
  auto in = OpenByteStream(WriteFile("rec", bytes), z, 0);
  if (!in.ok()) return in.status();
  TFRecordReader reader(*std::move(in));
  return ReadAll(&reader, out);
}

TEST(TFRecordReaderTest, ReadsRecordsAndEmptyOnes) {
  std::vector<std::string> got;
  ASSERT_TRUE(ReadRecords(Record("abc") + Record("") + Record("xyz!"), &got).ok());
  EXPECT_EQ(got, (std::vector<std::string>{"abc", "", "xyz!"}));
}

TEST(TFRecordReaderTest, EmptyFileHasNoRecords) {
  std::vector<std::string> got;
  EXPECT_TRUE(ReadRecords("", &got).ok());
  EXPECT_TRUE(got.empty());
}

TEST(TFRecordReaderTest, BadDataCrcIsDataLossAtItsOffset) {
  std::string bytes = Record("abc") + Record("hello");
  bytes[19 + 12 + 1] ^= 1;  // second record's data (the first is 19 bytes)
  std::vector<std::string> got;
  absl::Status s = ReadRecords(bytes, &got);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "corrupted record at 31");
  EXPECT_EQ(got, std::vector<std::string>{"abc"});
}

TEST(TFRecordReaderTest, BadLengthCrcIsDataLoss) {
  std::string bytes = Record("abc");
  bytes[0] ^= 4;
  std::vector<std::string> got;
  absl::Status s = ReadRecords(bytes, &got);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "corrupted record at 0 (Is this even a TFRecord file?)");
}

TEST(TFRecordReaderTest, HugeLengthWithValidCrcIsTruncatedNotAllocated) {
  // A length of 2^62 whose CRC checks: the reader must stop at the end of
  // the file instead of allocating the length.
  const std::string len = Fixed64(uint64_t{1} << 62);
  const std::string bytes = len + Fixed32(MaskCrc(Crc32c(len.data(), 8))) + "tiny";
  std::vector<std::string> got;
  absl::Status s = ReadRecords(bytes, &got);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "truncated record at 0");
  const std::string max = Fixed64(~uint64_t{0});
  s = ReadRecords(max + Fixed32(MaskCrc(Crc32c(max.data(), 8))), &got);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
}

TEST(TFRecordReaderTest, TruncatedHeaderOrDataIsDataLoss) {
  const std::string full = Record("abcdef");
  for (size_t cut : {size_t{3}, size_t{12}, size_t{15}, full.size() - 1}) {
    std::vector<std::string> got;
    absl::Status s = ReadRecords(Record("x") + full.substr(0, cut), &got);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << cut;
    EXPECT_EQ(got.size(), 1u) << cut;
  }
}

std::string Compress(const std::string& data, int window_bits) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = data.size();
  z.next_out = reinterpret_cast<Bytef*>(&out[0]);
  z.avail_out = out.size();
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(TFRecordReaderTest, GzipAndZlibStreams) {
  const std::string plain = Record(std::string(300000, 'q')) + Record("end");
  for (auto [z, bits] : {std::pair{Compression::kGzip, MAX_WBITS + 16},
                         std::pair{Compression::kZlib, MAX_WBITS}}) {
    std::vector<std::string> got;
    ASSERT_TRUE(ReadRecords(Compress(plain, bits), &got, z).ok());
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1], "end");
    // Cut short: the compressed stream ends early.
    got.clear();
    const std::string packed = Compress(plain, bits);
    EXPECT_EQ(ReadRecords(packed.substr(0, packed.size() / 2), &got, z).code(),
              absl::StatusCode::kDataLoss);
    // Not compressed at all.
    EXPECT_EQ(ReadRecords(plain, &got, z).code(), absl::StatusCode::kDataLoss);
  }
}

TEST(RecordReaderTest, CompressionNames) {
  EXPECT_TRUE(ParseCompression("").ok());
  EXPECT_TRUE(ParseCompression("GZIP").ok());
  EXPECT_EQ(ParseCompression("gzip").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RecordReaderTest, MissingFileIsNotFound) {
  EXPECT_EQ(OpenByteStream("/nonexistent/weft/file", Compression::kNone, 0)
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

TEST(LineReaderTest, LinesCrLfAndLastLine) {
  auto in = OpenByteStream(WriteFile("lines", "a\r\n\nb c\nlast"), Compression::kNone, 1);
  ASSERT_TRUE(in.ok());
  LineReader reader(*std::move(in));
  std::vector<std::string> got;
  ASSERT_TRUE(ReadAll(&reader, &got).ok());
  EXPECT_EQ(got, (std::vector<std::string>{"a", "", "b c", "last"}));
}

TEST(FixedLengthReaderTest, HeaderFooterAndPartialRecord) {
  auto in = OpenByteStream(WriteFile("fixed", "HHabcdefgFF"), Compression::kNone, 0);
  ASSERT_TRUE(in.ok());
  FixedLengthReader reader(*std::move(in), 2, 3, 2);
  std::vector<std::string> got;
  ASSERT_TRUE(ReadAll(&reader, &got).ok());
  EXPECT_EQ(got, (std::vector<std::string>{"abc", "def"}));
}

TEST(FixedLengthReaderTest, HugeRecordOrHeaderOnSmallFileEnds) {
  for (auto [h, r] : {std::pair<uint64_t, uint64_t>{0, uint64_t{1} << 60},
                      std::pair<uint64_t, uint64_t>{uint64_t{1} << 60, 4}}) {
    auto in = OpenByteStream(WriteFile("fixed2", "abcdefgh"), Compression::kNone, 0);
    ASSERT_TRUE(in.ok());
    FixedLengthReader reader(*std::move(in), h, r, 0);
    std::vector<std::string> got;
    EXPECT_TRUE(ReadAll(&reader, &got).ok());
    EXPECT_TRUE(got.empty());
  }
}

}  // namespace
}  // namespace data
}  // namespace weft
