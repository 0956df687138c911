// The MasterService in-process over two in-process workers: sessions whose
// steps span both tasks, state that outlives sessions until Reset, and the
// ways a step or a session ends badly (a failing node, a deadline, a task
// that never answers), each with an error naming what to fix.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "distributed/master.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/registration.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/core/thread_pool.h"
#include "runtime/local_session.h"
#include "tests/distributed/test_registries.h"
#include "tests/distributed/two_workers.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using ::testing::HasSubstr;
using testing::Attr;
using testing::GraphDefBuilder;

const OpRegistry& Ops() { return testing::TestOps(); }
const KernelRegistry& Kernels() { return testing::TestKernels(); }

// x -> y = x + c on task 1 -> z = -y (unconstrained: the master's task).
tensorflow::GraphDef Sample() {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT, Attr::Shape({2}))
      .ConstF("c", 1.5f)
      .Op("y", "AddV2", {"x", "c"}, {{"T", DT_FLOAT}})
      .Op("z", "Neg", {"y"}, {{"T", DT_FLOAT}});
  tensorflow::GraphDef def = b.Build();
  for (tensorflow::NodeDef& n : *def.mutable_node()) {
    if (n.name() == "c" || n.name() == "y") n.set_device("/job:worker/task:1");
  }
  return def;
}

// Sample() with w = -op(y): `name`, of type `op`, on task 1.
tensorflow::GraphDef SampleThrough(const std::string& name, const std::string& op) {
  tensorflow::GraphDef def = Sample();
  GraphDefBuilder extra;
  extra.Op(name, op, {"y"}, {{"T", DT_FLOAT}}).Op("w", "Neg", {name}, {{"T", DT_FLOAT}});
  const tensorflow::GraphDef added = extra.Build();
  for (auto n : added.node()) {
    if (n.name() == name) n.set_device("/job:worker/task:1");
    *def.add_node() = n;
  }
  return def;
}

// A variable v on task 1, assigned from x; read by the client's task.
tensorflow::GraphDef VariableGraph() {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT, Attr::Shape({2}))
      .Op("v", "VariableV2", {}, {{"dtype", DT_FLOAT}, {"shape", Attr::Shape({2})}})
      .Op("assign", "Assign", {"v", "x"}, {{"T", DT_FLOAT}})
      .Op("read", "Identity", {"v"}, {{"T", DT_FLOAT}});
  tensorflow::GraphDef def = b.Build();
  for (auto& n : *def.mutable_node()) {
    if (n.name() == "v" || n.name() == "assign") n.set_device("/job:worker/task:1");
  }
  return def;
}

tensorflow::TensorProto Proto(std::vector<float> values) {
  Tensor t(DT_FLOAT, TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) t.flat<float>()[i] = values[i];
  tensorflow::TensorProto p;
  TensorToProto(t, &p);
  return p;
}

std::vector<float> Values(const tensorflow::TensorProto& p) {
  Tensor t = TensorFromProto(p).value();
  std::vector<float> out;
  for (int64_t i = 0; i < t.NumElements(); ++i) out.push_back(t.flat<float>()[i]);
  return out;
}

class MasterTest : public testing::TwoWorkersTest {
 protected:
  MasterTest() {
    ops_ = &Ops();
    kernels_ = &Kernels();
  }

  void SetUp() override {
    TwoWorkersTest::SetUp();
    master_ = NewMaster("worker=127.0.0.1:20001,127.0.0.1:20002");
  }

  std::unique_ptr<Master> NewMaster(const std::string& cluster,
                                    absl::Duration wait = absl::Seconds(10)) {
    MasterOptions o;
    o.task = "/job:worker/replica:0/task:0";
    o.cluster = ParseClusterSpec(cluster).value();
    o.workers = &cache_;
    o.ops = &Ops();
    o.kernels = &Kernels();
    o.wait_for_tasks = wait;
    o.wait_log_interval = absl::Milliseconds(100);
    o.log = [this](absl::string_view line) {
      absl::MutexLock lock(&log_mu_);
      log_.emplace_back(line);
    };
    return std::make_unique<Master>(o);
  }

  std::string Log() {
    absl::MutexLock lock(&log_mu_);
    return absl::StrJoin(log_, "\n");
  }

