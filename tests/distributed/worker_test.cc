// Two in-process workers (two tasks, one CPU each) running a graph split
// across them, as a master would drive them: register each task's
// partition, run both with one step id, pull the cross-task tensor with
// RecvTensor, clean the step up.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "graph/graph_def_loader.h"
#include "graph/partition.h"
#include "gtest/gtest.h"
#include "ops/framework/op_registry.h"
#include "runtime/core/rendezvous.h"
#include "runtime/core/tensor_proto.h"
#include "tests/distributed/two_workers.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using ::testing::HasSubstr;
using testing::Attr;
using testing::GraphDefBuilder;

using testing::Call;
constexpr absl::Duration kWait = testing::kCallWait;

class TwoTaskTest : public testing::TwoWorkersTest {
 protected:
  std::string FeedKey() const {
    return RendezvousKey{dev(0), inc(0), dev(0), "x:0"}.ToString();
  }
  std::string FetchKey() const {
    return RendezvousKey{dev(1), inc(1), dev(1), "y:0"}.ToString();
  }

  // x (fed on task 0) -> y = x + 5 (task 1), fetched on task 1; split into
  // each task's partition as a master would.
  std::map<std::string, tensorflow::GraphDef> Partitions(
      const std::string& c_device = "") {
    GraphDefBuilder b;
    b.Op("x", "_Recv", {},
         {{"tensor_type", DT_INT32},
          {"tensor_name", "x:0"},
          {"send_device", dev(0).c_str()},
          {"send_device_incarnation", static_cast<int64_t>(inc(0))},
          {"recv_device", dev(0).c_str()},
          {"client_terminated", true}})
        .Const("c", 5)
        .Op("y", "AddV2", {"x", "c"}, {{"T", DT_INT32}})
        .Op("y_send", "_Send", {"y"},
            {{"T", DT_INT32},
             {"tensor_name", "y:0"},
             {"send_device", dev(1).c_str()},
             {"send_device_incarnation", static_cast<int64_t>(inc(1))},
             {"recv_device", dev(1).c_str()},
             {"client_terminated", true}});
    tensorflow::GraphDef def = b.Build();
    for (tensorflow::NodeDef& n : *def.mutable_node()) {
      n.set_device(n.name() == "x" ? dev(0) : dev(1));
      if (n.name() == "c" && !c_device.empty()) n.set_device(c_device);
    }
    auto graph = ConvertGraphDefToGraph(def, GlobalOpRegistry());
    EXPECT_TRUE(graph.ok()) << graph.status();
    for (Node* n : (*graph)->nodes()) n->set_assigned_device(n->requested_device());
    PartitionOptions options;
    options.incarnation = [&](const std::string& d) {
      return d == dev(0) ? inc(0) : inc(1);
    };
    auto parts = PartitionGraph(options, **graph);
    EXPECT_TRUE(parts.ok()) << parts.status();
    return *parts;
  }

  std::string Register(int t, const tensorflow::GraphDef& def) {
    tensorflow::RegisterGraphRequest req;
    *req.mutable_graph_def() = def;
    tensorflow::RegisterGraphResponse resp;
    absl::Status s = Call(workers_[t].get(), &WorkerInterface::RegisterGraphAsync,
                          req, &resp);
    EXPECT_TRUE(s.ok()) << s;
    return resp.graph_handle();
  }

};

