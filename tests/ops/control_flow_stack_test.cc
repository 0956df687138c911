// The StackV2 family (what a v1 while loop's gradient keeps forward values
// in), ControlTrigger and the Ref* control-flow kernels.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "runtime/core/device.h"
#include "runtime/core/resource_mgr.h"
#include "tests/ops/array_test_util.h"

namespace weft {
namespace {

using testing_util::RunOk;
using testing_util::Scalar;
using testing_util::Vec;

// Kernels sharing one device, so they see the same stacks.
class StackTest : public ::testing::Test {
 protected:
  StackTest() : devices_(DeviceMgr::NewLocal({}).value()) {}
  Device* device() { return devices_->default_device(); }

  Tensor NewStack(int32_t max_size, DataType type = DT_FLOAT) {
    KernelRunner r(NodeBuilder("stack", "StackV2")
                       .Attr("elem_type", type)
                       .Attr("stack_name", "s")
                       .Build(),
                   device());
    auto out = r.Run({Scalar<int32_t>(max_size)});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? out->at(0) : Tensor();
  }
  absl::StatusOr<std::vector<Tensor>> Push(const Tensor& h, const Tensor& v) {
    KernelRunner r(NodeBuilder("push", "StackPushV2").Attr("T", v.dtype()).Build(),
                   device());
    return r.Run({h, v});
  }
  absl::StatusOr<std::vector<Tensor>> Pop(const Tensor& h,
                                          DataType type = DT_FLOAT) {
    KernelRunner r(NodeBuilder("pop", "StackPopV2").Attr("elem_type", type).Build(),
                   device());
    return r.Run({h});
  }
  absl::Status Close(const Tensor& h) {
    KernelRunner r(NodeBuilder("close", "StackCloseV2").Build(), device());
    return r.Run({h}).status();
  }

  std::unique_ptr<DeviceMgr> devices_;
};

TEST_F(StackTest, PopsInReverseOrderOfPushes) {
  Tensor h = NewStack(-1);
  ASSERT_EQ(h.dtype(), DT_RESOURCE);
  EXPECT_EQ(h.scalar<ResourceHandle>().container, StepContainerName(0));
  for (float v : {1.f, 2.f, 3.f}) {
    auto out = Push(h, Vec<float>({v}));
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectTensorEqual(out->at(0), Vec<float>({v}));  // passes the value on
  }
  for (float v : {3.f, 2.f, 1.f}) {
    auto out = Pop(h);
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectTensorEqual(out->at(0), Vec<float>({v}));
  }
  EXPECT_STATUS(Pop(h).status(), absl::StatusCode::kInvalidArgument, "is empty");
}

TEST_F(StackTest, EachRunMakesANewStack) {
  Tensor a = NewStack(-1);
  Tensor b = NewStack(-1);
  EXPECT_NE(a.scalar<ResourceHandle>().name, b.scalar<ResourceHandle>().name);
  ASSERT_TRUE(Push(a, Vec<float>({1})).ok());
  EXPECT_STATUS(Pop(b).status(), absl::StatusCode::kInvalidArgument, "is empty");
}

TEST_F(StackTest, ChecksTypeAndMaxSize) {
  Tensor h = NewStack(1);
  EXPECT_STATUS(Push(h, Vec<int32_t>({1})).status(),
                absl::StatusCode::kInvalidArgument, "holds float but was pushed a value of type int32");
  ASSERT_TRUE(Push(h, Vec<float>({1})).ok());
  EXPECT_STATUS(Push(h, Vec<float>({2})).status(),
                absl::StatusCode::kInvalidArgument, "max_size of 1");
  EXPECT_STATUS(Pop(h, DT_INT32).status(), absl::StatusCode::kInvalidArgument,
                "StackPopV2 expects int32");
}

TEST_F(StackTest, CloseDropsTheStack) {
  Tensor h = NewStack(-1);
  ASSERT_TRUE(Push(h, Vec<float>({1})).ok());
  EXPECT_FALSE(device()->resource_manager()->List().empty());
  ASSERT_TRUE(Close(h).ok());
  EXPECT_TRUE(device()->resource_manager()->List().empty());
  EXPECT_STATUS(Pop(h).status(), absl::StatusCode::kNotFound, "does not exist");
  EXPECT_TRUE(Close(h).ok());  // closing twice is harmless
}

TEST(ControlTriggerTest, DoesNothing) {
  EXPECT_TRUE(RunOk(NodeBuilder("t", "ControlTrigger"), {}).empty());
}

TEST(RefControlFlowTest, ForwardTheRef) {
  for (const char* op : {"RefEnter", "RefExit", "RefNextIteration", "RefIdentity"}) {
    NodeBuilder node("r", op);
    node.Attr("T", DT_INT32);
    if (std::string(op) == "RefEnter") node.Attr("frame_name", "w");
    KernelRunner r(node.Build());
    Tensor var = Vec<int32_t>({4});
    auto out = r.RunWithRefInput(&var, {});
    ASSERT_TRUE(out.ok()) << op << ": " << out.status();
    ExpectTensorEqual(out->at(0), var);
  }
  KernelRunner sw(NodeBuilder("s", "RefSwitch").Attr("T", DT_INT32).Build());
  Tensor var = Vec<int32_t>({4});
  auto out = sw.RunWithRefInput(&var, {Scalar(true)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->at(0).IsInitialized());
  ExpectTensorEqual(out->at(1), var);
  KernelRunner m(NodeBuilder("m", "RefMerge").Attr("T", DT_INT32).Attr("N", 1).Build());
  out = m.RunWithRefInput(&var, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(out->at(0), var);
  ExpectTensorEqual(out->at(1), Scalar<int32_t>(0));
}

}  // namespace
}  // namespace weft