  absl::StatusOr<std::string> Create(const tensorflow::GraphDef& graph,
                                     Master* master = nullptr,
                                     tensorflow::ConfigProto config = {}) {
    tensorflow::CreateSessionRequest req;
    *req.mutable_graph_def() = graph;
    *req.mutable_config() = config;
    tensorflow::CreateSessionResponse resp;
    absl::Status s = (master ? master : master_.get())->CreateSession(req, &resp);
    if (!s.ok()) return s;
    return resp.session_handle();
  }

  // One RunStep; the fetched values in fetch order. With `async_pool`,
  // through RunStepAsync, waiting at most 30 s for its answer.
  absl::StatusOr<std::vector<std::vector<float>>> Run(
      const std::string& handle,
      std::vector<std::pair<std::string, std::vector<float>>> feeds,
      std::vector<std::string> fetches, std::vector<std::string> targets = {},
      int64_t timeout_ms = 0, ThreadPool* async_pool = nullptr) {
    // Shared with the answer, which may come after the wait gave up.
    struct Call {
      tensorflow::RunStepRequest req;
      tensorflow::RunStepResponse resp;
      absl::Status status;
      absl::Notification done;
    };
    auto call = std::make_shared<Call>();
    tensorflow::RunStepRequest& req = call->req;
    req.set_session_handle(handle);
    for (auto& [name, values] : feeds) {
      auto* f = req.add_feed();
      f->set_name(name);
      *f->mutable_tensor() = Proto(values);
    }
    for (auto& f : fetches) req.add_fetch(f);
    for (auto& t : targets) req.add_target(t);
    req.mutable_options()->set_timeout_in_ms(timeout_ms);
    tensorflow::RunStepResponse& resp = call->resp;
    absl::Status s;
    if (async_pool == nullptr) {
      s = master_->RunStep(req, &resp);
    } else {
      master_->RunStepAsync(req, &resp, async_pool, [call](absl::Status s) {
        call->status = s;
        call->done.Notify();
      });
      if (!call->done.WaitForNotificationWithTimeout(absl::Seconds(30))) {
        return absl::DeadlineExceededError("RunStepAsync did not answer in 30 s");
      }
      s = call->status;
    }
    if (!s.ok()) return s;
    std::vector<std::vector<float>> out;
    for (int j = 0; j < resp.tensor_size(); ++j) {
      EXPECT_EQ(resp.tensor(j).name(), fetches[j]);
      out.push_back(Values(resp.tensor(j).tensor()));
    }
    return out;
  }

  absl::Mutex log_mu_;
  std::vector<std::string> log_;
  std::unique_ptr<Master> master_;
};

TEST_F(MasterTest, AStepSpansBothTasksWithTheLocalSessionsNumbers) {
  auto handle = Create(Sample());
  ASSERT_TRUE(handle.ok()) << handle.status();
  EXPECT_EQ(handle->size(), 16u);
  for (int run = 0; run < 2; ++run) {  // the second reuses the plan
    auto got = Run(*handle, {{"x", {2.0f, -4.0f}}}, {"z", "y", "z"});
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 3u);
    EXPECT_EQ((*got)[0], (std::vector<float>{-3.5f, 2.5f}));
    EXPECT_EQ((*got)[1], (std::vector<float>{3.5f, -2.5f}));
    EXPECT_EQ((*got)[2], (*got)[0]);
  }

  // The same graph in a local session (no task 1 there).
  tensorflow::GraphDef local_def = Sample();
  for (auto& n : *local_def.mutable_node()) n.clear_device();
  LocalSession local(SessionOptions(), Ops(), Kernels());
  ASSERT_TRUE(local.Create(local_def).ok());
  Tensor x = TensorFromProto(Proto({2.0f, -4.0f})).value();
  std::vector<Tensor> want;
  ASSERT_TRUE(local.Run({{"x", x}}, {"z"}, {}, &want).ok());
  EXPECT_EQ(want[0].flat<float>()[0], -3.5f);
  EXPECT_EQ(want[0].flat<float>()[1], 2.5f);

  // A step leaves nothing behind on either task.
  EXPECT_EQ(workers_[0]->num_step_rendezvous(), 0);
  EXPECT_EQ(workers_[1]->num_step_rendezvous(), 0);
}