TEST_F(TwoTaskTest, AStepSpansBothTasks) {
  auto parts = Partitions();
  ASSERT_EQ(parts.size(), 2u);
  const std::string h0 = Register(0, parts[dev(0)]);
  const std::string h1 = Register(1, parts[dev(1)]);

  for (int64_t step = 1; step <= 3; ++step) {
    tensorflow::RunGraphRequest r0, r1;
    r0.set_graph_handle(h0);
    r0.set_step_id(step);
    auto* feed = r0.add_send();
    feed->set_name(FeedKey());
    TensorToProto(Tensor::Scalar<int32_t>(static_cast<int32_t>(step * 10)),
                  feed->mutable_tensor());
    r1.set_graph_handle(h1);
    r1.set_step_id(step);
    r1.add_recv_key(FetchKey());
    tensorflow::RunGraphResponse o0, o1;
    absl::Notification d0, d1;
    absl::Status s0, s1;
    // Task 1 starts first: its _Recv waits for task 0's value.
    workers_[1]->RunGraphAsync(&r1, &o1, [&](absl::Status s) { s1 = s; d1.Notify(); });
    workers_[0]->RunGraphAsync(&r0, &o0, [&](absl::Status s) { s0 = s; d0.Notify(); });
    ASSERT_TRUE(d0.WaitForNotificationWithTimeout(kWait));
    ASSERT_TRUE(d1.WaitForNotificationWithTimeout(kWait));
    ASSERT_TRUE(s0.ok()) << s0;
    ASSERT_TRUE(s1.ok()) << s1;
    ASSERT_EQ(o1.recv_size(), 1);
    EXPECT_EQ(o1.recv(0).name(), FetchKey());
    auto y = TensorFromProto(o1.recv(0).tensor());
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->scalar<int32_t>(), step * 10 + 5);

    tensorflow::CleanupGraphRequest cleanup;
    cleanup.set_step_id(step);
    tensorflow::CleanupGraphResponse ignored;
    for (auto& w : workers_) {
      ASSERT_TRUE(Call(w.get(), &WorkerInterface::CleanupGraphAsync, cleanup,
                       &ignored).ok());
      EXPECT_EQ(w->num_step_rendezvous(), 0);
    }
  }
}

// Partial runs on task 0's partition: the step starts without its feed and
// runs on after the call; a later call feeds it, and the last one waits for
// its end. What a peer can leave running is bounded (2 here), and cleaning
// a step up frees its place.
class PartialStepsTest : public TwoTaskTest {
 protected:
  PartialStepsTest() { worker_options_.max_partial_steps = 2; }
  absl::Status Partial(const std::string& handle, int64_t step, bool feed, bool last) {
    tensorflow::RunGraphRequest req;
    req.set_graph_handle(handle);
    req.set_step_id(step);
    req.set_is_partial(true);
    req.set_is_last_partial_run(last);
    if (feed) {
      auto* f = req.add_send();
      f->set_name(FeedKey());
      TensorToProto(Tensor::Scalar<int32_t>(7), f->mutable_tensor());
    }
    tensorflow::RunGraphResponse resp;
    return Call(workers_[0].get(), &WorkerInterface::RunGraphAsync, req, &resp);
  }
};

TEST_F(PartialStepsTest, PartialStepsRunBetweenCallsAndAreBounded) {
  auto parts = Partitions();
  const std::string h0 = Register(0, parts[dev(0)]);
  ASSERT_TRUE(Partial(h0, 1, /*feed=*/false, /*last=*/false).ok());
  ASSERT_TRUE(Partial(h0, 2, false, false).ok());
  absl::Status s = Partial(h0, 3, false, false);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("already runs 2 partial runs"));
  // Step 1 fed, then ended by its last call (its value goes to task 1).
  ASSERT_TRUE(Partial(h0, 1, /*feed=*/true, /*last=*/false).ok());
  ASSERT_TRUE(Partial(h0, 1, false, /*last=*/true).ok());
  // Step 2 cleaned up: its place is free again.
  tensorflow::CleanupGraphRequest cleanup;
  cleanup.set_step_id(2);
  tensorflow::CleanupGraphResponse ignored;
  ASSERT_TRUE(Call(workers_[0].get(), &WorkerInterface::CleanupGraphAsync, cleanup,
                   &ignored).ok());
  ASSERT_TRUE(Partial(h0, 4, false, false).ok());
  ASSERT_TRUE(Partial(h0, 5, false, false).ok());
}

