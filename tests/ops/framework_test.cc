// The op/kernel framework: OpDefBuilder specs, NodeDef validation and
// defaults, dtype resolution, kernel lookup errors, and the global registries.
#include "graph/lower_functional_ops.h"
#include "gtest/gtest.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/node_def_util.h"
#include "ops/framework/op_def_builder.h"
#include "ops/framework/op_registry.h"
#include "ops/testing/kernel_runner.h"
#include "proto/attr_value.pb.h"

namespace weft {
namespace {

tensorflow::OpDef Build(const OpDefBuilder& b) {
  tensorflow::OpDef def;
  absl::Status s = b.Finalize(&def);
  EXPECT_TRUE(s.ok()) << s;
  return def;
}

TEST(OpDefBuilder, ParsesArgsAndAttrs) {
  tensorflow::OpDef def = Build(OpDefBuilder("Thing")
                                    .Input("xs: N * T")
                                    .Input("ref: Ref(T)")
                                    .Input("flag: bool")
                                    .Output("out: T")
                                    .Attr("N: int >= 1")
                                    .Attr("T: {float, int32} = DT_FLOAT")
                                    .Attr("mode: {'a', 'b'} = 'a'")
                                    .Attr("ks: list(int) = [1, 2]")
                                    .Attr("scale: float = 0.5"));
  ASSERT_EQ(def.input_arg_size(), 3);
  EXPECT_EQ(def.input_arg(0).number_attr(), "N");
  EXPECT_EQ(def.input_arg(0).type_attr(), "T");
  EXPECT_TRUE(def.input_arg(1).is_ref());
  EXPECT_EQ(def.input_arg(2).type(), DT_BOOL);
  ASSERT_EQ(def.attr_size(), 5);
  EXPECT_EQ(def.attr(0).minimum(), 1);
  EXPECT_EQ(def.attr(1).type(), "type");
  EXPECT_EQ(def.attr(1).allowed_values().list().type_size(), 2);
  EXPECT_EQ(def.attr(1).default_value().type(), DT_FLOAT);
  EXPECT_EQ(def.attr(2).type(), "string");
  EXPECT_EQ(def.attr(2).default_value().s(), "a");
  EXPECT_EQ(def.attr(3).default_value().list().i_size(), 2);
  EXPECT_FLOAT_EQ(def.attr(4).default_value().f(), 0.5f);
}

TEST(OpDefBuilder, ReportsBadSpecs) {
  tensorflow::OpDef def;
  EXPECT_FALSE(OpDefBuilder("Bad").Input("no colon").Finalize(&def).ok());
  EXPECT_FALSE(OpDefBuilder("Bad").Input("x: notatype").Finalize(&def).ok());
}

class NodeDefTest : public ::testing::Test {
 protected:
  tensorflow::OpDef op_ = Build(OpDefBuilder("Scale")
                                    .Input("x: T")
                                    .Output("y: T")
                                    .Attr("T: {float, double}")
                                    .Attr("factor: float = 2.0"));
};

TEST_F(NodeDefTest, DefaultsAndValidation) {
  tensorflow::NodeDef node = NodeBuilder("s", "Scale").Input("a").Attr("T", DT_FLOAT).Build();
  AddDefaultsToNodeDef(op_, &node);
  EXPECT_FLOAT_EQ(node.attr().at("factor").f(), 2.0f);
  EXPECT_TRUE(ValidateNodeDef(node, op_).ok());
  DataTypeVector in, out;
  ASSERT_TRUE(InOutTypesForNode(node, op_, &in, &out).ok());
  EXPECT_EQ(in, DataTypeVector{DT_FLOAT});
}

TEST_F(NodeDefTest, ErrorsNameNodeAndAttr) {
  tensorflow::NodeDef node = NodeBuilder("s", "Scale").Input("a").Attr("T", DT_INT32).Build();
  AddDefaultsToNodeDef(op_, &node);
  absl::Status s = ValidateNodeDef(node, op_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'s'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("int32"), std::string::npos) << s;

  tensorflow::NodeDef missing = NodeBuilder("m", "Scale").Input("a").Build();
  s = ValidateNodeDef(missing, op_);
  EXPECT_NE(s.message().find("missing attr 'T'"), std::string::npos) << s;

  tensorflow::NodeDef extra = NodeBuilder("e", "Scale").Input("a").Attr("T", DT_FLOAT)
                                  .Attr("factor", 1.0f).Attr("bogus", 1).Build();
  s = ValidateNodeDef(extra, op_);
  EXPECT_NE(s.message().find("unknown attr 'bogus'"), std::string::npos) << s;

  tensorflow::NodeDef kind = NodeBuilder("k", "Scale").Input("a").Attr("T", "float")
                                 .Attr("factor", 1.0f).Build();
  s = ValidateNodeDef(kind, op_);
  EXPECT_NE(s.message().find("attr 'T' has type string, expected type"),
            std::string::npos) << s;

  tensorflow::NodeDef inputs = NodeBuilder("i", "Scale").Input("a").Input("b")
                                   .Attr("T", DT_FLOAT).Attr("factor", 1.0f).Build();
  s = ValidateNodeDef(inputs, op_);
  EXPECT_NE(s.message().find("has 2 data inputs"), std::string::npos) << s;
}

TEST(ParseTensorName, Forms) {
  EXPECT_EQ(ParseTensorName("a")->index, 0);
  EXPECT_EQ(ParseTensorName("scope/a:3")->node, "scope/a");
  EXPECT_EQ(ParseTensorName("scope/a:3")->index, 3);
  EXPECT_TRUE(ParseTensorName("^a")->is_control());
  EXPECT_FALSE(ParseTensorName("a:x").ok());
  EXPECT_FALSE(ParseTensorName(":1").ok());
  EXPECT_FALSE(ParseTensorName("a:-1").ok());
}

TEST(GlobalRegistries, HealthyAndEveryOpHasAKernel) {
  const OpRegistry& ops = GlobalOpRegistry();
  EXPECT_TRUE(ops.status().ok()) << ops.status();
  const KernelRegistry& kernels = GlobalKernelRegistry();
  for (const std::string& op : ops.OpNames()) {
    if (IsLoweredBeforeRun(op)) continue;  // rewritten before any run
    bool has_kernel = false;
    for (const std::string& k : kernels.OpNames()) has_kernel |= k == op;
    EXPECT_TRUE(has_kernel) << "op " << op << " has no kernel";
  }
  for (const std::string& k : kernels.OpNames()) {
    EXPECT_NE(ops.LookUpOpDef(k), nullptr) << "kernel for unregistered op " << k;
  }
  EXPECT_EQ(ops.LookUp("NoSuchOp").status().code(), absl::StatusCode::kUnimplemented);
}

TEST(KernelRegistry, MissingKernelErrorListsRegistrations) {
  KernelRegistry r;
  r.Register(KernelDef("Scale", "CPU").TypeConstraint("T", DT_FLOAT),
             [](OpKernelConstruction*) -> std::unique_ptr<OpKernel> { return nullptr; });
  tensorflow::NodeDef node = NodeBuilder("s", "Scale").Attr("T", DT_DOUBLE).Build();
  absl::Status s = r.FindKernelDef(node, "CPU").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("T=double"), std::string::npos) << s;
  EXPECT_NE(s.message().find("CPU[T=float]"), std::string::npos) << s;
  EXPECT_NE(s.message().find("'s'"), std::string::npos) << s;
  EXPECT_FALSE(r.HasKernel(node, "GPU"));
}

TEST(KernelRegistry, MissingKernelErrorNamesEachAttrOnce) {
  // Three CPU kernels reject T=int32 and one rejects Tidx: each attr is
  // named once, in the order first met.
  KernelRegistry r;
  auto none = [](OpKernelConstruction*) -> std::unique_ptr<OpKernel> {
    return nullptr;
  };
  r.Register(KernelDef("Div", "CPU").TypeConstraint("T", DT_FLOAT), none);
  r.Register(KernelDef("Div", "CPU").TypeConstraint("T", DT_DOUBLE), none);
  r.Register(KernelDef("Div", "CPU")
                 .TypeConstraint("Tidx", DT_INT32)
                 .TypeConstraint("T", DT_HALF),
             none);
  r.Register(KernelDef("Div", "GPU").TypeConstraint("T", DT_INT32), none);
  tensorflow::NodeDef node = NodeBuilder("d", "Div")
                                 .Attr("T", DT_INT32)
                                 .Attr("Tidx", DT_INT64)
                                 .Build();
  absl::Status s = r.FindKernelDef(node, "CPU").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(),
            "no CPU kernel for op 'Div' with T=int32, Tidx=int64 (node 'd'); "
            "registered: CPU[T=float], CPU[T=double], "
            "CPU[Tidx=int32; T=half], GPU[T=int32]");
}

// ops/framework/kernel_checks.h, through a kernel that uses it (ReluGrad's
// CPU kernel; its GPU kernel calls the same check, so says the same).
TEST(KernelChecks, SameShapeNamesInputsAndShapes) {
  KernelRunner relu_grad(NodeBuilder("rg", "ReluGrad").Attr("T", DT_FLOAT).Build());
  absl::StatusOr<std::vector<Tensor>> out =
      relu_grad.Run({Tensor(DT_FLOAT, TensorShape({2, 3})),
                     Tensor(DT_FLOAT, TensorShape({3, 2}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  // The kernel runner, like the executor, adds the node.
  EXPECT_EQ(out.status().message(),
            "node 'rg' (ReluGrad): gradients and features must have the same shape, "
            "got [2,3] and [3,2]");
  EXPECT_TRUE(relu_grad.Run({Tensor(DT_FLOAT, TensorShape({2, 3})),
                             Tensor(DT_FLOAT, TensorShape({2, 3}))})
                  .ok());
}

}  // namespace
}  // namespace weft