TEST_F(MasterTest, VariablesOnATaskOutliveSessionsUntilReset) {
  const tensorflow::GraphDef def = VariableGraph();
  auto a = Create(def);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(Run(*a, {{"x", {7.0f, 8.0f}}}, {}, {"assign"}).ok());
  // A feed the step does not need is accepted (nothing on the client task
  // runs), as TensorFlow accepts it.
  absl::Status unused = Run(*a, {{"x", {1.0f, 1.0f}}}, {}, {"v"}).status();
  EXPECT_TRUE(unused.ok()) << unused;

  // Another client's session on the same cluster sees the value.
  auto b2 = Create(def);
  ASSERT_TRUE(b2.ok());
  auto got = Run(*b2, {}, {"read"});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0], (std::vector<float>{7.0f, 8.0f}));

  // Reset clears the containers on every task and closes every session.
  tensorflow::ResetRequest reset;
  tensorflow::ResetResponse ignored;
  ASSERT_TRUE(master_->Reset(reset, &ignored).ok());
  EXPECT_EQ(master_->num_sessions(), 0);
  EXPECT_TRUE(absl::IsAborted(Run(*b2, {}, {"read"}).status()));
  auto c = Create(def);
  ASSERT_TRUE(c.ok());
  got = Run(*c, {}, {"read"});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("uninitialized"));
}

TEST_F(MasterTest, AnIsolatedSessionSeesNoOtherSessionsVariablesNorShowsItsOwn) {
  const tensorflow::GraphDef def = VariableGraph();
  tensorflow::ConfigProto isolated;
  isolated.set_isolate_session_state(true);
  auto shared = Create(def);
  ASSERT_TRUE(shared.ok()) << shared.status();
  ASSERT_TRUE(Run(*shared, {{"x", {7.0f, 8.0f}}}, {}, {"assign"}).ok());
  // Made after the shared session set v: it still sees none of it.
  auto own = Create(def, nullptr, isolated);
  ASSERT_TRUE(own.ok()) << own.status();
  auto got = Run(*own, {}, {"read"});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition) << got.status();
  // Its own value stays its own.
  ASSERT_TRUE(Run(*own, {{"x", {1.0f, 2.0f}}}, {}, {"assign"}).ok());
  got = Run(*own, {}, {"read"});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0], (std::vector<float>{1.0f, 2.0f}));
  got = Run(*shared, {}, {"read"});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0], (std::vector<float>{7.0f, 8.0f}));
  auto other = Create(def, nullptr, isolated);  // another isolated one
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(Run(*other, {}, {"read"}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// RunStepAsync answers as RunStep does. A step of a signature that is
// registered needs no pool thread: it runs while the pool's only thread is
// held. The signature's first step and a failed step (which is aborted
// everywhere) use the pool.
TEST_F(MasterTest, AsyncStepsOfARegisteredSignatureNeedNoWaitingThread) {
  std::unique_ptr<ThreadPool> pool = ThreadPool::Create("held", 1).value();
  tensorflow::GraphDef def = Sample();
  GraphDefBuilder extra;
  extra.Op("bad", "Fail", {"y"}, {{"T", DT_FLOAT}});
  const tensorflow::GraphDef added = extra.Build();
  for (auto n : added.node()) {
    n.set_device("/job:worker/task:1");
    *def.add_node() = n;
  }
  auto handle = Create(def);
  ASSERT_TRUE(handle.ok()) << handle.status();
  auto got = Run(*handle, {{"x", {1.0f, 2.0f}}}, {"z"}, {}, 0, pool.get());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0], (std::vector<float>{-2.5f, -3.5f}));

  absl::Notification held, release;
  pool->Schedule([&] {
    held.Notify();
    release.WaitForNotification();
  });
  held.WaitForNotification();
  for (int i = 0; i < 3; ++i) {
    got = Run(*handle, {{"x", {3.0f, float(i)}}}, {"z"}, {}, 0, pool.get());
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ((*got)[0], (std::vector<float>{-4.5f, -1.5f - i}));
  }
  release.Notify();

  // The first registers the signature, the second runs it as registered.
  for (int i = 0; i < 2; ++i) {
    got = Run(*handle, {{"x", {1.0f, 2.0f}}}, {"bad"}, {}, 0, pool.get());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(got.status().message()),
                HasSubstr("/job:worker/replica:0/task:1"));
    EXPECT_THAT(std::string(got.status().message()), HasSubstr("boom from bad"));
  }
  got = Run(*handle, {{"x", {1.0f, 2.0f}}}, {"z"}, {}, 0, pool.get());
  ASSERT_TRUE(got.ok()) << got.status();  // the session still serves
}

