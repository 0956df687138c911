// Legacy ref variables: VariableV2, Assign, AssignAdd, AssignSub,
// ApplyGradientDescent. Runners share one device so they see the same
// ResourceMgr, as nodes of one session do.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "runtime/core/resource_mgr.h"
#include "tests/ops/array_test_util.h"

namespace weft {
namespace {

using testing_util::Scalar;
using testing_util::Strings;
using testing_util::Vec;

class RefVariableTest : public ::testing::Test {
 protected:
  RefVariableTest() : devices_(DeviceMgr::NewLocal({}).value()) {}
  Device* device() { return devices_->default_device(); }

  // Runs VariableV2 named `name` and returns its Var.
  std::shared_ptr<Var> MakeVariable(const std::string& name, DataType dtype,
                                    const std::string& shared_name = "",
                                    const std::string& container = "") {
    KernelRunner r(NodeBuilder(name, "VariableV2")
                       .Attr("dtype", dtype)
                       .ShapeAttr("shape", {2})
                       .Attr("shared_name", shared_name)
                       .Attr("container", container)
                       .Build(),
                   device());
    auto out = r.Run({});
    EXPECT_TRUE(out.ok()) << out.status();
    auto var = device()->resource_manager()->Lookup<Var>(
        container.empty() ? "localhost" : container,
        shared_name.empty() ? name : shared_name);
    EXPECT_TRUE(var.ok()) << var.status();
    return var.ok() ? *var : nullptr;
  }

  // Runs `op` on the variable's ref (named "v") and `inputs`.
  absl::StatusOr<std::vector<Tensor>> Update(const NodeBuilder& op, Var* var,
                                             const std::vector<Tensor>& inputs) {
    NodeBuilder node = op;
    node.Input("v");
    for (size_t i = 0; i < inputs.size(); ++i) node.Input("x" + std::to_string(i));
    KernelRunner r(node.Build(), device());
    return r.RunWithRefInput(var->tensor(), inputs, var->mu());
  }

