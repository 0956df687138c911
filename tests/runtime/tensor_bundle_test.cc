// The V2 checkpoint format pieces: CRC32C against known values, the index
// table over many blocks and against corruption, and bundles of every kind
// of tensor, written atomically, read back, damaged, and merged.
#include "runtime/checkpoint/tensor_bundle.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/checkpoint/crc32c.h"
#include "runtime/checkpoint/table.h"

namespace weft {
namespace {

TEST(Crc32c, KnownValuesAndMasking) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xe3069283u);
  const std::string zeros(32, '\0');
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8a9136aau);
  EXPECT_EQ(Crc32cExtend(Crc32c("1234", 4), "56789", 5), 0xe3069283u);
  EXPECT_EQ(MaskCrc(0), 0xa282ead8u);  // an empty tensor's stored CRC
  EXPECT_EQ(UnmaskCrc(MaskCrc(0x12345678u)), 0x12345678u);
}

TEST(Table, ManyBlocksRoundTripAndDamageIsDataLoss) {
  TableBuilder b;
  ASSERT_TRUE(b.Add("", "header").ok());
  for (int i = 0; i < 20000; ++i) {
    ASSERT_TRUE(b.Add(absl::StrCat("key", 100000 + i), std::string(30, 'a' + i % 26)).ok());
  }
  EXPECT_EQ(b.Add("a", "x").code(), absl::StatusCode::kInvalidArgument);
  const std::string file = b.Finish();
  EXPECT_GT(file.size(), 262144u * 2);  // several data blocks
  auto got = ReadTable(file, "t");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->size(), 20001u);
  EXPECT_EQ((*got)[""], "header");
  EXPECT_EQ((*got)["key119999"], std::string(30, 'a' + 19999 % 26));

  std::string bad = file;
  bad[1000] ^= 1;
  EXPECT_EQ(ReadTable(bad, "t").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(ReadTable(bad, "t").status().message().find("block checksum mismatch"),
            std::string::npos);
  bad = file;
  bad[bad.size() - 1] ^= 1;
  EXPECT_NE(ReadTable(bad, "t").status().message().find("bad magic number"),
            std::string::npos);
  EXPECT_NE(ReadTable("short", "t").status().message().find("too short"),
            std::string::npos);
  // Truncations anywhere are errors, never crashes.
  for (size_t n : {file.size() - 49, file.size() / 2, size_t{48}}) {
    EXPECT_FALSE(ReadTable(file.substr(file.size() - n), "t").ok());
  }
}

class BundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/weft_bundle_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string Listing() const {
    std::string out;
    FILE* p = popen(("ls " + dir_ + "/ckpt 2>/dev/null").c_str(), "r");
    char buf[256];
    while (std::fgets(buf, sizeof(buf), p)) out += buf;
    pclose(p);
    return out;
  }
  std::string dir_;
};

TEST_F(BundleTest, EveryDtypeRoundTripsAndWritingLeavesNoTemporaries) {
  const std::string prefix = dir_ + "/ckpt/model-7";
  Tensor f(DT_FLOAT, TensorShape({2, 3}));
  for (int i = 0; i < 6; ++i) f.flat<float>()[i] = i * 0.5f;
  Tensor s(DT_STRING, TensorShape({3}));
  s.flat<std::string>()[0] = "";
  s.flat<std::string>()[1] = "weft";
  s.flat<std::string>()[2] = std::string(300, 'x');  // a 2-byte varint
  Tensor empty(DT_INT64, TensorShape({0, 4}));
  {
    BundleWriter w(prefix);
    ASSERT_TRUE(w.Add("w", f).ok());
    ASSERT_TRUE(w.Add("names", s).ok());
    ASSERT_TRUE(w.Add("empty", empty).ok());
    ASSERT_TRUE(w.Add("step", Tensor::Scalar<int64_t>(42)).ok());
    ASSERT_TRUE(w.Add("flag", Tensor::Scalar<bool>(true)).ok());
    EXPECT_EQ(w.Add("w", f).code(), absl::StatusCode::kInvalidArgument);
    ASSERT_TRUE(w.Finish().ok());
  }
  EXPECT_EQ(Listing(), "model-7.data-00000-of-00001\nmodel-7.index\n");
  auto r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->Names(),
            (std::vector<std::string>{"empty", "flag", "names", "step", "w"}));
  auto got = (*r)->Read("w", DT_FLOAT);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->shape(), f.shape());
  EXPECT_EQ(got->flat<float>()[5], 2.5f);
  auto names = (*r)->Read("names", DT_STRING);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(names->flat<std::string>()[1], "weft");
  EXPECT_EQ(names->flat<std::string>()[2].size(), 300u);
  EXPECT_EQ((*r)->Read("step", DT_INT64)->flat<int64_t>()[0], 42);
  EXPECT_TRUE((*r)->Read("flag", DT_BOOL)->flat<bool>()[0]);
  EXPECT_EQ((*r)->Read("empty", DT_INT64)->NumElements(), 0);
  EXPECT_EQ((*r)->Entry("empty")->crc32c(), 0xa282ead8u);

  auto wrong = (*r)->Read("step", DT_FLOAT);
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find(
                "expected dtype float does not equal original dtype int64"),
            std::string::npos)
      << wrong.status();
  auto missing = (*r)->Read("nope", DT_FLOAT);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("Key nope not found in checkpoint"),
            std::string::npos);
}