TEST_F(TwoTaskTest, CleanupEndsAStepWaitingForATaskThatNeverRuns) {
  auto parts = Partitions();
  const std::string h1 = Register(1, parts[dev(1)]);
  tensorflow::RunGraphRequest r1;
  r1.set_graph_handle(h1);
  r1.set_step_id(42);
  r1.add_recv_key(FetchKey());
  tensorflow::RunGraphResponse o1;
  absl::Notification d1;
  absl::Status s1;
  workers_[1]->RunGraphAsync(&r1, &o1, [&](absl::Status s) { s1 = s; d1.Notify(); });
  // Task 0 never runs step 42, so task 1 waits on its RecvTensor...
  EXPECT_FALSE(d1.WaitForNotificationWithTimeout(absl::Milliseconds(200)));
  // ... until the master gives up and cleans the step up.
  tensorflow::CleanupGraphRequest cleanup;
  cleanup.set_step_id(42);
  tensorflow::CleanupGraphResponse ignored;
  ASSERT_TRUE(Call(workers_[1].get(), &WorkerInterface::CleanupGraphAsync,
                   cleanup, &ignored).ok());
  ASSERT_TRUE(d1.WaitForNotificationWithTimeout(kWait));
  EXPECT_EQ(s1.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(std::string(s1.message()), HasSubstr("task /job:worker/replica:0/task:1"));
  EXPECT_THAT(std::string(s1.message()), HasSubstr("step 42 was cleaned up"));
  // Task 0's parked RecvTensor goes with its own cleanup.
  ASSERT_TRUE(Call(workers_[0].get(), &WorkerInterface::CleanupGraphAsync,
                   cleanup, &ignored).ok());
  EXPECT_EQ(workers_[0]->num_step_rendezvous(), 0);
}

// Workers whose step rendezvous expire quickly.
class ShortLivedStepsTest : public TwoTaskTest {
 protected:
  ShortLivedStepsTest() {
    worker_options_.step_limits.unclaimed_ttl = absl::Milliseconds(300);
    worker_options_.step_limits.idle_ttl = absl::Milliseconds(300);
  }

  // Runs step `step` over both tasks (x = 7 fed to task 0), without
  // cleaning it up; returns the value fetched from task 1.
  int32_t RunStep(const std::string& h0, const std::string& h1, int64_t step) {
    tensorflow::RunGraphRequest r0, r1;
    r0.set_graph_handle(h0);
    r0.set_step_id(step);
    auto* feed = r0.add_send();
    feed->set_name(FeedKey());
    TensorToProto(Tensor::Scalar<int32_t>(7), feed->mutable_tensor());
    r1.set_graph_handle(h1);
    r1.set_step_id(step);
    r1.add_recv_key(FetchKey());
    tensorflow::RunGraphResponse o0, o1;
    absl::Notification d1;
    absl::Status s1;
    workers_[1]->RunGraphAsync(&r1, &o1, [&](absl::Status s) { s1 = s; d1.Notify(); });
    absl::Status s0 = Call(workers_[0].get(), &WorkerInterface::RunGraphAsync, r0, &o0);
    EXPECT_TRUE(d1.WaitForNotificationWithTimeout(kWait));
    EXPECT_TRUE(s0.ok()) << s0;
    EXPECT_TRUE(s1.ok()) << s1;
    if (!s1.ok() || o1.recv_size() != 1) return -1;
    auto y = TensorFromProto(o1.recv(0).tensor());
    return y.ok() ? y->scalar<int32_t>() : -1;
  }
};

// A peer that asks for tensors of steps this task never runs (distinct
// step ids, the keys valid) fills the table of unclaimed rendezvous only:
// past its bound the oldest request goes, the task's own steps still run,
// the parked calls are answered when they expire, and then peers are
// served again. Nothing needs a restart.
TEST_F(ShortLivedStepsTest, RecvTensorsForStepsThatNeverRunExpireAndTheTaskRecovers) {
  auto parts = Partitions();
  const std::string h0 = Register(0, parts[dev(0)]);
  const std::string h1 = Register(1, parts[dev(1)]);

  const int n = StepRendezvousTable::kMaxUnclaimed;
  std::vector<tensorflow::RecvTensorRequest> reqs(n + 1);
  std::vector<tensorflow::RecvTensorResponse> resps(n + 1);
  std::vector<absl::Status> statuses(n + 1);
  absl::Mutex mu;
  int answered = 0;
  const std::string key = RendezvousKey{dev(0), inc(0), dev(1), "never:0"}.ToString();
  for (int i = 0; i <= n; ++i) {
    reqs[i].set_step_id(1000000 + i);
    reqs[i].set_rendezvous_key(key);
    workers_[0]->RecvTensorAsync(&reqs[i], &resps[i], [&, i](absl::Status s) {
      absl::MutexLock lock(&mu);
      statuses[i] = s;
      ++answered;
    });
  }
  {
    absl::MutexLock lock(&mu);
    // The one past the bound pushed the oldest out; the rest wait.
    EXPECT_EQ(answered, 1);
    EXPECT_EQ(statuses[0].code(), absl::StatusCode::kAborted);
    EXPECT_THAT(std::string(statuses[0].message()),
                HasSubstr("no step 1000000 started on task"));
  }
  EXPECT_EQ(workers_[0]->num_unclaimed_step_rendezvous(), n);

  // The task's own steps are not refused meanwhile.
  EXPECT_EQ(RunStep(h0, h1, 1), 12);

  // Once they expire, every parked call is answered, naming its step.
  absl::SleepFor(absl::Milliseconds(350));
  workers_[0]->CollectExpired(absl::Now());
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(mu.AwaitWithTimeout(
        absl::Condition(+[](int* a) { return *a == n + 1; }, &answered), kWait));
    EXPECT_EQ(statuses[n].code(), absl::StatusCode::kAborted);
    EXPECT_THAT(std::string(statuses[n].message()),
                HasSubstr(absl::StrCat("no step ", 1000000 + n,
                                       " ran on task /job:worker/replica:0/task:0")));
  }
  EXPECT_EQ(workers_[0]->num_unclaimed_step_rendezvous(), 0);

  // And a new peer request is taken again (it parks: nothing was sent).
  tensorflow::RecvTensorRequest again = reqs[0];
  again.set_step_id(5000000);
  tensorflow::RecvTensorResponse again_resp;
  absl::Notification again_done;
  absl::Status again_status;
  workers_[0]->RecvTensorAsync(&again, &again_resp, [&](absl::Status s) {
    again_status = s;
    again_done.Notify();
  });
  EXPECT_FALSE(again_done.HasBeenNotified());
  EXPECT_EQ(workers_[0]->num_unclaimed_step_rendezvous(), 1);
  workers_[0]->AbortAllSteps();
  ASSERT_TRUE(again_done.WaitForNotificationWithTimeout(kWait));
  EXPECT_EQ(again_status.code(), absl::StatusCode::kAborted);
}