TEST_F(MasterTest, AFailingNodeIsReportedFromItsTaskNotTheAbortsItCaused) {
  const tensorflow::GraphDef def = SampleThrough("bad", "Fail");
  auto handle = Create(def);
  ASSERT_TRUE(handle.ok());
  auto got = Run(*handle, {{"x", {1.0f, 2.0f}}}, {"w", "z"});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("/job:worker/replica:0/task:1"));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("boom from bad"));
  // The session still serves.
  got = Run(*handle, {{"x", {1.0f, 2.0f}}}, {"z"});
  ASSERT_TRUE(got.ok()) << got.status();

  // A bad feed is named as the client named it, before any task runs.
  got = Run(*handle, {{"x", {1.0f, 2.0f, 3.0f}}}, {"z"});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("feed 'x:0'"));

  // The master checks a feed's bytes without decoding them: content that
  // does not fill the shape is named too.
  tensorflow::RunStepRequest req;
  req.set_session_handle(*handle);
  auto* feed = req.add_feed();
  feed->set_name("x");
  *feed->mutable_tensor() = Proto({1.0f, 2.0f});
  feed->mutable_tensor()->mutable_tensor_content()->resize(7);
  req.add_fetch("z");
  tensorflow::RunStepResponse resp;
  const absl::Status short_feed = master_->RunStep(req, &resp);
  EXPECT_EQ(short_feed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(short_feed.message()),
              HasSubstr("feed 'x': TensorProto tensor_content has 7 bytes"));
}

TEST_F(MasterTest, AStepPastItsDeadlineIsAbortedOnEveryTask) {
  const tensorflow::GraphDef def = SampleThrough("stuck", "Block");
  auto handle = Create(def);
  ASSERT_TRUE(handle.ok());
  const absl::Time start = absl::Now();
  auto got = Run(*handle, {{"x", {1.0f, 2.0f}}}, {"w"}, {}, /*timeout_ms=*/200);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("200 ms"));
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("/job:worker/replica:0/task:1"));
  EXPECT_EQ(workers_[1]->num_step_rendezvous(), 0);
}

// A task that is paused (SIGSTOP): once paused, it answers no RunGraph,
// CleanupGraph or DeleteWorkerSession until Resume; the other calls go
// through to `inner`.
class PausedWorker final : public WorkerInterface {
 public:
  explicit PausedWorker(WorkerInterface* inner) : inner_(inner) {}
  ~PausedWorker() override { Resume(); }
  void Pause() {
    absl::MutexLock lock(&mu_);
    paused_ = true;
  }
  // Answers what it held back (ABORTED, as a task that restarted would).
  void Resume() {
    std::vector<Done> held;
    {
      absl::MutexLock lock(&mu_);
      paused_ = false;
      held.swap(held_);
    }
    for (Done& d : held) d(absl::AbortedError("resumed"));
  }
  void GetStatusAsync(const tensorflow::GetStatusRequest* q,
                      tensorflow::GetStatusResponse* r, Done d) override {
    inner_->GetStatusAsync(q, r, std::move(d));
  }
  void CreateWorkerSessionAsync(const tensorflow::CreateWorkerSessionRequest* q,
                                tensorflow::CreateWorkerSessionResponse* r,
                                Done d) override {
    inner_->CreateWorkerSessionAsync(q, r, std::move(d));
  }
  void DeleteWorkerSessionAsync(const tensorflow::DeleteWorkerSessionRequest* q,
                                tensorflow::DeleteWorkerSessionResponse* r,
                                Done d) override {
    if (!Hold(&d)) inner_->DeleteWorkerSessionAsync(q, r, std::move(d));
  }
  void RegisterGraphAsync(const tensorflow::RegisterGraphRequest* q,
                          tensorflow::RegisterGraphResponse* r, Done d) override {
    inner_->RegisterGraphAsync(q, r, std::move(d));
  }
  void DeregisterGraphAsync(const tensorflow::DeregisterGraphRequest* q,
                            tensorflow::DeregisterGraphResponse* r,
                            Done d) override {
    inner_->DeregisterGraphAsync(q, r, std::move(d));
  }
  void RunGraphAsync(const tensorflow::RunGraphRequest* q,
                     tensorflow::RunGraphResponse* r, Done d) override {
    if (!Hold(&d)) inner_->RunGraphAsync(q, r, std::move(d));
  }
  void CleanupGraphAsync(const tensorflow::CleanupGraphRequest* q,
                         tensorflow::CleanupGraphResponse* r, Done d) override {
    if (!Hold(&d)) inner_->CleanupGraphAsync(q, r, std::move(d));
  }
  void CleanupAllAsync(const tensorflow::CleanupAllRequest* q,
                       tensorflow::CleanupAllResponse* r, Done d) override {
    inner_->CleanupAllAsync(q, r, std::move(d));
  }
  void RecvTensorAsync(const tensorflow::RecvTensorRequest* q,
                       tensorflow::RecvTensorResponse* r, Done d) override {
    inner_->RecvTensorAsync(q, r, std::move(d));
  }

