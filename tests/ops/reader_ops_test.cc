// The v1 readers' synchronous parts and ReadFile/WriteFile: reader attrs
// refused at construction (negative sizes, endless empty records,
// compression), a fresh reader's counters, reset, the state verbs
// (UNIMPLEMENTED, as TensorFlow's, except IdentityReader's round trip), and
// whole-file I/O (directories made on write, scalar names required,
// NOT_FOUND). Reads from queues, with TensorFlow's keys and values, are
// tests/conformance/reader_ops_test.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "tests/ops/array_test_util.h"

namespace weft {
namespace {

using testing_util::Strings;

std::string TempDir() {
  const char* d = std::getenv("TEST_TMPDIR");
  return d != nullptr ? d : "/tmp";
}

absl::StatusOr<std::vector<Tensor>> Make(const std::string& op, Device* device,
                                         const std::vector<std::pair<std::string, int>>& ints) {
  NodeBuilder b("reader", op);
  for (const auto& [name, v] : ints) b.Attr(name, v);
  KernelRunner r(b.Build(), device);
  return r.Run({});
}

TEST(ReaderOpsTest, AttrsAreChecked) {
  auto devices = DeviceMgr::NewLocal({}).value();
  Device* d = devices->default_device();
  auto negative = Make("FixedLengthRecordReaderV2", d, {{"record_bytes", -1}});
  ASSERT_FALSE(negative.ok());
  EXPECT_TRUE(absl::StrContains(negative.status().message(), "record_bytes must be >= 0 not -1"))
      << negative.status();
  auto endless = Make("FixedLengthRecordReaderV2", d, {{"record_bytes", 0}});
  ASSERT_FALSE(endless.ok());
  EXPECT_TRUE(absl::StrContains(endless.status().message(), "both 0")) << endless.status();
  EXPECT_TRUE(Make("FixedLengthRecordReaderV2", d, {{"record_bytes", 4}, {"hop_bytes", 2}}).ok());
  KernelRunner z(NodeBuilder("z", "TFRecordReaderV2")
                     .Attr("compression_type", std::string("LZ4"))
                     .Build(),
                 d);
  EXPECT_FALSE(z.Run({}).ok());
}

TEST(ReaderOpsTest, CountersResetAndState) {
  auto devices = DeviceMgr::NewLocal({}).value();
  Device* d = devices->default_device();
  auto handle = Make("TextLineReaderV2", d, {{"skip_header_lines", 1}});
  ASSERT_TRUE(handle.ok()) << handle.status();
  auto verb = [&](const std::string& op, std::vector<Tensor> extra = {}) {
    NodeBuilder b("v", op);
    KernelRunner r(b.Build(), d);
    std::vector<Tensor> in = {(*handle)[0]};
    for (Tensor& t : extra) in.push_back(std::move(t));
    return r.Run(in);
  };
  for (const char* op : {"ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2"}) {
    auto n = verb(op);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ((*n)[0].scalar<int64_t>(), 0);
  }
  EXPECT_TRUE(verb("ReaderResetV2").ok());
  auto state = verb("ReaderSerializeStateV2");
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::EndsWith(state.status().message(), "Reader SerializeState"))
      << state.status();
  auto restore = verb("ReaderRestoreStateV2", {Tensor::Scalar<std::string>("x")});
  ASSERT_FALSE(restore.ok());
  EXPECT_EQ(restore.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(ReaderOpsTest, IdentityReaderStateRoundTrips) {
  auto devices = DeviceMgr::NewLocal({}).value();
  Device* d = devices->default_device();
  auto handle = Make("IdentityReaderV2", d, {});
  ASSERT_TRUE(handle.ok()) << handle.status();
  auto verb = [&](const std::string& op, std::vector<Tensor> extra = {}) {
    KernelRunner r(NodeBuilder("v", op).Build(), d);
    std::vector<Tensor> in = {(*handle)[0]};
    for (Tensor& t : extra) in.push_back(std::move(t));
    return r.Run(in);
  };
  // Two units started and finished, three records, work "w".
  const std::string state("\x08\x02\x10\x02\x18\x03\x22\x01w", 9);
  ASSERT_TRUE(verb("ReaderRestoreStateV2", {Tensor::Scalar<std::string>(state)}).ok());
  auto n = verb("ReaderNumRecordsProducedV2");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ((*n)[0].scalar<int64_t>(), 3);
  auto saved = verb("ReaderSerializeStateV2");
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ((*saved)[0].scalar<std::string>(), state);
  for (const std::string bad : {std::string("\xff"), std::string("\x08\x07")}) {
    auto r = verb("ReaderRestoreStateV2", {Tensor::Scalar<std::string>(bad)});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  }
}

TEST(FileIoTest, WriteMakesDirectoriesAndReadReturnsTheBytes) {
  const std::string path = TempDir() + "/file_io_test/a/b/out.bin";
  const std::string bytes("one\0two\nthree", 13);
  KernelRunner write(NodeBuilder("w", "WriteFile").Build());
  auto w = write.Run({Tensor::Scalar<std::string>(path), Tensor::Scalar<std::string>(bytes)});
  ASSERT_TRUE(w.ok()) << w.status();
  KernelRunner read(NodeBuilder("r", "ReadFile").Build());
  auto r = read.Run({Tensor::Scalar<std::string>(path)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<std::string>(), bytes);
  // Rewriting replaces the file.
  ASSERT_TRUE(write.Run({Tensor::Scalar<std::string>(path), Tensor::Scalar<std::string>("")}).ok());
  r = read.Run({Tensor::Scalar<std::string>(path)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].scalar<std::string>(), "");
}

TEST(FileIoTest, Errors) {
  KernelRunner read(NodeBuilder("r", "ReadFile").Build());
  auto missing = read.Run({Tensor::Scalar<std::string>(TempDir() + "/no/such/file")});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound) << missing.status();
  auto vec = read.Run({Strings({2}, {"a", "b"})});
  ASSERT_FALSE(vec.ok());
  EXPECT_TRUE(absl::StrContains(vec.status().message(),
                                "Input filename tensor must be scalar, but had shape: [2]"))
      << vec.status();
  KernelRunner write(NodeBuilder("w", "WriteFile").Build());
  auto contents = write.Run({Tensor::Scalar<std::string>(TempDir() + "/x"),
                             Strings({1}, {"a"})});
  ASSERT_FALSE(contents.ok());
  EXPECT_TRUE(absl::StrContains(contents.status().message(),
                                "Contents tensor must be scalar, but had shape: [1]"))
      << contents.status();
  auto empty = read.Run({Tensor::Scalar<std::string>("")});
  EXPECT_FALSE(empty.ok());
}

}  // namespace
}  // namespace weft