  std::unique_ptr<DeviceMgr> devices_;
};

TEST_F(RefVariableTest, StartsUninitializedAndIsShared) {
  auto v = MakeVariable("v", DT_FLOAT);
  ASSERT_NE(v, nullptr);
  EXPECT_FALSE(v->is_initialized());
  // A second VariableV2 node with shared_name "v" finds the same Var.
  auto w = MakeVariable("other", DT_FLOAT, "v");
  EXPECT_EQ(v.get(), w.get());
  // Containers separate variables.
  auto c = MakeVariable("v", DT_FLOAT, "", "experiment");
  EXPECT_NE(v.get(), c.get());
}

TEST_F(RefVariableTest, SharingWithAnotherDtypeFails) {
  MakeVariable("v", DT_FLOAT);
  KernelRunner r(
      NodeBuilder("v", "VariableV2").Attr("dtype", DT_INT32).ShapeAttr("shape", {2}).Build(),
      device());
  EXPECT_STATUS(r.Run({}).status(), absl::StatusCode::kInvalidArgument,
                "already exists with dtype float");
}

TEST_F(RefVariableTest, AssignThenUpdate) {
  auto v = MakeVariable("v", DT_FLOAT);
  auto out = Update(NodeBuilder("init", "Assign").Attr("T", DT_FLOAT), v.get(), {Vec<float>({1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(out->at(0), Vec<float>({1, 2}));  // output_ref
  ExpectTensorEqual(*v->tensor(), Vec<float>({1, 2}));
  ASSERT_TRUE(Update(NodeBuilder("add", "AssignAdd").Attr("T", DT_FLOAT), v.get(), {Vec<float>({10, 20})}).ok());
  ExpectTensorEqual(*v->tensor(), Vec<float>({11, 22}));
  ASSERT_TRUE(Update(NodeBuilder("sub", "AssignSub").Attr("T", DT_FLOAT), v.get(), {Vec<float>({1, 1})}).ok());
  ExpectTensorEqual(*v->tensor(), Vec<float>({10, 21}));
  ASSERT_TRUE(Update(NodeBuilder("gd", "ApplyGradientDescent").Attr("T", DT_FLOAT), v.get(),
                     {Scalar(0.5f), Vec<float>({4, 2})})
                  .ok());
  ExpectTensorEqual(*v->tensor(), Vec<float>({8, 20}));
  // Reading through Identity (a "v/read" node).
  KernelRunner read(NodeBuilder("v/read", "Identity").Input("v").Attr("T", DT_FLOAT).Build(), device());
  auto r = read.RunWithRefInput(v->tensor(), {}, v->mu());
  ASSERT_TRUE(r.ok());
  ExpectTensorEqual(r->at(0), Vec<float>({8, 20}));
}

// MonitoredTrainingSession's readiness check: false until assigned, and
// allowed on the uninitialized ref.
TEST_F(RefVariableTest, IsVariableInitializedBeforeAndAfterAssign) {
  auto v = MakeVariable("v", DT_FLOAT);
  const NodeBuilder is_init =
      NodeBuilder("is_init", "IsVariableInitialized").Attr("dtype", DT_FLOAT);
  auto before = Update(is_init, v.get(), {});
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->at(0).dtype(), DT_BOOL);
  EXPECT_FALSE(before->at(0).scalar<bool>());
  ASSERT_TRUE(Update(NodeBuilder("init", "Assign").Attr("T", DT_FLOAT), v.get(),
                     {Vec<float>({1, 2})}).ok());
  auto after = Update(is_init, v.get(), {});
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(after->at(0).scalar<bool>());
}

TEST_F(RefVariableTest, CountUpToReturnsTheValueBeforeAndStopsAtTheLimit) {
  KernelRunner make(NodeBuilder("c", "VariableV2")
                        .Attr("dtype", DT_INT64)
                        .ShapeAttr("shape", {})
                        .Build(),
                    device());
  ASSERT_TRUE(make.Run({}).ok());
  auto v = device()->resource_manager()->Lookup<Var>("localhost", "c").value();
  const NodeBuilder count =
      NodeBuilder("count", "CountUpTo").Attr("T", DT_INT64).Attr("limit", int64_t{2});
  EXPECT_STATUS(Update(count, v.get(), {}).status(),
                absl::StatusCode::kFailedPrecondition, "uninitialized value");
  ASSERT_TRUE(Update(NodeBuilder("init", "Assign").Attr("T", DT_INT64), v.get(),
                     {Tensor::Scalar<int64_t>(0)}).ok());
  for (int64_t want : {0, 1}) {
    auto out = Update(count, v.get(), {});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->at(0).scalar<int64_t>(), want);
  }
  EXPECT_STATUS(Update(count, v.get(), {}).status(), absl::StatusCode::kOutOfRange,
                "Reached limit of 2");
  EXPECT_EQ(v->tensor()->scalar<int64_t>(), 2);
}

TEST_F(RefVariableTest, ScatterOpsChangeTheNamedRows) {
  auto v = MakeVariable("v", DT_FLOAT);  // shape [2]: rows of one element
  ASSERT_TRUE(Update(NodeBuilder("init", "Assign").Attr("T", DT_FLOAT), v.get(),
                     {Vec<float>({1, 2})}).ok());
  auto scatter = [&](const char* op, const std::vector<int32_t>& idx,
                     const std::vector<float>& updates) {
    return Update(NodeBuilder("s", op).Attr("T", DT_FLOAT).Attr("Tindices", DT_INT32),
                  v.get(), {Vec<int32_t>(idx), Vec<float>(updates)});
  };
  ASSERT_TRUE(scatter("ScatterAdd", {1, 1, 0}, {10, 20, 5}).ok());  // row 1 twice
  ExpectTensorEqual(*v->tensor(), Vec<float>({6, 32}));
  ASSERT_TRUE(scatter("ScatterMul", {0}, {2}).ok());
  ASSERT_TRUE(scatter("ScatterSub", {1}, {2}).ok());
  ExpectTensorEqual(*v->tensor(), Vec<float>({12, 30}));
  ASSERT_TRUE(scatter("ScatterDiv", {1}, {3}).ok());
  ASSERT_TRUE(scatter("ScatterMin", {0}, {4}).ok());
  ASSERT_TRUE(scatter("ScatterMax", {1}, {50}).ok());
  ExpectTensorEqual(*v->tensor(), Vec<float>({4, 50}));
  auto out = scatter("ScatterUpdate", {0}, {7});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(out->at(0), Vec<float>({7, 50}));  // output_ref
  EXPECT_STATUS(scatter("ScatterUpdate", {2}, {1}).status(),
                absl::StatusCode::kInvalidArgument, "indices[0] = 2 is not in [0, 2)");
  EXPECT_STATUS(scatter("ScatterAdd", {0, 1}, {1}).status(),
                absl::StatusCode::kInvalidArgument, "Must have updates.shape");
  ExpectTensorEqual(*v->tensor(), Vec<float>({7, 50}));  // refusals change nothing
}

TEST_F(RefVariableTest, ScatterDivByAnIntegerZeroIsAnError) {
  auto v = MakeVariable("n", DT_INT32);
  ASSERT_TRUE(Update(NodeBuilder("init", "Assign").Attr("T", DT_INT32), v.get(),
                     {Vec<int32_t>({8, -2147483647 - 1})}).ok());
  auto div = [&](const std::vector<int32_t>& idx, const std::vector<int32_t>& by) {
    return Update(NodeBuilder("d", "ScatterDiv").Attr("T", DT_INT32).Attr("Tindices", DT_INT32),
                  v.get(), {Vec<int32_t>(idx), Vec<int32_t>(by)});
  };
  EXPECT_STATUS(div({0}, {0}).status(), absl::StatusCode::kInvalidArgument,
                "division by zero");
  ASSERT_TRUE(div({0, 1}, {2, -1}).ok());  // INT_MIN / -1 wraps
  ExpectTensorEqual(*v->tensor(), Vec<int32_t>({4, -2147483647 - 1}));
}

TEST_F(RefVariableTest, IntegerAndDoubleUpdates) {
  for (DataType dtype : {DT_INT32, DT_INT64, DT_DOUBLE}) {
    auto v = MakeVariable(std::string("v") + DataTypeString(dtype), dtype);
    Tensor init(dtype, TensorShape({2}));
    Tensor delta(dtype, TensorShape({2}));
    if (dtype == DT_INT32) {
      init = Vec<int32_t>({1, 2});
      delta = Vec<int32_t>({5, 5});
    } else if (dtype == DT_INT64) {
      init = Vec<int64_t>({1, 2});
      delta = Vec<int64_t>({5, 5});
    } else {
      init = Vec<double>({1, 2});
      delta = Vec<double>({5, 5});
    }
    ASSERT_TRUE(Update(NodeBuilder("a", "Assign").Attr("T", dtype), v.get(), {init}).ok());
    ASSERT_TRUE(Update(NodeBuilder("b", "AssignAdd").Attr("T", dtype), v.get(), {delta}).ok());
    EXPECT_EQ(v->tensor()->ElementString(1), "7");
  }
}

TEST_F(RefVariableTest, UpdatingAnUninitializedVariableFails) {
  auto v = MakeVariable("v", DT_FLOAT);
  for (const char* op : {"AssignAdd", "AssignSub"}) {
    EXPECT_STATUS(Update(NodeBuilder("u", op).Attr("T", DT_FLOAT), v.get(), {Vec<float>({1, 1})}).status(),
                  absl::StatusCode::kFailedPrecondition, "Attempting to use uninitialized value v");
  }
  EXPECT_STATUS(Update(NodeBuilder("gd", "ApplyGradientDescent").Attr("T", DT_FLOAT), v.get(),
                       {Scalar(0.1f), Vec<float>({1, 1})})
                    .status(),
                absl::StatusCode::kFailedPrecondition, "Attempting to use uninitialized value v");
  KernelRunner read(NodeBuilder("v/read", "Identity").Input("v").Attr("T", DT_FLOAT).Build(), device());
  EXPECT_STATUS(read.RunWithRefInput(v->tensor(), {}, v->mu()).status(),
                absl::StatusCode::kFailedPrecondition, "Attempting to use uninitialized value v");
}

TEST_F(RefVariableTest, ShapeChecks) {
  auto v = MakeVariable("v", DT_FLOAT);
  ASSERT_TRUE(Update(NodeBuilder("a", "Assign").Attr("T", DT_FLOAT), v.get(), {Vec<float>({1, 2})}).ok());
  EXPECT_STATUS(Update(NodeBuilder("a", "Assign").Attr("T", DT_FLOAT), v.get(), {Vec<float>({1, 2, 3})}).status(),
                absl::StatusCode::kInvalidArgument,
                "Assign requires shapes of both tensors to match. lhs shape= [2] rhs shape= [3]");
  // validate_shape=false lets the variable change shape.
  ASSERT_TRUE(Update(NodeBuilder("a", "Assign").Attr("T", DT_FLOAT).Attr("validate_shape", false),
                     v.get(), {Vec<float>({1, 2, 3})})
                  .ok());
  EXPECT_EQ(v->tensor()->shape().DebugString(), "[3]");
  EXPECT_STATUS(Update(NodeBuilder("b", "AssignAdd").Attr("T", DT_FLOAT), v.get(), {Vec<float>({1})}).status(),
                absl::StatusCode::kInvalidArgument, "variable v has shape [3] but the value has shape [1]");
  EXPECT_STATUS(Update(NodeBuilder("gd", "ApplyGradientDescent").Attr("T", DT_FLOAT), v.get(),
                       {Vec<float>({1}), Vec<float>({1, 1, 1})})
                    .status(),
                absl::StatusCode::kInvalidArgument, "alpha is not a scalar");
}

TEST_F(RefVariableTest, UpdatesWriteTheVariablesOwnBufferWhichReadersSee) {
  auto v = MakeVariable("v", DT_FLOAT);
  Tensor value = Vec<float>({1, 2});
  ASSERT_TRUE(Update(NodeBuilder("a", "Assign").Attr("T", DT_FLOAT), v.get(), {value}).ok());
  // Assign copied the value into a buffer of the variable's own.
  EXPECT_FALSE(v->tensor()->SharesBufferWith(value));
  const float* before = v->tensor()->data<float>();
  // A reader (a `v/read` taken earlier in the step) aliases the buffer
  // and sees the update, as in TensorFlow: no copy on write.
  Tensor reader;
  {
    absl::ReaderMutexLock lock(v->mu());
    reader = *v->tensor();
  }
  ASSERT_TRUE(Update(NodeBuilder("b", "AssignAdd").Attr("T", DT_FLOAT), v.get(), {Vec<float>({1, 1})}).ok());
  EXPECT_EQ(v->tensor()->data<float>(), before);  // in place
  ExpectTensorEqual(reader, Vec<float>({2, 3}));
  // A second Assign of the same shape writes into the same buffer.
  ASSERT_TRUE(Update(NodeBuilder("a", "Assign").Attr("T", DT_FLOAT), v.get(), {Vec<float>({5, 6})}).ok());
  EXPECT_EQ(v->tensor()->data<float>(), before);
  ExpectTensorEqual(reader, Vec<float>({5, 6}));
}

TEST_F(RefVariableTest, AnUpdateNeverWritesTheAssignedValue) {
  auto v = MakeVariable("v", DT_FLOAT);
  Tensor value = Vec<float>({1, 2});
  ASSERT_TRUE(Update(NodeBuilder("a", "Assign").Attr("T", DT_FLOAT), v.get(), {value}).ok());
  // An update must not write into the caller's tensor.
  ASSERT_TRUE(Update(NodeBuilder("b", "AssignAdd").Attr("T", DT_FLOAT), v.get(), {Vec<float>({1, 1})}).ok());
  ExpectTensorEqual(value, Vec<float>({1, 2}));
  ExpectTensorEqual(*v->tensor(), Vec<float>({2, 3}));
}

TEST_F(RefVariableTest, StringVariablesCanBeAssigned) {
  auto v = MakeVariable("s", DT_STRING);
  ASSERT_TRUE(Update(NodeBuilder("a", "Assign").Attr("T", DT_STRING), v.get(), {Strings({2}, {"x", "y"})}).ok());
  ExpectTensorEqual(*v->tensor(), Strings({2}, {"x", "y"}));
  EXPECT_EQ(Update(NodeBuilder("b", "AssignAdd").Attr("T", DT_STRING), v.get(), {Strings({2}, {"x", "y"})})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);  // not a number type
}

}  // namespace
}  // namespace weft
