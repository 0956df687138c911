// The string and printing kernels' error paths and edge cases (values are
// checked against TensorFlow by tests/conformance/string_ops_test): bad
// attrs and shapes give INVALID_ARGUMENT (or OUT_OF_RANGE) with
// TensorFlow's words, nothing aborts; hashes of known strings.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/cpu/string_hash.h"
#include "ops/testing/kernel_runner.h"
#include "tests/ops/math_test_util.h"

namespace weft {
namespace {

using testing_util::RunOk;
using testing_util::RunStatus;

Tensor Strings(const std::vector<int64_t>& dims,
               const std::vector<std::string>& v) {
  return MakeTensor<std::string>(dims, v);
}

void ExpectError(const absl::Status& s, absl::StatusCode code,
                 const std::string& text) {
  EXPECT_EQ(s.code(), code) << s;
  EXPECT_NE(std::string(s.message()).find(text), std::string::npos) << s;
}

TEST(StringHashTest, KnownValues) {
  // TensorFlow 2.21's values (StringToHashBucket*, num_buckets 2^63 - 1).
  EXPECT_EQ(Fingerprint64("") % 9223372036854775807ULL, 1936946117179621456ULL);
  EXPECT_NE(Fingerprint64("a"), Fingerprint64("b"));
  EXPECT_NE(SipHash24(1, 2, "a"), SipHash24(2, 1, "a"));
  EXPECT_NE(LegacyHash64(std::string(9, 'x')), LegacyHash64(std::string(8, 'x')));
}

TEST(StringOpsTest, AsStringAttrErrors) {
  const Tensor ints = MakeTensor<int32_t>({1}, {5});
  ExpectError(RunStatus(NodeBuilder("n", "AsString").Attr("T", DT_INT32)
                            .Attr("precision", 2), {ints}),
              absl::StatusCode::kInvalidArgument,
              "precision not supported for datatype int32");
  ExpectError(RunStatus(NodeBuilder("n", "AsString").Attr("T", DT_INT32)
                            .Attr("scientific", true), {ints}),
              absl::StatusCode::kInvalidArgument,
              "scientific and shortest format not supported for datatype int32");
  const Tensor f = MakeTensor<float>({1}, {1.5f});
  ExpectError(RunStatus(NodeBuilder("n", "AsString").Attr("T", DT_FLOAT)
                            .Attr("scientific", true).Attr("shortest", true), {f}),
              absl::StatusCode::kInvalidArgument,
              "Cannot select both scientific and shortest notation");
  ExpectError(RunStatus(NodeBuilder("n", "AsString").Attr("T", DT_FLOAT)
                            .Attr("fill", "x"), {f}),
              absl::StatusCode::kInvalidArgument,
              "Fill argument not supported: \"x\"");
  ExpectError(RunStatus(NodeBuilder("n", "AsString").Attr("T", DT_FLOAT)
                            .Attr("fill", "00"), {f}),
              absl::StatusCode::kInvalidArgument,
              "Fill string must be one or fewer characters");
  ExpectError(RunStatus(NodeBuilder("n", "AsString").Attr("T", DT_FLOAT)
                            .Attr("width", 1 << 30), {f}),
              absl::StatusCode::kInvalidArgument, "width");
  Tensor out = RunOk(NodeBuilder("n", "AsString").Attr("T", DT_FLOAT)
                         .Attr("precision", 1000), {f});
  ASSERT_EQ(out.NumElements(), 1);
  EXPECT_EQ(out.flat<std::string>()[0].size(), 1002u);
}

TEST(StringOpsTest, SubstrErrors) {
  const Tensor s = Strings({2}, {"hello", ""});
  ExpectError(RunStatus(NodeBuilder("n", "Substr").Attr("T", DT_INT32),
                        {s, MakeTensor<int32_t>({}, {1}),
                         MakeTensor<int32_t>({}, {1})}),
              absl::StatusCode::kInvalidArgument,
              "pos 1 out of range for string b'' at index 1");
  ExpectError(RunStatus(NodeBuilder("n", "Substr").Attr("T", DT_INT64),
                        {s, MakeTensor<int64_t>({}, {-6}),
                         MakeTensor<int64_t>({}, {1})}),
              absl::StatusCode::kInvalidArgument, "pos -6 out of range");
  ExpectError(RunStatus(NodeBuilder("n", "Substr").Attr("T", DT_INT32),
                        {s, MakeTensor<int32_t>({3}, {1, 2, 3}),
                         MakeTensor<int32_t>({}, {1})}),
              absl::StatusCode::kInvalidArgument,
              "pos and len should have the same shape, got: [3] vs. []");
  ExpectError(RunStatus(NodeBuilder("n", "Substr").Attr("T", DT_INT32),
                        {s, MakeTensor<int32_t>({3}, {1, 2, 3}),
                         MakeTensor<int32_t>({3}, {1, 2, 3})}),
              absl::StatusCode::kInvalidArgument, "Incompatible shapes");
  ExpectError(RunStatus(NodeBuilder("n", "Substr").Attr("T", DT_INT32)
                            .Attr("unit", "UTF8_CHAR"),
                        {Strings({1}, {"h\xc3\xa9"}), MakeTensor<int32_t>({}, {3}),
                         MakeTensor<int32_t>({}, {1})}),
              absl::StatusCode::kInvalidArgument,
              "pos 3 out of range for string at index 0");
  // Huge lengths clamp to the string's end.
  Tensor out = RunOk(NodeBuilder("n", "Substr").Attr("T", DT_INT64),
                     {Strings({1}, {"hello"}), MakeTensor<int64_t>({}, {1}),
                      MakeTensor<int64_t>({}, {INT64_MAX})});
  EXPECT_EQ(out.flat<std::string>()[0], "ello");
}

TEST(StringOpsTest, StringToNumberErrors) {
  for (const char* bad : {"", "1.5x", "1e", " ", "abc",
                          "1.00000000000000000000000000000000"}) {
    ExpectError(RunStatus(NodeBuilder("n", "StringToNumber"),
                          {Strings({1}, {bad})}),
                absl::StatusCode::kInvalidArgument,
                std::string("StringToNumberOp could not correctly convert "
                            "string: ") + bad);
  }
  for (const char* bad : {"2147483648", "-2147483649", "1.0", "0x10", "+", "--1"}) {
    ExpectError(RunStatus(NodeBuilder("n", "StringToNumber")
                              .Attr("out_type", DT_INT32),
                          {Strings({1}, {bad})}),
                absl::StatusCode::kInvalidArgument, bad);
  }
  ExpectError(RunStatus(NodeBuilder("n", "StringToNumber")
                            .Attr("out_type", DT_UINT64),
                        {Strings({1}, {"18446744073709551616"})}),
              absl::StatusCode::kInvalidArgument, "18446744073709551616");
  ExpectError(RunStatus(NodeBuilder("n", "StringToNumber")
                            .Attr("out_type", DT_UINT32),
                        {Strings({1}, {"-1"})}),
              absl::StatusCode::kInvalidArgument, "-1");
}

TEST(StringOpsTest, RegexErrors) {
  ExpectError(RunStatus(NodeBuilder("n", "StaticRegexReplace")
                            .Attr("pattern", "(").Attr("rewrite", "x"),
                        {Strings({1}, {"a"})}),
              absl::StatusCode::kInvalidArgument,
              "Invalid pattern: (, error: missing ): (");
  ExpectError(RunStatus(NodeBuilder("n", "RegexReplace"),
                        {Strings({1}, {"a"}), Strings({}, {"a["}),
                         Strings({}, {"x"})}),
              absl::StatusCode::kInvalidArgument, "Invalid pattern: a[");
  ExpectError(RunStatus(NodeBuilder("n", "RegexReplace"),
                        {Strings({1}, {"a"}), Strings({1}, {"a"}),
                         Strings({}, {"x"})}),
              absl::StatusCode::kInvalidArgument,
              "Pattern must be scalar, but received [1]");
  ExpectError(RunStatus(NodeBuilder("n", "RegexReplace"),
                        {Strings({1}, {"a"}), Strings({}, {"a"}),
                         Strings({2}, {"x", "y"})}),
              absl::StatusCode::kInvalidArgument,
              "Rewrite must be scalar, but received [2]");
  ExpectError(RunStatus(NodeBuilder("n", "RegexFullMatch"),
                        {Strings({1}, {"a"}), Strings({}, {"*"})}),
              absl::StatusCode::kInvalidArgument, "Invalid pattern: *");
}

TEST(StringOpsTest, SplitAndJoinErrors) {
  ExpectError(RunStatus(NodeBuilder("n", "StringSplit"),
                        {Strings({}, {"a b"}), Strings({}, {" "})}),
              absl::StatusCode::kInvalidArgument,
              "input must be a vector, got shape: []");
  ExpectError(RunStatus(NodeBuilder("n", "StringSplitV2"),
                        {Strings({1}, {"a b"}), Strings({1}, {" "})}),
              absl::StatusCode::kInvalidArgument,
              "sep must be a scalar, got shape: [1]");
  const Tensor m = Strings({2, 2}, {"a", "b", "c", "d"});
  ExpectError(RunStatus(NodeBuilder("n", "ReduceJoin"),
                        {m, MakeTensor<int32_t>({1}, {2})}),
              absl::StatusCode::kOutOfRange,
              "Invalid reduction dimension 2 for input with 2 dimension(s)");
  ExpectError(RunStatus(NodeBuilder("n", "ReduceJoin"),
                        {m, MakeTensor<int32_t>({2}, {1, -1})}),
              absl::StatusCode::kInvalidArgument,
              "Duplicate reduction dimension -1");
}

TEST(StringOpsTest, Base64Errors) {
  for (const char* bad : {"YQ=a", "YQ=", "+/==", "Y Q", "===="}) {
    ExpectError(RunStatus(NodeBuilder("n", "DecodeBase64"), {Strings({1}, {bad})}),
                absl::StatusCode::kInvalidArgument,
                "Invalid character found in base64.");
  }
  ExpectError(RunStatus(NodeBuilder("n", "DecodeBase64"), {Strings({1}, {"Y"})}),
              absl::StatusCode::kInvalidArgument,
              "Base64 string length cannot be 1 modulo 4.");
}

TEST(StringOpsTest, HashAndFingerprintErrors) {
  ExpectError(RunStatus(NodeBuilder("n", "StringToHashBucketStrong")
                            .Attr("num_buckets", 3)
                            .Attr("key", std::vector<int64_t>{1}),
                        {Strings({1}, {"a"})}),
              absl::StatusCode::kInvalidArgument, "Key must have 2 elements");
  ExpectError(RunStatus(NodeBuilder("n", "Fingerprint").Attr("T", DT_STRING),
                        {Strings({1}, {"a"}), Strings({}, {"md5"})}),
              absl::StatusCode::kInvalidArgument,
              "Unsupported fingerprint method: md5");
  ExpectError(RunStatus(NodeBuilder("n", "Fingerprint").Attr("T", DT_STRING),
                        {Strings({}, {"a"}), Strings({}, {"farmhash64"})}),
              absl::StatusCode::kInvalidArgument,
              "`data` should have at least one dimension: []");
}

TEST(StringOpsTest, FormatAndPrintErrors) {
  ExpectError(RunStatus(NodeBuilder("n", "StringFormat")
                            .Attr("T", DataTypeVector{DT_INT32})
                            .Attr("template", "{} {}")
                            .Attr("placeholder", "{}"),
                        {MakeTensor<int32_t>({}, {1})}),
              absl::StatusCode::kInvalidArgument,
              "num placeholders in template and num inputs must match: 2 vs. 1");
  ExpectError(RunStatus(NodeBuilder("n", "PrintV2").Attr("output_stream", "foo"),
                        {Strings({}, {"a"})}),
              absl::StatusCode::kInvalidArgument, "Unknown output stream: foo");
  ExpectError(RunStatus(NodeBuilder("n", "PrintV2"), {Strings({1}, {"a"})}),
              absl::StatusCode::kInvalidArgument,
              "Input is expected to be scalar, but got [1]");
  ExpectError(RunStatus(NodeBuilder("n", "StringUpper").Attr("encoding", "latin1"),
                        {Strings({1}, {"a"})}),
              absl::StatusCode::kInvalidArgument,
              "only utf-8 or '' (no encoding) is supported, received latin1");
  // Print passes its input through; first_n = 0 prints nothing.
  const Tensor x = MakeTensor<float>({2}, {1.f, 2.f});
  Tensor out = RunOk(NodeBuilder("n", "Print").Attr("T", DT_FLOAT)
                         .Attr("U", DataTypeVector{DT_FLOAT})
                         .Attr("first_n", 0),
                     {x, x});
  ExpectTensorEqual(out, x);
}

}  // namespace
}  // namespace weft
