// Unit tests for the CLI's parsing and printing helpers.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tools/command_line.h"
#include "tools/graph_file.h"
#include "tools/npy.h"
#include "tools/tensor_text.h"

namespace weft {
namespace {

TEST(ParseFeedValue, Scalar) {
  absl::StatusOr<Tensor> t = ParseFeedValue("3.5", DT_INVALID);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_FLOAT);
  EXPECT_EQ(t->dims(), 0);
  EXPECT_EQ(t->scalar<float>(), 3.5f);
}

TEST(ParseFeedValue, NestedListInfersShapeAndUsesHint) {
  absl::StatusOr<Tensor> t = ParseFeedValue("[[1, 2, 3], [4, 5, 6]]", DT_DOUBLE);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_DOUBLE);
  EXPECT_EQ(t->shape(), TensorShape({2, 3}));
  EXPECT_EQ(t->data<double>()[5], 6.0);
}

TEST(ParseFeedValue, IntegersDefaultToInt32) {
  absl::StatusOr<Tensor> t = ParseFeedValue("[1, 2]", DT_INVALID);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->dtype(), DT_INT32);
}

TEST(ParseFeedValue, IntegersTooWideForInt32InferInt64) {
  absl::StatusOr<Tensor> t = ParseFeedValue("[1, 3000000000]", DT_INVALID);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_INT64);
  EXPECT_EQ(t->data<int64_t>()[1], 3000000000);
  t = ParseFeedValue("[-2147483649]", DT_INVALID);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_INT64);
}

TEST(ParseFeedValue, IntegerRangeIsCheckedPerDtype) {
  // Edges fit.
  absl::StatusOr<Tensor> t = ParseFeedValue("[0, 255]", DT_UINT8);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->data<uint8_t>()[1], 255);
  t = ParseFeedValue("[-128, 127.0]", DT_INT8);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->data<int8_t>()[0], -128);
  EXPECT_EQ(t->data<int8_t>()[1], 127);
  t = ParseFeedValue("-9223372036854775808", DT_INT64);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->data<int64_t>()[0], INT64_MIN);
  // One past does not, whether written as an integer or a double.
  for (const auto& [text, dtype] :
       std::vector<std::pair<std::string, DataType>>{
           {"256", DT_UINT8},
           {"-1", DT_UINT8},
           {"128.0", DT_INT8},
           {"-129", DT_INT8},
           {"40000", DT_INT16},
           {"2147483648", DT_INT32},
           {"1e300", DT_INT32},
           {"-1e19", DT_INT64},
           {"9223372036854775808", DT_INT64},
           {"18446744073709551615", DT_INT64},
       }) {
    absl::Status s = ParseFeedValue(text, dtype).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(s.message().find("out of range for dtype"), std::string::npos)
        << text << ": " << s;
  }
  absl::Status s = ParseFeedValue("[1, 300]", DT_UINT8).status();
  EXPECT_NE(s.message().find("value 300 is out of range for dtype uint8 [0, 255]"),
            std::string::npos)
      << s;
}

TEST(ParseFeedValue, ObjectWithSplat) {
  absl::StatusOr<Tensor> t = ParseFeedValue(
      R"({"dtype": "int64", "shape": [2, 2], "values": [7]})", DT_INVALID);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_INT64);
  EXPECT_EQ(t->shape(), TensorShape({2, 2}));
  EXPECT_EQ(t->data<int64_t>()[3], 7);
}

TEST(ParseFeedValue, BoolsAndStrings) {
  absl::StatusOr<Tensor> b = ParseFeedValue("[true, false]", DT_INVALID);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->dtype(), DT_BOOL);
  absl::StatusOr<Tensor> s = ParseFeedValue(R"(["a", "bc"])", DT_INVALID);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->dtype(), DT_STRING);
  EXPECT_EQ(s->data<std::string>()[1], "bc");
}