 private:
  bool Hold(Done* d) {
    absl::MutexLock lock(&mu_);
    if (paused_) held_.push_back(std::move(*d));
    return paused_;
  }
  WorkerInterface* const inner_;
  absl::Mutex mu_;
  bool paused_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Done> held_ ABSL_GUARDED_BY(mu_);
};

TEST_F(MasterTest, APausedTaskHoldsAFailedStepAndCloseOnlyForTheAbortWait) {
  PausedWorker paused(workers_[1].get());
  cache_.Add("/job:worker/replica:0/task:1", &paused);
  auto handle = Create(Sample());
  ASSERT_TRUE(handle.ok()) << handle.status();
  ASSERT_TRUE(Run(*handle, {{"x", {1.0f, 2.0f}}}, {"z"}).ok());
  paused.Pause();
  // The step's deadline passes, its abort goes unanswered: the error comes
  // after the 5 s abort wait, not the 60 s call timeout, naming the task.
  absl::Time start = absl::Now();
  auto got = Run(*handle, {{"x", {1.0f, 2.0f}}}, {"z"}, {}, /*timeout_ms=*/200);
  EXPECT_LT(absl::Now() - start, absl::Seconds(15));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("/job:worker/replica:0/task:1 did not stop within 5s"));
  tensorflow::CloseSessionRequest close;
  close.set_session_handle(*handle);
  tensorflow::CloseSessionResponse closed;
  start = absl::Now();
  const absl::Status s = master_->CloseSession(close, &closed);
  EXPECT_LT(absl::Now() - start, absl::Seconds(15));
  EXPECT_TRUE(s.ok()) << s;  // closed here whatever the task says
  paused.Resume();
  cache_.Add("/job:worker/replica:0/task:1", workers_[1].get());
}

TEST_F(MasterTest, AStepBlockedWhenTheSessionClosesSaysSessionClose) {
  const tensorflow::GraphDef def = SampleThrough("stuck", "Block");
  auto handle = Create(def);
  ASSERT_TRUE(handle.ok());
  absl::StatusOr<std::vector<std::vector<float>>> got = absl::UnknownError("not run");
  std::thread step([&] { got = Run(*handle, {{"x", {1.0f, 2.0f}}}, {"w"}); });
  absl::SleepFor(absl::Milliseconds(300));  // the step is blocked by now
  tensorflow::CloseSessionRequest close;
  close.set_session_handle(*handle);
  tensorflow::CloseSessionResponse closed;
  EXPECT_TRUE(master_->CloseSession(close, &closed).ok());
  step.join();
  // TensorFlow's words first (its clients match "Session::Close"), then ours.
  EXPECT_EQ(got.status().code(), absl::StatusCode::kCancelled) << got.status();
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("Step was cancelled by an explicit call to `Session::Close()`"));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr(*handle));
}

TEST_F(MasterTest, CreateSessionWaitsForEveryTaskAndNamesTheMissingOne) {
  auto master = NewMaster("worker=127.0.0.1:20001,127.0.0.1:20002,127.0.0.1:20003",
                          absl::Milliseconds(400));
  auto handle = Create(Sample(), master.get());
  EXPECT_EQ(handle.status().code(), absl::StatusCode::kUnavailable);
  const std::string message(handle.status().message());
  EXPECT_THAT(message, HasSubstr("/job:worker/replica:0/task:2 at 127.0.0.1:20003"));
  EXPECT_THAT(message, HasSubstr("not in the cluster"));  // its last error
  EXPECT_THAT(message, ::testing::Not(HasSubstr("task:1 at")));
  EXPECT_THAT(Log(), HasSubstr("waiting"));
  EXPECT_THAT(Log(), HasSubstr("/job:worker/replica:0/task:2"));

  // device_filters leave the missing task out.
  tensorflow::ConfigProto config;
  config.add_device_filters("/job:worker/task:1");
  handle = Create(Sample(), master.get(), config);
  ASSERT_TRUE(handle.ok()) << handle.status();
  tensorflow::ListDevicesRequest list;
  list.set_session_handle(*handle);
  tensorflow::ListDevicesResponse devices;
  ASSERT_TRUE(master->ListDevices(list, &devices).ok());
  ASSERT_EQ(devices.local_device_size(), 1);
  EXPECT_EQ(devices.local_device(0).name(), dev(0));
  ASSERT_EQ(devices.remote_device_size(), 1);
  EXPECT_EQ(devices.remote_device(0).name(), dev(1));
}

