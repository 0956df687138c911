// Resource variables: VarHandleOp, ReadVariableOp, AssignVariableOp,
// AssignAdd/SubVariableOp, ResourceApplyGradientDescent, VarIsInitializedOp,
// DestroyResourceOp, ResourceScatter*, ResourceGather. Runners share one device (one ResourceMgr).
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "runtime/core/resource_mgr.h"
#include "tests/ops/array_test_util.h"

namespace weft {
namespace {

using testing_util::Scalar;
using testing_util::Vec;

class ResourceVariableTest : public ::testing::Test {
 protected:
  ResourceVariableTest() : devices_(DeviceMgr::NewLocal({}).value()) {}
  Device* device() { return devices_->default_device(); }

  Tensor Handle(const std::string& shared_name, DataType dtype = DT_FLOAT,
                const std::string& container = "") {
    KernelRunner r(NodeBuilder("h", "VarHandleOp")
                       .Attr("dtype", dtype)
                       .ShapeAttr("shape", {2})
                       .Attr("shared_name", shared_name)
                       .Attr("container", container)
                       .Build(),
                   device());
    auto out = r.Run({});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? out->at(0) : Tensor();
  }

  absl::StatusOr<std::vector<Tensor>> Run(const NodeBuilder& node,
                                          const std::vector<Tensor>& inputs) {
    KernelRunner r(node.Build(), device());
    return r.Run(inputs);
  }

  absl::Status Assign(const Tensor& h, const Tensor& value) {
    return Run(NodeBuilder("assign", "AssignVariableOp").Attr("dtype", value.dtype()), {h, value})
        .status();
  }

  absl::StatusOr<Tensor> Read(const Tensor& h, DataType dtype = DT_FLOAT) {
    auto out = Run(NodeBuilder("read", "ReadVariableOp").Attr("dtype", dtype), {h});
    if (!out.ok()) return out.status();
    return out->at(0);
  }

  bool IsInitialized(const Tensor& h) {
    auto out = Run(NodeBuilder("init?", "VarIsInitializedOp"), {h});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() && out->at(0).scalar<bool>();
  }