// A peer's RecvTensor that comes before the step starts here is claimed by
// the step, so it does not expire with the unclaimed ones.
TEST_F(ShortLivedStepsTest, AStepClaimsTheRendezvousAPeerMadeFirst) {
  auto parts = Partitions();
  const std::string h0 = Register(0, parts[dev(0)]);
  const std::string h1 = Register(1, parts[dev(1)]);
  // RunStep starts task 1 first, whose RecvTensor reaches task 0 before
  // task 0's RunGraph does.
  EXPECT_EQ(RunStep(h0, h1, 5), 12);
  EXPECT_EQ(workers_[0]->num_unclaimed_step_rendezvous(), 0);
}

// A step that ended and that no master cleaned up (one that died) is
// forgotten after the idle time, on both tasks.
TEST_F(ShortLivedStepsTest, AStepNeverCleanedUpIsForgottenWhenIdle) {
  auto parts = Partitions();
  const std::string h0 = Register(0, parts[dev(0)]);
  const std::string h1 = Register(1, parts[dev(1)]);
  EXPECT_EQ(RunStep(h0, h1, 9), 12);
  EXPECT_EQ(workers_[0]->num_step_rendezvous(), 1);
  EXPECT_EQ(workers_[1]->num_step_rendezvous(), 1);
  // Not yet: the steps ended just now.
  workers_[0]->CollectExpired(absl::Now());
  EXPECT_EQ(workers_[0]->num_step_rendezvous(), 1);
  absl::SleepFor(absl::Milliseconds(350));
  for (auto& w : workers_) {
    w->CollectExpired(absl::Now());
    EXPECT_EQ(w->num_step_rendezvous(), 0);
  }
}

// Workers that keep two sessions at most and drop what goes unused.
class BoundedSessionsTest : public TwoTaskTest {
 protected:
  BoundedSessionsTest() {
    worker_options_.max_sessions = 2;
    worker_options_.idle_ttl = absl::Seconds(30);
  }
  absl::Status CreateSession(const std::string& handle) {
    tensorflow::CreateWorkerSessionRequest req;
    req.set_session_handle(handle);
    tensorflow::CreateWorkerSessionResponse resp;
    return Call(workers_[0].get(), &WorkerInterface::CreateWorkerSessionAsync,
                req, &resp);
  }
};

