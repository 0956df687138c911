// The prepare pipeline's stages on their own: a Run signature, its client
// graph, and a placed graph made executable on one process's devices.
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "graph/graph_def_loader.h"
#include "gtest/gtest.h"
#include "ops/framework/call_frame.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "runtime/client_graph.h"
#include "runtime/executable_graph.h"
#include "runtime/core/rendezvous.h"
#include "runtime/core/status.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Attr;
using testing::GraphDefBuilder;

TEST(RunSignatureTest, FeedsAreCanonicalAndSortedTargetsSorted) {
  auto sig = RunSignature::Make({"b", "a:1", "a"}, {"y", "x:0", "y"},
                                {"t2", "t1"});
  ASSERT_TRUE(sig.ok()) << sig.status();
  EXPECT_THAT(sig->feeds, ElementsAre("a:0", "a:1", "b:0"));
  EXPECT_THAT(sig->feed_order, ElementsAre(2, 1, 0));
  EXPECT_THAT(sig->fetches, ElementsAre("y", "x:0", "y"));
  EXPECT_THAT(sig->targets, ElementsAre("t1", "t2"));
}

TEST(RunSignatureTest, AFeedGivenTwiceUnderTwoSpellingsIsRefused) {
  auto sig = RunSignature::Make({"x", "x:0"}, {}, {});
  EXPECT_EQ(sig.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(sig.status().message()), HasSubstr("'x:0'"));
}

TEST(RunSignatureTest, KeysDifferWhateverTheNamesHold) {
  // Names holding the separators a joined key would use.
  auto a = RunSignature::Make({}, {"a,b"}, {});
  auto b = RunSignature::Make({}, {"a", "b"}, {});
  auto c = RunSignature::Make({}, {"a"}, {"b"});
  auto d = RunSignature::Make({}, {"a->b"}, {});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok());
  EXPECT_NE(a->Key(), b->Key());
  EXPECT_NE(b->Key(), c->Key());
  EXPECT_NE(a->Key(), d->Key());
  EXPECT_EQ(a->Key(), RunSignature::Make({}, {"a,b"}, {})->Key());
}

tensorflow::GraphDef Sample() {
  GraphDefBuilder b;
  b.Placeholder("x", DT_INT32, Attr::Shape({2}))
      .Const("c", 5)
      .Op("y", "AddV2", {"x", "c"}, {{"T", DT_INT32}})
      .Op("z", "AddV2", {"y", "c"}, {{"T", DT_INT32}});
  return b.Build();
}

TEST(ClientGraphTest, RecordsWhatEachFeedMustHold) {
  auto full = ConvertGraphDefToGraph(Sample(), GlobalOpRegistry());
  ASSERT_TRUE(full.ok()) << full.status();
  auto sig = RunSignature::Make({"y", "x"}, {"z"}, {});
  ASSERT_TRUE(sig.ok());
  auto client = BuildClientGraph(**full, *sig);
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_EQ(client->feeds.size(), 2u);
  EXPECT_EQ(client->feeds[0].name, "x:0");
  EXPECT_TRUE(client->feeds[0].is_placeholder);
  EXPECT_EQ(client->feeds[0].shape.DebugString(), "[2]");
  EXPECT_EQ(client->feeds[1].name, "y:0");
  EXPECT_FALSE(client->feeds[1].is_placeholder);
  EXPECT_EQ(client->num_fetches, 1);

  const FeedSpec& x = client->feeds[0];
  EXPECT_TRUE(x.Check(Tensor(DT_INT32, TensorShape({2}))).ok());
  absl::Status s = x.Check(Tensor(DT_INT32, TensorShape({3})));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("feed 'x:0' has shape [3]"));
  s = x.Check(Tensor(DT_FLOAT, TensorShape({2})));
  EXPECT_THAT(std::string(s.message()), HasSubstr("has dtype float"));
  EXPECT_THAT(std::string(x.Check(Tensor()).message()),
              HasSubstr("uninitialized"));
}

TEST(ClientGraphTest, AnUnknownFetchIsNamed) {
  auto full = ConvertGraphDefToGraph(Sample(), GlobalOpRegistry());
  ASSERT_TRUE(full.ok());
  auto client = BuildClientGraph(**full, *RunSignature::Make({}, {"nope"}, {}));
  EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(client.status().message()), HasSubstr("nope"));
}

class ExecutableGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LocalDeviceOptions options;
    options.num_cpus = 2;
    devices_ = DeviceMgr::NewLocal(options).value();
  }

  // Sample() pruned for x -> z, every node on `device_of(name)`.
  absl::StatusOr<std::unique_ptr<ExecutableGraph>> Build(
      const std::function<std::string(const std::string&)>& device_of) {
    auto full = ConvertGraphDefToGraph(Sample(), GlobalOpRegistry());
    if (!full.ok()) return full.status();
    auto client = BuildClientGraph(**full, *RunSignature::Make({"x"}, {"z"}, {}));
    if (!client.ok()) return client.status();
    for (Node* n : client->graph->nodes()) {
      n->set_assigned_device(device_of(n->name()));
    }
    ExecutableOptions options;
    options.devices = devices_.get();
    options.ops = &GlobalOpRegistry();
    options.kernels = &GlobalKernelRegistry();
    return ExecutableGraph::Create(options, std::move(client->graph));
  }

  // Runs one step feeding x = [1, 2]; returns z.
  absl::StatusOr<Tensor> Run(const ExecutableGraph& exec) {
    Tensor x(DT_INT32, TensorShape({2}));
    x.flat<int32_t>()[0] = 1;
    x.flat<int32_t>()[1] = 2;
    SimpleCallFrame frame({x}, 1);
    CancellationManager cancellation;
    LocalRendezvous rendezvous;
    Executor::StepArgs args;
    args.step_id = 1;
    args.call_frame = &frame;
    args.cancellation = &cancellation;
    if (exec.needs_rendezvous()) args.rendezvous = &rendezvous;
    absl::Notification done;
    absl::Status status;
    exec.RunAsync(args, [&](absl::Status s) {
      status = s;
      done.Notify();
    });
    done.WaitForNotification();
    if (!status.ok()) return status;
    std::vector<Tensor> out;
    WEFT_RETURN_IF_ERROR(frame.TakeRetvals(&out));
    return out.at(0);
  }

  std::string cpu(int i) const { return devices_->devices()[i]->name(); }
  std::unique_ptr<DeviceMgr> devices_;
};

TEST_F(ExecutableGraphTest, OneDeviceIsOneExecutorWithoutRendezvous) {
  auto exec = Build([&](const std::string&) { return cpu(1); });
  ASSERT_TRUE(exec.ok()) << exec.status();
  EXPECT_FALSE((*exec)->needs_rendezvous());
  EXPECT_EQ((*exec)->num_partitions(), 1);
  auto z = Run(**exec);
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->flat<int32_t>()[0], 11);
  EXPECT_EQ(z->flat<int32_t>()[1], 12);
}

TEST_F(ExecutableGraphTest, TwoDevicesArePartitionedAndExchangeTensors) {
  auto exec = Build([&](const std::string& node) {
    return node == "z" ? cpu(1) : cpu(0);
  });
  ASSERT_TRUE(exec.ok()) << exec.status();
  EXPECT_TRUE((*exec)->needs_rendezvous());
  ASSERT_EQ((*exec)->num_partitions(), 2);
  bool has_send = false;
  for (const Node* n : (*exec)->partition(0).nodes()) {
    has_send |= n->type_string() == "_Send";
  }
  for (const Node* n : (*exec)->partition(1).nodes()) {
    has_send |= n->type_string() == "_Send";
  }
  EXPECT_TRUE(has_send);
  auto z = Run(**exec);
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->flat<int32_t>()[1], 12);
}

TEST_F(ExecutableGraphTest, ANodeOnAnotherProcesssDeviceIsNamed) {
  auto exec = Build([&](const std::string& node) {
    return node == "y" ? "/job:worker/replica:0/task:3/device:CPU:0" : cpu(0);
  });
  EXPECT_EQ(exec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(exec.status().message()),
              HasSubstr("node 'y' (AddV2) is assigned to "
                        "'/job:worker/replica:0/task:3/device:CPU:0', a "
                        "device this process does not have"));
}

}  // namespace
}  // namespace weft
