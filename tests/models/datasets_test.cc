// Data sets: synthetic determinism and learnability, the digits file format
// (round trip, missing and damaged files), batching.
#include "graph/models/datasets.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

TEST(DatasetsTest, SyntheticIsDeterministicAndUsesEveryClass) {
  SyntheticOptions o;
  o.examples = 2000;
  Dataset a = MakeSyntheticDataset(o), b = MakeSyntheticDataset(o);
  EXPECT_EQ(a.images, b.images);
  EXPECT_EQ(a.labels, b.labels);
  ASSERT_EQ(a.size(), 2000);
  EXPECT_EQ(a.images.size(), 2000u * 64u);
  std::set<int64_t> classes(a.labels.begin(), a.labels.end());
  EXPECT_EQ(classes.size(), 10u);
  o.seed = 2;
  EXPECT_NE(MakeSyntheticDataset(o).labels, a.labels);
}

TEST(DatasetsTest, DigitsFileRoundTrip) {
  SyntheticOptions o;
  o.examples = 10;
  Dataset d = MakeSyntheticDataset(o);
  const std::string path = TempPath("digits_roundtrip.bin");
  ASSERT_TRUE(WriteDigitsFile(d, 16, path).ok());
  auto back = LoadDigits(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->labels, d.labels);
  EXPECT_EQ(back->rows, 8);
  for (size_t i = 0; i < d.images.size(); ++i) {
    EXPECT_NEAR(back->images[i], d.images[i], 0.5 / 16 + 1e-6);
  }
}

TEST(DatasetsTest, MissingFileSaysRunSetup) {
  auto d = LoadDigits(TempPath("no_such_digits.bin"));
  EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(d.status().message(), "tools/setup.sh"));
}

TEST(DatasetsTest, DamagedFilesAreDataLoss) {
  SyntheticOptions o;
  o.examples = 4;
  const std::string path = TempPath("digits_damaged.bin");
  ASSERT_TRUE(WriteDigitsFile(MakeSyntheticDataset(o), 16, path).ok());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 3);
  auto d = LoadDigits(path);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kDataLoss) << d.status();
  EXPECT_TRUE(absl::StrContains(d.status().message(), "size")) << d.status();
  std::ofstream(path, std::ios::binary) << "NOTMAGIC" << bytes.substr(8);
  EXPECT_EQ(LoadDigits(path).status().code(), absl::StatusCode::kDataLoss);
}

TEST(DatasetsTest, BatchesCoverAnEpochThenReshuffle) {
  SyntheticOptions o;
  o.examples = 10;
  Dataset d = MakeSyntheticDataset(o);
  for (int64_t i = 0; i < d.size(); ++i) d.labels[i] = i;  // ids
  BatchIterator it(&d, 4, 5);
  std::multiset<int64_t> seen;
  for (int k = 0; k < 3; ++k) {  // 12 examples: one epoch + 2
    Batch b = *it.Next();
    ASSERT_EQ(b.images.shape(), TensorShape({4, 64}));
    for (int i = 0; i < 4; ++i) {
      int64_t id = b.labels.flat<int64_t>()[i];
      seen.insert(id);
      EXPECT_EQ(b.images.flat<float>()[i * 64], d.images[id * 64]);
    }
  }
  for (int64_t i = 0; i < 10; ++i) EXPECT_GE(seen.count(i), 1u) << i;
  EXPECT_EQ(it.epoch(), 1);
}

// The real file, when tools/setup.sh has exported it. Bazel points HOME at
// the test's scratch folder, so the user's home is looked up too.
TEST(DatasetsTest, RealDigitsWhenExported) {
  auto d = LoadDigits(DefaultDigitsPath());
  if (d.status().code() == absl::StatusCode::kNotFound) {
    if (const passwd* pw = getpwuid(getuid()); pw != nullptr) {
      d = LoadDigits(std::string(pw->pw_dir) + "/.cache/weft/data/digits.bin");
    }
  }
  if (d.status().code() == absl::StatusCode::kNotFound) {
    GTEST_SKIP() << d.status().message();
  }
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->size(), 1797);
  EXPECT_EQ(d->features(), 64);
  EXPECT_EQ(d->num_classes, 10);
}

TEST(BatchIteratorTest, BatchTooLargeIsAnError) {
  SyntheticOptions o;
  o.examples = 4;
  Dataset d = MakeSyntheticDataset(o);
  BatchIterator it(&d, int64_t{1} << 40, 1);
  absl::StatusOr<Batch> b = it.Next();
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(b.status().message().find("a batch of 1099511627776 examples"),
            std::string::npos)
      << b.status();
}

}  // namespace
}  // namespace weft