TEST_F(MasterTest, ExtendChecksTheVersionAndAddsNodes) {
  auto handle = Create(Sample());
  ASSERT_TRUE(handle.ok());
  GraphDefBuilder more;
  more.Op("zz", "Neg", {"z"}, {{"T", DT_FLOAT}});
  tensorflow::ExtendSessionRequest req;
  req.set_session_handle(*handle);
  *req.mutable_graph_def() = more.Build();
  req.mutable_graph_def()->clear_node();
  *req.mutable_graph_def()->add_node() = more.Build().node(0);
  req.set_current_graph_version(3);
  tensorflow::ExtendSessionResponse resp;
  absl::Status s = master_->ExtendSession(req, &resp);
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("version 0"));
  req.set_current_graph_version(0);
  ASSERT_TRUE(master_->ExtendSession(req, &resp).ok());
  EXPECT_EQ(resp.new_graph_version(), 1);
  auto got = Run(*handle, {{"x", {2.0f, -4.0f}}}, {"zz"});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0], (std::vector<float>{3.5f, -2.5f}));
  // Redefining a node is refused, naming it.
  req.set_current_graph_version(1);
  s = master_->ExtendSession(req, &resp);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'zz'"));
}

// A partial run of Sample(): x fed in one call, y (task 1) fetched in it,
// z fetched in the last; each feed and fetch once; the handle ends with
// the last call, and closing the session aborts one left half-done.
TEST_F(MasterTest, PartialRunsFeedAndFetchInParts) {
  auto handle = Create(Sample());
  ASSERT_TRUE(handle.ok()) << handle.status();
  auto setup = [&]() -> absl::StatusOr<std::string> {
    tensorflow::PartialRunSetupRequest req;
    req.set_session_handle(*handle);
    req.add_feed("x");
    req.add_fetch("y");
    req.add_fetch("z");
    tensorflow::PartialRunSetupResponse resp;
    WEFT_RETURN_IF_ERROR(master_->PartialRunSetup(req, &resp));
    return resp.partial_run_handle();
  };
  auto part = [&](const std::string& run, std::vector<std::pair<std::string, std::vector<float>>> feeds,
                  std::vector<std::string> fetches) -> absl::StatusOr<std::vector<std::vector<float>>> {
    tensorflow::RunStepRequest req;
    req.set_session_handle(*handle);
    req.set_partial_run_handle(run);
    for (auto& [name, values] : feeds) {
      auto* f = req.add_feed();
      f->set_name(name);
      *f->mutable_tensor() = Proto(values);
    }
    for (auto& f : fetches) req.add_fetch(f);
    tensorflow::RunStepResponse resp;
    WEFT_RETURN_IF_ERROR(master_->RunStep(req, &resp));
    std::vector<std::vector<float>> out;
    for (const auto& t : resp.tensor()) out.push_back(Values(t.tensor()));
    return out;
  };
  absl::StatusOr<std::string> run = setup();
  ASSERT_TRUE(run.ok()) << run.status();
  auto first = part(*run, {{"x", {1.0f, 2.0f}}}, {"y"});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)[0], (std::vector<float>{2.5f, 3.5f}));
  EXPECT_THAT(std::string(part(*run, {{"x", {1.0f, 2.0f}}}, {}).status().message()),
              HasSubstr("feed 'x' was fed already"));
  EXPECT_THAT(std::string(part(*run, {}, {"w"}).status().message()),
              HasSubstr("fetch 'w' was not named in its setup"));
  auto last = part(*run, {}, {"z"});
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ((*last)[0], (std::vector<float>{-2.5f, -3.5f}));
  EXPECT_THAT(std::string(part(*run, {}, {"z"}).status().message()),
              HasSubstr("no partial run"));  // it ended with its last call
  // One left waiting for its feed: closing the session ends it everywhere.
  run = setup();
  ASSERT_TRUE(run.ok()) << run.status();
  tensorflow::CloseSessionRequest close;
  close.set_session_handle(*handle);
  tensorflow::CloseSessionResponse closed;
  const absl::Time start = absl::Now();
  EXPECT_TRUE(master_->CloseSession(close, &closed).ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  for (int t = 0; t < 2; ++t) EXPECT_EQ(workers_[t]->num_step_rendezvous(), 0);
}

