// OpDefBuilder spec parsing that TensorFlow's OpDefs need: allowed-type lists
// naming types Weft cannot hold, and attrs with both a minimum and a default.
#include "gtest/gtest.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/op_registry.h"
#include "proto/op_def.pb.h"

namespace weft {
namespace {

TEST(OpDefBuilderTest, AllowedTypesMayNameTypesWeftCannotHold) {
  tensorflow::OpDef def;
  ASSERT_TRUE(OpDefBuilder("X")
                  .Input("x: T")
                  .Attr("T: {float, complex64, qint8, quint16, complex128}")
                  .Finalize(&def)
                  .ok());
  const auto& types = def.attr(0).allowed_values().list().type();
  ASSERT_EQ(types.size(), 5);
  EXPECT_EQ(types[1], tensorflow::DT_COMPLEX64);
  EXPECT_EQ(types[2], tensorflow::DT_QINT8);
  EXPECT_EQ(types[4], tensorflow::DT_COMPLEX128);
  EXPECT_FALSE(OpDefBuilder("Y").Attr("T: {float, nosuchtype}").Finalize(&def).ok());
  EXPECT_FALSE(OpDefBuilder("Y").Attr("T: {float_ref}").Finalize(&def).ok());
}

TEST(OpDefBuilderTest, MinimumAndDefaultTogether) {
  tensorflow::OpDef def;
  ASSERT_TRUE(OpDefBuilder("Squeeze")
                  .Attr("squeeze_dims: list(int) >= 0 = []")
                  .Attr("n: int >= 2 = 3")
                  .Finalize(&def)
                  .ok());
  const auto& dims = def.attr(0);
  EXPECT_EQ(dims.type(), "list(int)");
  EXPECT_TRUE(dims.has_minimum());
  EXPECT_EQ(dims.minimum(), 0);
  ASSERT_TRUE(dims.has_default_value());
  EXPECT_TRUE(dims.default_value().has_list());
  EXPECT_EQ(dims.default_value().list().i_size(), 0);
  EXPECT_EQ(def.attr(1).minimum(), 2);
  EXPECT_EQ(def.attr(1).default_value().i(), 3);
}

TEST(OpRegistryTest, EveryOpRegisters) {
  EXPECT_TRUE(GlobalOpRegistry().status().ok()) << GlobalOpRegistry().status();
  for (const char* op : {"ConcatV2", "VariableV2", "VarHandleOp", "Switch", "_Arg",
                         "TruncatedNormal", "StridedSlice"}) {
    EXPECT_NE(GlobalOpRegistry().LookUpOpDef(op), nullptr) << op;
  }
}

}  // namespace
}  // namespace weft