// A peer may not make a task hold sessions without bound, and what nobody
// uses any more goes: idle sessions with their graphs, and the legacy
// session's idle graphs.
TEST_F(BoundedSessionsTest, SessionsAreBoundedAndIdleOnesAreCollected) {
  ASSERT_TRUE(CreateSession("a").ok());
  ASSERT_TRUE(CreateSession("b").ok());
  EXPECT_TRUE(CreateSession("a").ok());  // already there: no new one
  absl::Status third = CreateSession("c");
  EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted) << third;
  EXPECT_THAT(std::string(third.message()), HasSubstr("worker sessions"));

  auto parts = Partitions();
  Register(0, parts[dev(0)]);  // the legacy session's
  tensorflow::RegisterGraphRequest in_a;
  *in_a.mutable_graph_def() = parts[dev(0)];
  in_a.set_session_handle("a");
  in_a.set_create_worker_session_called(true);
  tensorflow::RegisterGraphResponse resp;
  ASSERT_TRUE(Call(workers_[0].get(), &WorkerInterface::RegisterGraphAsync,
                   in_a, &resp).ok());
  EXPECT_EQ(workers_[0]->NumGraphs(), 2);

  // Not idle yet.
  workers_[0]->CollectExpired(absl::Now());
  EXPECT_EQ(workers_[0]->NumGraphs(), 2);
  // An hour on: both graphs and both sessions are gone, and the slots are
  // free again.
  workers_[0]->CollectExpired(absl::Now() + absl::Hours(1));
  EXPECT_EQ(workers_[0]->NumGraphs(), 0);
  absl::Status gone = Call(workers_[0].get(), &WorkerInterface::RegisterGraphAsync,
                           in_a, &resp);
  EXPECT_EQ(gone.code(), absl::StatusCode::kAborted) << gone;
  EXPECT_THAT(std::string(gone.message()), HasSubstr("no session 'a'"));
  EXPECT_TRUE(CreateSession("c").ok());
  EXPECT_TRUE(CreateSession("d").ok());
}

TEST_F(TwoTaskTest, ASenderOutsideTheClusterIsUnavailableNamingTheTask) {
  // Task 1's graph receives from task 7, which the cache does not know.
  auto parts = Partitions();
  tensorflow::GraphDef def = parts[dev(1)];
  const std::string far = "/job:worker/replica:0/task:7/device:CPU:0";
  for (tensorflow::NodeDef& n : *def.mutable_node()) {
    if (n.op() == "_Recv") (*n.mutable_attr())["send_device"].set_s(far);
  }
  const std::string h1 = Register(1, def);
  tensorflow::RunGraphRequest r1;
  r1.set_graph_handle(h1);
  r1.set_step_id(5);
  r1.set_store_errors_in_response_body(true);
  tensorflow::RunGraphResponse o1;
  ASSERT_TRUE(Call(workers_[1].get(), &WorkerInterface::RunGraphAsync, r1, &o1).ok());
  EXPECT_EQ(o1.status_code(), tensorflow::error::UNAVAILABLE);
  EXPECT_THAT(o1.status_error_message(),
              HasSubstr("task /job:worker/replica:0/task:7 is not in the cluster"));
}

TEST_F(TwoTaskTest, RegisteringANodeOfAnotherTaskIsRefused) {
  auto parts = Partitions();
  tensorflow::GraphDef def = parts[dev(1)];
  (*def.mutable_node(0)).set_device(dev(0));
  tensorflow::RegisterGraphRequest req;
  *req.mutable_graph_def() = def;
  tensorflow::RegisterGraphResponse resp;
  absl::Status s =
      Call(workers_[1].get(), &WorkerInterface::RegisterGraphAsync, req, &resp);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("'/job:worker/replica:0/task:0/device:CPU:0', a device "
                        "this process does not have"));
  // A device that is not a full name.
  (*def.mutable_node(0)).set_device("/cpu:0");
  *req.mutable_graph_def() = def;
  s = Call(workers_[1].get(), &WorkerInterface::RegisterGraphAsync, req, &resp);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("must name its full device"));
}