TEST_F(MasterTest, CallablesRunTheirSignature) {
  auto handle = Create(Sample());
  ASSERT_TRUE(handle.ok());
  tensorflow::MakeCallableRequest make;
  make.set_session_handle(*handle);
  make.mutable_options()->add_feed("x");
  make.mutable_options()->add_fetch("z");
  tensorflow::MakeCallableResponse made;
  ASSERT_TRUE(master_->MakeCallable(make, &made).ok());
  tensorflow::RunCallableRequest run;
  run.set_session_handle(*handle);
  run.set_handle(made.handle());
  *run.add_feed() = Proto({0.5f, 1.5f});
  tensorflow::RunCallableResponse ran;
  ASSERT_TRUE(master_->RunCallable(run, &ran).ok());
  ASSERT_EQ(ran.fetch_size(), 1);
  EXPECT_EQ(Values(ran.fetch(0)), (std::vector<float>{-2.0f, -3.0f}));

  tensorflow::ReleaseCallableRequest release;
  release.set_session_handle(*handle);
  release.set_handle(made.handle());
  tensorflow::ReleaseCallableResponse released;
  ASSERT_TRUE(master_->ReleaseCallable(release, &released).ok());
  ran.Clear();
  absl::Status s = master_->RunCallable(run, &ran);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  // A bad name fails when the callable is made.
  make.mutable_options()->set_fetch(0, "nope");
  s = master_->MakeCallable(make, &made);
  EXPECT_THAT(std::string(s.message()), HasSubstr("nope"));
}

TEST_F(MasterTest, SessionsEndByCloseOrIdleness) {
  auto handle = Create(Sample());
  ASSERT_TRUE(handle.ok());
  tensorflow::CloseSessionRequest close;
  close.set_session_handle(*handle);
  tensorflow::CloseSessionResponse closed;
  ASSERT_TRUE(master_->CloseSession(close, &closed).ok());
  absl::Status s = Run(*handle, {{"x", {1, 2}}}, {"z"}).status();
  EXPECT_TRUE(absl::IsAborted(s));
  EXPECT_THAT(std::string(s.message()), HasSubstr(*handle));
  EXPECT_TRUE(absl::IsAborted(master_->CloseSession(close, &closed)));

  handle = Create(Sample());
  ASSERT_TRUE(handle.ok());
  EXPECT_EQ(master_->CollectIdleSessions(absl::Now()), 0);
  EXPECT_EQ(master_->CollectIdleSessions(absl::Now() + absl::Hours(2)), 1);
  EXPECT_TRUE(absl::IsAborted(Run(*handle, {{"x", {1, 2}}}, {"z"}).status()));
  EXPECT_THAT(Log(), HasSubstr("idle"));
}

TEST_F(MasterTest, ErrorsGoInTheBodyWhenTheClientAsks) {
  tensorflow::RunStepRequest req;
  req.set_session_handle("0123456789abcdef");
  req.set_store_errors_in_response_body(true);
  tensorflow::RunStepResponse resp;
  ASSERT_TRUE(master_->RunStep(req, &resp).ok());
  EXPECT_EQ(resp.status_code(), tensorflow::error::ABORTED);
  EXPECT_THAT(resp.status_error_message(), HasSubstr("0123456789abcdef"));

  tensorflow::PartialRunSetupRequest partial;
  partial.set_session_handle("0123456789abcdef");
  tensorflow::PartialRunSetupResponse partial_resp;
  absl::Status s = master_->PartialRunSetup(partial, &partial_resp);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("0123456789abcdef"));

  // A master made without a cache factory takes no propagated cluster.
  tensorflow::CreateSessionRequest create;
  create.mutable_config()->mutable_cluster_def()->add_job()->set_name("worker");
  tensorflow::CreateSessionResponse created;
  s = master_->CreateSession(create, &created);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(s.message()), HasSubstr("cluster_def"));
}

}  // namespace
}  // namespace weft
