// The client session over a Master in-process (LocalMaster): the same
// session code a gRPC client runs, with no socket; a step past the call's
// timeout is cancelled on every task; a closed LocalMaster refuses calls
// and Close waits for the calls in flight.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "distributed/client_session.h"
#include "distributed/local_master.h"
#include "distributed/master.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/registration.h"
#include "runtime/core/thread_pool.h"
#include "tests/distributed/test_registries.h"
#include "tests/distributed/two_workers.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using ::testing::HasSubstr;
using testing::Attr;
using testing::GraphDefBuilder;

constexpr char kTask[] = "/job:worker/replica:0/task:0";

const OpRegistry& Ops() { return testing::TestOps(); }
const KernelRegistry& Kernels() { return testing::TestKernels(); }

// x -> y = x + c on task 1 -> z = -y on task 0; `stuck` = Block(y) on
// task 1, which waits until its step is cancelled.
tensorflow::GraphDef Graph() {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT, Attr::Shape({2}))
      .ConstF("c", 1.5f)
      .Op("y", "AddV2", {"x", "c"}, {{"T", DT_FLOAT}})
      .Op("z", "Neg", {"y"}, {{"T", DT_FLOAT}})
      .Op("stuck", "Block", {"y"}, {{"T", DT_FLOAT}});
  tensorflow::GraphDef def = b.Build();
  for (tensorflow::NodeDef& n : *def.mutable_node()) {
    if (n.name() == "c" || n.name() == "y" || n.name() == "stuck") {
      n.set_device("/job:worker/task:1");
    }
  }
  return def;
}

Tensor Vector(std::vector<float> values) {
  Tensor t(DT_FLOAT, TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) t.flat<float>()[i] = values[i];
  return t;
}

class LocalMasterTest : public testing::TwoWorkersTest {
 protected:
  LocalMasterTest() {
    ops_ = &Ops();
    kernels_ = &Kernels();
  }

  void SetUp() override {
    TwoWorkersTest::SetUp();
    MasterOptions o;
    o.task = kTask;
    o.cluster = ParseClusterSpec("worker=127.0.0.1:20001,127.0.0.1:20002").value();
    o.workers = &cache_;
    o.ops = &Ops();
    o.kernels = &Kernels();
    o.wait_for_tasks = absl::Seconds(10);
    master_ = std::make_unique<Master>(o);
    pool_ = ThreadPool::Create("local_master", 2).value();
    local_ = std::make_shared<LocalMaster>(master_.get(), pool_.get(), kTask);
  }

  void TearDown() override {
    local_->Close();
    master_.reset();
  }

  std::unique_ptr<Session> NewSession(absl::Duration call_timeout) {
    ClientSessionOptions client;
    client.call_timeout = call_timeout;
    return NewClientSession(local_, SessionOptions(), client);
  }

  std::unique_ptr<Master> master_;
  std::unique_ptr<ThreadPool> pool_;
  std::shared_ptr<LocalMaster> local_;
};

TEST_F(LocalMasterTest, AClientSessionRunsAStepOverBothTasks) {
  std::unique_ptr<Session> s = NewSession(absl::Seconds(30));
  ASSERT_TRUE(s->Create(Graph()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"x", Vector({1.0f, -4.0f})}}, {"z"}, {}, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], -2.5f);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[1], 2.5f);
  EXPECT_EQ(master_->num_sessions(), 1);
  ASSERT_TRUE(s->Close().ok());
  EXPECT_EQ(master_->num_sessions(), 0);
}

TEST_F(LocalMasterTest, AStepErrorComesBackWithItsCode) {
  std::unique_ptr<Session> s = NewSession(absl::Seconds(30));
  ASSERT_TRUE(s->Create(Graph()).ok());
  std::vector<Tensor> out;
  absl::Status st = s->Run({}, {"z"}, {}, &out);  // x is not fed
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(st.message(), HasSubstr("x"));
}

TEST_F(LocalMasterTest, AStepPastTheCallTimeoutIsCancelledAndTheSessionGoesOn) {
  std::unique_ptr<Session> s = NewSession(absl::Milliseconds(300));
  ASSERT_TRUE(s->Create(Graph()).ok());
  std::vector<Tensor> out;
  const absl::Time start = absl::Now();
  absl::Status st = s->Run({{"x", Vector({1.0f, 2.0f})}}, {"stuck"}, {}, &out);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  EXPECT_THAT(st.message(), HasSubstr("RunStep on the in-process master of"));
  EXPECT_THAT(st.message(), HasSubstr("cancelled on every task"));
  // The next step runs: nothing of the cancelled one is left waiting.
  ASSERT_TRUE(s->Run({{"x", Vector({0.0f, 1.0f})}}, {"z"}, {}, &out).ok());
  EXPECT_FLOAT_EQ(out[0].flat<float>()[1], -2.5f);
}

TEST_F(LocalMasterTest, CloseWaitsForCallsInFlightThenRefusesNewOnes) {
  std::unique_ptr<Session> s = NewSession(absl::InfiniteDuration());
  ASSERT_TRUE(s->Create(Graph()).ok());
  absl::Status step_status;
  std::thread step([&] {
    std::vector<Tensor> out;
    step_status = s->Run({{"x", Vector({1.0f, 2.0f})}}, {"stuck"}, {}, &out);
  });
  absl::SleepFor(absl::Milliseconds(300));  // the step is blocked by now
  absl::Notification closed;
  std::thread closer([&] {
    local_->Close();
    closed.Notify();
  });
  EXPECT_FALSE(closed.WaitForNotificationWithTimeout(absl::Milliseconds(300)))
      << "Close returned while a step was still running";
  workers_[1]->AbortAllSteps();  // what a server's Shutdown does first
  EXPECT_TRUE(closed.WaitForNotificationWithTimeout(absl::Seconds(20)));
  step.join();
  closer.join();
  EXPECT_FALSE(step_status.ok());

  tensorflow::ListDevicesRequest req;
  tensorflow::ListDevicesResponse resp;
  absl::Status st = local_->ListDevices({}, req, &resp);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
  EXPECT_THAT(st.message(), HasSubstr(kTask));
  EXPECT_THAT(st.message(), HasSubstr("has shut down"));
}

}  // namespace
}  // namespace weft