TEST_F(TwoTaskTest, UnknownSessionsAndGraphsAreAbortedInTheBody) {
  tensorflow::RunGraphRequest r;
  r.set_graph_handle("0000000000000099");
  r.set_store_errors_in_response_body(true);
  tensorflow::RunGraphResponse o;
  ASSERT_TRUE(Call(workers_[0].get(), &WorkerInterface::RunGraphAsync, r, &o).ok());
  EXPECT_EQ(o.status_code(), tensorflow::error::ABORTED);
  EXPECT_THAT(o.status_error_message(), HasSubstr("no registered graph"));

  r.set_session_handle("nope");
  r.set_create_worker_session_called(true);
  r.set_store_errors_in_response_body(false);
  absl::Status s = Call(workers_[0].get(), &WorkerInterface::RunGraphAsync, r, &o);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("no session 'nope'"));
}

// The first graph of each worker gets a handle of its own. A task's next
// process is a new worker too: a DeregisterGraph a master sends late for a
// graph of the process before must not name one of the new process (the
// restarted task of grpc_server_test lost the graph its master had just
// registered there that way).
TEST_F(TwoTaskTest, TwoWorkersFirstGraphHandlesDiffer) {
  auto parts = Partitions();
  EXPECT_NE(Register(0, parts[dev(0)]), Register(1, parts[dev(1)]));
}

TEST_F(TwoTaskTest, SessionsOwnTheirGraphs) {
  tensorflow::CreateWorkerSessionRequest create;
  create.set_session_handle("s1");
  tensorflow::CreateWorkerSessionResponse created;
  ASSERT_TRUE(Call(workers_[1].get(), &WorkerInterface::CreateWorkerSessionAsync,
                   create, &created).ok());
  tensorflow::RegisterGraphRequest req;
  req.set_session_handle("s1");
  req.set_create_worker_session_called(true);
  *req.mutable_graph_def() = Partitions()[dev(1)];
  tensorflow::RegisterGraphResponse resp;
  ASSERT_TRUE(Call(workers_[1].get(), &WorkerInterface::RegisterGraphAsync, req,
                   &resp).ok());
  tensorflow::DeleteWorkerSessionRequest del;
  del.set_session_handle("s1");
  tensorflow::DeleteWorkerSessionResponse deleted;
  ASSERT_TRUE(Call(workers_[1].get(), &WorkerInterface::DeleteWorkerSessionAsync,
                   del, &deleted).ok());
  tensorflow::RunGraphRequest r;
  r.set_session_handle("s1");
  r.set_create_worker_session_called(true);
  r.set_graph_handle(resp.graph_handle());
  tensorflow::RunGraphResponse o;
  absl::Status s = Call(workers_[1].get(), &WorkerInterface::RunGraphAsync, r, &o);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
}

TEST_F(TwoTaskTest, RecvTensorChecksTheSendersIncarnation) {
  tensorflow::RecvTensorRequest req;
  req.set_step_id(3);
  req.set_rendezvous_key(
      RendezvousKey{dev(0), inc(0) + 1, dev(1), "edge_1_x"}.ToString());
  tensorflow::RecvTensorResponse resp;
  absl::Status s =
      Call(workers_[0].get(), &WorkerInterface::RecvTensorAsync, req, &resp);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("the task restarted"));
  req.set_rendezvous_key("not;a;key");
  s = Call(workers_[0].get(), &WorkerInterface::RecvTensorAsync, req, &resp);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("RecvTensorRequest.rendezvous_key"));
}

TEST_F(TwoTaskTest, GetStatusListsTheTasksDevices) {
  tensorflow::GetStatusRequest req;
  tensorflow::GetStatusResponse resp;
  ASSERT_TRUE(Call(workers_[1].get(), &WorkerInterface::GetStatusAsync, req, &resp).ok());
  ASSERT_EQ(resp.device_attributes_size(), 1);
  EXPECT_EQ(resp.device_attributes(0).name(), "/job:worker/replica:0/task:1/device:CPU:0");
}

}  // namespace
}  // namespace weft
