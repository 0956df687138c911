// The OpDefs Weft registers for its math and nn ops must equal TensorFlow
// 2.21's exactly (docs aside): same args, attrs in the same order, same
// defaults and allowed-type lists in the same order. The expected OpDefs
// are TensorFlow's own, saved in math_nn_op_defs_tf2_21.pbtxt (see its
// header), so this test needs no TensorFlow.
#include <fstream>
#include <sstream>
#include <string>

#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "ops/framework/op_registry.h"
#include "proto/op_def.pb.h"

namespace weft {
namespace {

tensorflow::OpList ReadGolden() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::string path =
      std::string(srcdir ? srcdir : ".") + "/" +
      (workspace ? workspace : "weft") + "/tests/ops/math_nn_op_defs_tf2_21.pbtxt";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  tensorflow::OpList ops;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text.str(), &ops));
  return ops;
}

void StripDocs(tensorflow::OpDef* op) {
  op->clear_summary();
  op->clear_description();
  for (auto& a : *op->mutable_input_arg()) a.clear_description();
  for (auto& a : *op->mutable_output_arg()) a.clear_description();
  for (auto& a : *op->mutable_attr()) a.clear_description();
}

TEST(MathOpDefsTest, RegistryIsHealthy) {
  EXPECT_TRUE(GlobalOpRegistry().status().ok()) << GlobalOpRegistry().status();
}

TEST(MathOpDefsTest, EqualTensorFlows) {
  const tensorflow::OpList golden = ReadGolden();
  ASSERT_GE(golden.op_size(), 50);
  for (const tensorflow::OpDef& want : golden.op()) {
    SCOPED_TRACE(want.name());
    const tensorflow::OpDef* have = GlobalOpRegistry().LookUpOpDef(want.name());
    ASSERT_NE(have, nullptr) << want.name() << " is not registered";
    tensorflow::OpDef got = *have;
    StripDocs(&got);
    std::string diff;
    google::protobuf::util::MessageDifferencer d;
    d.ReportDifferencesToString(&diff);
    EXPECT_TRUE(d.Compare(want, got)) << diff;
  }
}

}  // namespace
}  // namespace weft