TEST(ParseFeedValue, Errors) {
  EXPECT_EQ(ParseFeedValue("[[1, 2], [3]]", DT_INVALID).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseFeedValue("[1, [2]]", DT_INVALID).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseFeedValue("[1.5]", DT_INT32).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseFeedValue("{oops", DT_INVALID).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseFeedValue(R"({"dtype": "float32", "shape": [3], "values": [1, 2]})",
                           DT_INVALID)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseFeedValue(R"({"dtype": "quux", "values": [1]})", DT_INVALID)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseFeedValue("@/nonexistent/file.npy", DT_INVALID).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(TensorToJson, ShortestFloatsAndSpecials) {
  Tensor t(DT_FLOAT, TensorShape({3}));
  t.data<float>()[0] = 0.1f;
  t.data<float>()[1] = 1.0f / 0.0f;
  t.data<float>()[2] = -2.5f;
  EXPECT_EQ(TensorToJson(t),
            R"({"dtype": "float32", "shape": [3], "values": [0.1, "inf", -2.5]})");
}

TEST(TensorToText, NestedAndElided) {
  Tensor t(DT_INT32, TensorShape({2, 2}));
  for (int i = 0; i < 4; ++i) t.data<int32_t>()[i] = i;
  EXPECT_EQ(TensorToText(t), "[[0, 1],\n [2, 3]]");
  Tensor big(DT_INT32, TensorShape({10}));
  for (int i = 0; i < 10; ++i) big.data<int32_t>()[i] = i;
  EXPECT_EQ(TensorToText(big), "[0, 1, 2, ..., 7, 8, 9]");
  EXPECT_EQ(TensorToText(Tensor::Scalar<bool>(true)), "true");
}

// An empty tensor prints as NumPy prints one, at once: walking the other
// dims of [50, 50, ..., 0] visited 7 entries a dim (found by feed_fuzzer).
TEST(TensorToText, EmptyTensorOfHighRank) {
  // 4^30 elements before the last dimension: a product that fits in int64,
  // as a shape's must (TensorShape::Build refuses more, even when a later
  // dimension is 0, as TensorFlow does).
  std::vector<int64_t> dims(30, 4);
  dims.push_back(0);
  EXPECT_EQ(TensorToText(Tensor(DT_FLOAT, TensorShape(dims))), "[]");
  EXPECT_EQ(TensorToText(Tensor(DT_INT32, TensorShape({0}))), "[]");
}

// A version-1 .npy file: `dict` (the header's Python dict), padded as numpy
// pads it, then `data`.
std::string NpyFile(std::string dict, const std::string& data) {
  dict += std::string((16 - (10 + dict.size() + 1) % 16) % 16, ' ') + "\n";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(dict.size());
  bytes += '\0';
  bytes += dict;
  return bytes + data;
}

TEST(Npy, ReadsVersion1AndRejectsJunk) {
  const int32_t values[2] = {5, -6};
  const std::string bytes =
      NpyFile("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
              std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  absl::StatusOr<Tensor> t = ParseNpy(bytes, "x.npy");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_INT32);
  EXPECT_EQ(t->data<int32_t>()[1], -6);
  EXPECT_FALSE(ParseNpy(bytes.substr(0, bytes.size() - 1), "x.npy").ok());
  EXPECT_FALSE(ParseNpy("hello", "x.npy").ok());
}

TEST(Npy, BoolBytesOtherThanZeroOrOneAreTrue) {
  const std::string bytes = NpyFile(
      "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
      std::string("\x02\x00\xff", 3));
  absl::StatusOr<Tensor> t = ParseNpy(bytes, "x.npy");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(TensorToText(*t), "[true, false, true]");
  const auto* raw = static_cast<const unsigned char*>(t->raw_data());
  EXPECT_EQ(raw[0], 1);
  EXPECT_EQ(raw[2], 1);
}

TEST(Npy, HeaderShapeIsCheckedAgainstTheDataBeforeAllocating) {
  // 10^12 doubles claimed, 8 bytes present: refused without trying to
  // allocate 8 TB.
  const std::string bytes = NpyFile(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000, 100), }",
      std::string(8, '\0'));
  absl::Status s = ParseNpy(bytes, "x.npy").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("data has 8 bytes, shape [100000,100000,100] needs "
                             "1000000000000 elements of 8 bytes"),
            std::string::npos)
      << s;
}

TEST(ParseFeedValue, DeclaredShapesAreHeldToTheInputLimit) {
  absl::Status s =
      ParseFeedValue(R"({"shape": [100000, 100000], "values": [0]})", DT_FLOAT).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("a feed of shape [100000,100000] and dtype float32 "
                             "takes more than the limit of"),
            std::string::npos)
      << s;
  // The limit is the caller's (--max-input-bytes): 3 int64s are 24 bytes.
  EXPECT_EQ(ParseFeedValue("[1, 2, 3]", DT_INT64, 16).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(ParseFeedValue("[1, 2, 3]", DT_INT64, 24).ok());
}

TEST(ParseGraphDef, DetectsTextAndBinary) {
  absl::StatusOr<tensorflow::GraphDef> text =
      ParseGraphDef("node { name: \"a\" op: \"NoOp\" }", "g.pbtxt");
  ASSERT_TRUE(text.ok()) << text.status();
  std::string binary;
  text->SerializeToString(&binary);
  absl::StatusOr<tensorflow::GraphDef> parsed = ParseGraphDef(binary, "g.bin");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->node(0).name(), "a");
  absl::Status bad = ParseGraphDef("node { name: ", "bad.pbtxt").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("line 1"), std::string::npos) << bad;
  EXPECT_FALSE(ParseGraphDef(binary.substr(0, binary.size() - 2), "g.pb").ok());
}

TEST(CommandLine, ParsesFlagForms) {
  CommandLine cl({{"graph", kValue}, {"fetch", kRepeated}, {"help", kSwitch}});
  const char* argv[] = {"--graph", "g.pb", "--fetch=a", "--fetch", "b:1", "--help"};
  ASSERT_TRUE(cl.Parse(6, const_cast<char**>(argv)).ok());
  EXPECT_EQ(cl.Get("graph"), "g.pb");
  EXPECT_EQ(cl.GetAll("fetch"), (std::vector<std::string>{"a", "b:1"}));
  EXPECT_TRUE(cl.Has("help"));
  CommandLine dup({{"graph", kValue}});
  const char* twice[] = {"--graph", "a", "--graph", "b"};
  EXPECT_FALSE(dup.Parse(4, const_cast<char**>(twice)).ok());
  const char* dangling[] = {"--graph"};
  EXPECT_FALSE(dup.Parse(1, const_cast<char**>(dangling)).ok());
}

}  // namespace
}  // namespace weft