  std::unique_ptr<DeviceMgr> devices_;
};

TEST_F(ResourceVariableTest, HandleNamesTheVariable) {
  Tensor h = Handle("w");
  ASSERT_EQ(h.dtype(), DT_RESOURCE);
  EXPECT_EQ(h.dims(), 0);
  const ResourceHandle& rh = h.scalar<ResourceHandle>();
  EXPECT_EQ(rh.name, "w");
  EXPECT_EQ(rh.container, "localhost");
  EXPECT_EQ(rh.device, device()->name());
  EXPECT_EQ(rh.dtype, DT_FLOAT);
  EXPECT_EQ(Handle("w", DT_FLOAT, "c").scalar<ResourceHandle>().container, "c");
}

TEST_F(ResourceVariableTest, AssignReadUpdate) {
  Tensor h = Handle("w");
  EXPECT_FALSE(IsInitialized(h));
  ASSERT_TRUE(Assign(h, Vec<float>({1, 2})).ok());
  EXPECT_TRUE(IsInitialized(h));
  auto v = Read(h);
  ASSERT_TRUE(v.ok());
  ExpectTensorEqual(*v, Vec<float>({1, 2}));
  ASSERT_TRUE(Run(NodeBuilder("add", "AssignAddVariableOp").Attr("dtype", DT_FLOAT),
                  {h, Vec<float>({10, 10})}).ok());
  ASSERT_TRUE(Run(NodeBuilder("sub", "AssignSubVariableOp").Attr("dtype", DT_FLOAT),
                  {h, Vec<float>({1, 2})}).ok());
  ASSERT_TRUE(Run(NodeBuilder("gd", "ResourceApplyGradientDescent").Attr("T", DT_FLOAT),
                  {h, Scalar(0.5f), Vec<float>({2, 4})}).ok());
  ExpectTensorEqual(*Read(h), Vec<float>({9, 8}));
  // A second handle with the same shared_name reaches the same variable.
  ExpectTensorEqual(*Read(Handle("w")), Vec<float>({9, 8}));
}

TEST_F(ResourceVariableTest, IntegerVariables) {
  Tensor h = Handle("n", DT_INT64);
  ASSERT_TRUE(Assign(h, Vec<int64_t>({1, 2})).ok());
  ASSERT_TRUE(Run(NodeBuilder("add", "AssignAddVariableOp").Attr("dtype", DT_INT64),
                  {h, Vec<int64_t>({3, 3})}).ok());
  ExpectTensorEqual(*Read(h, DT_INT64), Vec<int64_t>({4, 5}));
}

TEST_F(ResourceVariableTest, ResourceCountUpTo) {
  Tensor h = Handle("steps", DT_INT32);
  ASSERT_TRUE(Assign(h, Tensor::Scalar<int32_t>(5)).ok());
  const NodeBuilder count = NodeBuilder("count", "ResourceCountUpTo")
                                .Attr("T", DT_INT32)
                                .Attr("limit", int64_t{6});
  auto out = Run(count, {h});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->at(0).scalar<int32_t>(), 5);
  EXPECT_STATUS(Run(count, {h}).status(), absl::StatusCode::kOutOfRange,
                "Reached limit of 6");
  EXPECT_EQ(Read(h, DT_INT32)->scalar<int32_t>(), 6);
  // A vector is no counter.
  Tensor v = Handle("vec", DT_INT32);
  ASSERT_TRUE(Assign(v, Vec<int32_t>({1, 2})).ok());
  EXPECT_STATUS(Run(count, {v}).status(), absl::StatusCode::kInvalidArgument,
                "must be a scalar");
}

TEST_F(ResourceVariableTest, ResourceScatterChangesTheNamedRows) {
  Tensor h = Handle("table");
  // Three rows of two.
  ASSERT_TRUE(Assign(h, Vec<float>({1, 2, 3, 4, 5, 6}).Reshaped(TensorShape({3, 2}))).ok());
  Tensor before = *Read(h);  // a reader's snapshot keeps its values
  auto scatter = [&](const char* op, const std::vector<int64_t>& idx, Tensor updates) {
    return Run(NodeBuilder("s", op).Attr("dtype", DT_FLOAT).Attr("Tindices", DT_INT64),
               {h, Vec<int64_t>(idx), std::move(updates)});
  };
  // Row 2 named twice: both updates land.
  ASSERT_TRUE(scatter("ResourceScatterAdd", {2, 0, 2},
                      Vec<float>({1, 1, 10, 10, 100, 100}).Reshaped(TensorShape({3, 2})))
                  .ok());
  ExpectTensorEqual(*Read(h), Vec<float>({11, 12, 3, 4, 106, 107}).Reshaped(TensorShape({3, 2})));
  ASSERT_TRUE(scatter("ResourceScatterMul", {1}, Tensor::Scalar<float>(2)).ok());
  ASSERT_TRUE(scatter("ResourceScatterSub", {0}, Vec<float>({1, 2}).Reshaped(TensorShape({1, 2}))).ok());
  ASSERT_TRUE(scatter("ResourceScatterDiv", {2}, Tensor::Scalar<float>(2)).ok());
  ASSERT_TRUE(scatter("ResourceScatterMin", {0}, Vec<float>({5, 50}).Reshaped(TensorShape({1, 2}))).ok());
  ASSERT_TRUE(scatter("ResourceScatterMax", {1}, Vec<float>({7, 0}).Reshaped(TensorShape({1, 2}))).ok());
  ExpectTensorEqual(*Read(h), Vec<float>({5, 10, 7, 8, 53, 53.5}).Reshaped(TensorShape({3, 2})));
  ASSERT_TRUE(scatter("ResourceScatterUpdate", {1}, Tensor::Scalar<float>(-1)).ok());
  ExpectTensorEqual(*Read(h), Vec<float>({5, 10, -1, -1, 53, 53.5}).Reshaped(TensorShape({3, 2})));
  ExpectTensorEqual(before, Vec<float>({1, 2, 3, 4, 5, 6}).Reshaped(TensorShape({3, 2})));
  // Refusals name the variable or the index, and change nothing.
  EXPECT_STATUS(scatter("ResourceScatterAdd", {3}, Tensor::Scalar<float>(1)).status(),
                absl::StatusCode::kInvalidArgument, "indices[0] = 3 is not in [0, 3)");
  EXPECT_STATUS(scatter("ResourceScatterAdd", {0}, Vec<float>({1, 2, 3})).status(),
                absl::StatusCode::kInvalidArgument, "Must have updates.shape");
  EXPECT_STATUS(Run(NodeBuilder("s", "ResourceScatterAdd").Attr("dtype", DT_DOUBLE)
                        .Attr("Tindices", DT_INT32),
                    {h, Vec<int32_t>({0}), Tensor::Scalar<double>(1)}).status(),
                absl::StatusCode::kInvalidArgument, "variable 'table'");
  ExpectTensorEqual(*Read(h), Vec<float>({5, 10, -1, -1, 53, 53.5}).Reshaped(TensorShape({3, 2})));
  EXPECT_STATUS(Run(NodeBuilder("s", "ResourceScatterAdd").Attr("dtype", DT_FLOAT)
                        .Attr("Tindices", DT_INT32),
                    {Handle("never_assigned"), Vec<int32_t>({0}), Tensor::Scalar<float>(1)})
                    .status(),
                absl::StatusCode::kFailedPrecondition, "never_assigned");
}

TEST_F(ResourceVariableTest, ResourceGatherReadsTheNamedRows) {
  Tensor h = Handle("emb");
  ASSERT_TRUE(Assign(h, Vec<float>({1, 2, 3, 4, 5, 6}).Reshaped(TensorShape({3, 2}))).ok());
  auto gather = [&](const Tensor& indices, int64_t batch_dims = 0) {
    return Run(NodeBuilder("g", "ResourceGather")
                   .Attr("dtype", DT_FLOAT)
                   .Attr("Tindices", indices.dtype())
                   .Attr("batch_dims", batch_dims),
               {h, indices});
  };
  auto out = gather(Vec<int32_t>({2, 0, 2, 1}).Reshaped(TensorShape({2, 2})));
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensorEqual(out->at(0), Vec<float>({5, 6, 1, 2, 5, 6, 3, 4})
                                    .Reshaped(TensorShape({2, 2, 2})));
  // batch_dims 1: row i of the variable picks its own columns.
  auto batched = gather(Vec<int64_t>({1, 0, 0}).Reshaped(TensorShape({3, 1})), 1);
  ASSERT_TRUE(batched.ok()) << batched.status();
  ExpectTensorEqual(batched->at(0), Vec<float>({2, 3, 5}).Reshaped(TensorShape({3, 1})));
  EXPECT_STATUS(gather(Vec<int32_t>({3})).status(), absl::StatusCode::kInvalidArgument,
                "indices[0] = 3 is not in [0, 3) (gathering from variable 'emb'");
  EXPECT_STATUS(Run(NodeBuilder("g", "ResourceGather").Attr("dtype", DT_FLOAT)
                        .Attr("Tindices", DT_INT32),
                    {Handle("nothing"), Vec<int32_t>({0})}).status(),
                absl::StatusCode::kFailedPrecondition, "variable 'nothing'");
}

TEST_F(ResourceVariableTest, ReadingBeforeAssignmentNamesTheVariable) {
  Tensor h = Handle("never_set");
  EXPECT_STATUS(Read(h).status(), absl::StatusCode::kFailedPrecondition,
                "Could not find variable 'never_set' (container 'localhost')");
  EXPECT_STATUS(Run(NodeBuilder("add", "AssignAddVariableOp").Attr("dtype", DT_FLOAT),
                    {h, Vec<float>({1, 1})})
                    .status(),
                absl::StatusCode::kFailedPrecondition, "never_set");
}

TEST_F(ResourceVariableTest, DtypeAndShapeErrorsNameTheVariable) {
  Tensor h = Handle("w");
  ASSERT_TRUE(Assign(h, Vec<float>({1, 2})).ok());
  EXPECT_STATUS(Read(h, DT_INT32).status(), absl::StatusCode::kInvalidArgument,
                "Trying to read variable 'w' (container 'localhost') with wrong dtype. "
                "Expected float got int32");
  EXPECT_STATUS(Assign(h, Vec<int32_t>({1, 2})), absl::StatusCode::kInvalidArgument,
                "Trying to assign to variable 'w'");
  EXPECT_STATUS(Run(NodeBuilder("add", "AssignAddVariableOp").Attr("dtype", DT_FLOAT),
                    {h, Vec<float>({1, 1, 1})})
                    .status(),
                absl::StatusCode::kInvalidArgument,
                "Cannot update variable 'w' (container 'localhost') with shape [2] using a "
                "Tensor with shape [3]");
  // validate_shape=true refuses a new shape; the default (false) allows it.
  EXPECT_STATUS(Run(NodeBuilder("assign", "AssignVariableOp")
                        .Attr("dtype", DT_FLOAT)
                        .Attr("validate_shape", true),
                    {h, Vec<float>({1, 2, 3})})
                    .status(),
                absl::StatusCode::kInvalidArgument, "wrong shape. Expected [2] got [3]");
  ASSERT_TRUE(Assign(h, Vec<float>({1, 2, 3})).ok());
  ExpectTensorEqual(*Read(h), Vec<float>({1, 2, 3}));
  EXPECT_STATUS(Run(NodeBuilder("gd", "ResourceApplyGradientDescent").Attr("T", DT_FLOAT),
                    {h, Vec<float>({1}), Vec<float>({1, 1, 1})})
                    .status(),
                absl::StatusCode::kInvalidArgument, "alpha is not a scalar");
}

TEST_F(ResourceVariableTest, ReadersKeepTheirValueAcrossUpdates) {
  Tensor h = Handle("w");
  ASSERT_TRUE(Assign(h, Vec<float>({1, 2})).ok());
  auto var = device()->resource_manager()->Lookup<Var>("localhost", "w");
  ASSERT_TRUE(var.ok());
  // Unshared: updated in place.
  ASSERT_TRUE(Run(NodeBuilder("add", "AssignAddVariableOp").Attr("dtype", DT_FLOAT),
                  {h, Vec<float>({1, 1})}).ok());
  const float* before = (*var)->tensor()->data<float>();
  ASSERT_TRUE(Run(NodeBuilder("add", "AssignAddVariableOp").Attr("dtype", DT_FLOAT),
                  {h, Vec<float>({1, 1})}).ok());
  EXPECT_EQ((*var)->tensor()->data<float>(), before);
  // A read value holds the buffer: the next update copies on write.
  Tensor snapshot = *Read(h);
  EXPECT_TRUE(snapshot.SharesBufferWith(*(*var)->tensor()));  // the read did not copy
  ASSERT_TRUE(Run(NodeBuilder("add", "AssignAddVariableOp").Attr("dtype", DT_FLOAT),
                  {h, Vec<float>({1, 1})}).ok());
  ExpectTensorEqual(snapshot, Vec<float>({3, 4}));
  ExpectTensorEqual(*Read(h), Vec<float>({4, 5}));
}

TEST_F(ResourceVariableTest, ConcurrentUpdatesAndReads) {
#if defined(WEFT_TSAN)
  // Debian's Abseil is not built with ThreadSanitizer annotations, so TSAN
  // cannot see absl::Mutex and reports the mutex-protected updates as races.
  GTEST_SKIP() << "absl::Mutex is invisible to this ThreadSanitizer build";
#endif
  Tensor h = Handle("counter", DT_INT64);
  ASSERT_TRUE(Assign(h, Vec<int64_t>({0, 0})).ok());
  constexpr int kThreads = 4, kSteps = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      KernelRunner add(NodeBuilder("add", "AssignAddVariableOp").Attr("dtype", DT_INT64).Build(),
                       device());
      KernelRunner read(NodeBuilder("read", "ReadVariableOp").Attr("dtype", DT_INT64).Build(),
                        device());
      for (int i = 0; i < kSteps; ++i) {
        ASSERT_TRUE(add.Run({h, Vec<int64_t>({1, 2})}).ok());
        auto v = read.Run({h});
        ASSERT_TRUE(v.ok());
        // A snapshot is consistent: both elements come from the same update.
        EXPECT_EQ(v->at(0).data<int64_t>()[1], 2 * v->at(0).data<int64_t>()[0]) << t;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ExpectTensorEqual(*Read(h, DT_INT64), Vec<int64_t>({kThreads * kSteps, 2 * kThreads * kSteps}));
}

TEST_F(ResourceVariableTest, Destroy) {
  Tensor h = Handle("w");
  ASSERT_TRUE(Assign(h, Vec<float>({1, 2})).ok());
  ASSERT_TRUE(Run(NodeBuilder("d", "DestroyResourceOp"), {h}).ok());
  EXPECT_FALSE(IsInitialized(h));
  EXPECT_EQ(Read(h).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Run(NodeBuilder("d", "DestroyResourceOp"), {h}).ok());  // ignore_lookup_error
  EXPECT_STATUS(Run(NodeBuilder("d", "DestroyResourceOp").Attr("ignore_lookup_error", false), {h})
                    .status(),
                absl::StatusCode::kNotFound, "Cannot destroy variable 'w'");
}

TEST_F(ResourceVariableTest, HandlesFromAnotherDeviceAreRejected) {
  Tensor h = Handle("w");
  Tensor other(DT_RESOURCE, TensorShape());
  other.scalar<ResourceHandle>() = h.scalar<ResourceHandle>();
  other.scalar<ResourceHandle>().device = "/job:elsewhere/replica:0/task:3/device:CPU:0";
  EXPECT_STATUS(Read(other).status(), absl::StatusCode::kInvalidArgument,
                "located on device /job:elsewhere");
  EXPECT_STATUS(Read(Vec<float>({1})).status(), absl::StatusCode::kInvalidArgument,
                "must be a scalar resource handle");
}

}  // namespace
}  // namespace weft