TEST_F(BundleTest, DamagedOrMissingFilesAreNamedErrors) {
  const std::string prefix = dir_ + "/ckpt/m";
  Tensor f(DT_FLOAT, TensorShape({1000}));
  for (int i = 0; i < 1000; ++i) f.flat<float>()[i] = i;
  {
    BundleWriter w(prefix);
    ASSERT_TRUE(w.Add("w", f).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  const std::string data = DataFilename(prefix, 0, 1);
  {
    std::fstream io(data, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(100);
    io.put('\x7f');
  }
  auto r = BundleReader::Open(prefix);
  ASSERT_TRUE(r.ok());
  auto bad = (*r)->Read("w", DT_FLOAT);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(bad.status().message().find("Checksum does not match"), std::string::npos);
  ASSERT_EQ(truncate(data.c_str(), 1000), 0);
  EXPECT_EQ((*r)->Read("w", DT_FLOAT).status().code(), absl::StatusCode::kOutOfRange);
  std::remove(data.c_str());
  EXPECT_EQ((*r)->Read("w", DT_FLOAT).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(BundleReader::Open(dir_ + "/none").status().code(),
            absl::StatusCode::kNotFound);
  {
    std::ofstream junk(IndexFilename(dir_ + "/junk"));
    junk << std::string(100, 'j');
  }
  EXPECT_EQ(BundleReader::Open(dir_ + "/junk").status().code(),
            absl::StatusCode::kDataLoss);
}

TEST_F(BundleTest, AnUnfinishedWriterLeavesNothingAndMergeJoinsShards) {
  {
    BundleWriter w(dir_ + "/ckpt/half");
    ASSERT_TRUE(w.Add("w", Tensor::Scalar<float>(1)).ok());
  }  // no Finish: as a crash mid-save, minus the process
  EXPECT_EQ(Listing(), "");
  for (int part = 0; part < 2; ++part) {
    BundleWriter w(absl::StrCat(dir_, "/ckpt/m_temp/part-", part));
    ASSERT_TRUE(w.Add(absl::StrCat("v", part), Tensor::Scalar<float>(part + 10)).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  ASSERT_TRUE(MergeBundles({dir_ + "/ckpt/m_temp/part-0", dir_ + "/ckpt/m_temp/part-1"},
                           dir_ + "/ckpt/m", /*delete_old_dirs=*/true,
                           /*allow_missing_files=*/false)
                  .ok());
  EXPECT_EQ(Listing(), "m.data-00000-of-00002\nm.data-00001-of-00002\nm.index\n");
  auto r = BundleReader::Open(dir_ + "/ckpt/m");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->Read("v1", DT_FLOAT)->flat<float>()[0], 11.f);
  EXPECT_EQ((*r)->Entry("v1")->shard_id(), 1);
  EXPECT_EQ(MergeBundles({dir_ + "/nothing"}, dir_ + "/x", true, true).code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace weft
