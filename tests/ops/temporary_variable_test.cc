// TemporaryVariable and DestroyTemporaryVariable: the variable lives in the
// step's container under var_name (or the node's name), starts as zeros of
// its shape, is ALREADY_EXISTS when made twice in a step, and
// DestroyTemporaryVariable hands back its value and removes it; errors for
// a missing var_name and an unknown shape.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "runtime/core/resource_mgr.h"

namespace weft {
namespace {

class TemporaryVariableTest : public ::testing::Test {
 protected:
  TemporaryVariableTest() : devices_(DeviceMgr::NewLocal({}).value()) {}
  Device* device() { return devices_->default_device(); }

  std::shared_ptr<Var> Find(const std::string& name) {
    for (const std::string& entry : device()->resource_manager()->List()) {
      if (absl::StartsWith(entry, "__per_step_") && absl::EndsWith(entry, "/" + name)) {
        const std::string container = entry.substr(0, entry.size() - name.size() - 1);
        auto var = device()->resource_manager()->Lookup<Var>(container, name);
        if (var.ok()) return *var;
      }
    }
    return nullptr;
  }

  std::unique_ptr<DeviceMgr> devices_;
};

TEST_F(TemporaryVariableTest, LivesUntilDestroyed) {
  KernelRunner make(NodeBuilder("tmp", "TemporaryVariable")
                        .Attr("dtype", DT_FLOAT)
                        .ShapeAttr("shape", {2, 3})
                        .Attr("var_name", std::string("acc"))
                        .Build(),
                    device());
  auto out = make.Run({});
  ASSERT_TRUE(out.ok()) << out.status();
  std::shared_ptr<Var> var = Find("acc");
  ASSERT_NE(var, nullptr);
  ASSERT_EQ(var->tensor()->shape(), TensorShape({2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(var->tensor()->data<float>()[i], 0.0f);
  var->tensor()->data<float>()[4] = 7.0f;

  // A second creation in the same step.
  auto twice = make.Run({});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kAlreadyExists) << twice.status();

  KernelRunner destroy(NodeBuilder("d", "DestroyTemporaryVariable")
                           .Input("tmp")
                           .Attr("T", DT_FLOAT)
                           .Attr("var_name", std::string("acc"))
                           .Build(),
                       device());
  auto value = destroy.RunWithRefInput(var->tensor(), {}, var->mu());
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ((*value)[0].data<float>()[4], 7.0f);
  EXPECT_EQ(Find("acc"), nullptr);
  // Destroying again: it is gone.
  auto again = destroy.RunWithRefInput(var->tensor(), {}, var->mu());
  EXPECT_FALSE(again.ok());
}

TEST_F(TemporaryVariableTest, NameDefaultsToTheNode) {
  KernelRunner make(NodeBuilder("node_name", "TemporaryVariable")
                        .Attr("dtype", DT_INT32)
                        .ShapeAttr("shape", {4})
                        .Build(),
                    device());
  ASSERT_TRUE(make.Run({}).ok());
  EXPECT_NE(Find("node_name"), nullptr);
}

TEST_F(TemporaryVariableTest, Errors) {
  KernelRunner unknown(NodeBuilder("u", "TemporaryVariable")
                           .Attr("dtype", DT_FLOAT)
                           .ShapeAttr("shape", {-1, 2})
                           .Build(),
                       device());
  auto out = unknown.Run({});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "fully defined shape"))
      << out.status();

  Tensor t(DT_FLOAT, TensorShape({1}));
  KernelRunner destroy(NodeBuilder("d", "DestroyTemporaryVariable")
                           .Input("x")
                           .Attr("T", DT_FLOAT)
                           .Attr("var_name", std::string(""))
                           .Build(),
                       device());
  auto missing = destroy.RunWithRefInput(&t, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "Missing var_name attribute"))
      << missing.status();
}

}  // namespace
}  // namespace weft
