// The dataflow executor over the test ops: ordering, deadness, errors,
// cancellation, async and expensive kernels, refs, concurrency, observers.
#include "runtime/executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "graph/graph_def_loader.h"
#include "graph/prune.h"
#include "ops/framework/call_frame.h"
#include "runtime/core/device.h"
#include "runtime/executor_observer.h"
#include "runtime/core/rendezvous.h"
#include "runtime/core/thread_pool.h"
#include "tests/runtime/executor_harness.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using testing::Attr;
using ::testing::EndsWith;
using testing::GraphDefBuilder;
using testing::Harness;
using ::testing::HasSubstr;
using testing::RunCount;

int32_t Int(const Tensor& t) { return t.scalar<int32_t>(); }

TEST(ExecutorTest, Chain) {
  GraphDefBuilder b;
  b.Const("c", 3);
  std::string prev = "c";
  for (int i = 0; i < 101; ++i) {
    const std::string name = absl::StrCat("n", i);
    b.Op(name, "Neg", {prev}, {{"T", DT_INT32}});
    prev = name;
  }
  for (bool pool : {false, true}) {
    Harness h(b.Build(), {}, {prev}, {}, pool);
    ASSERT_TRUE(h.status().ok()) << h.status();
    auto out = h.Run();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Int(out->at(0)), -3);
    out = h.Run();  // step state reused
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Int(out->at(0)), -3);
  }
}

TEST(ExecutorTest, DiamondWithFeeds) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_INT32);
  b.Op("l", "Neg", {"x"}, {{"T", DT_INT32}});
  b.Op("r", "Identity", {"x"}, {{"T", DT_INT32}});
  b.Op("sum", "AddV2", {"l", "r"}, {{"T", DT_INT32}});
  b.Op("twice", "AddV2", {"r", "r"}, {{"T", DT_INT32}});
  Harness h(b.Build(), {"x"}, {"sum", "twice", "x"}, {});
  ASSERT_TRUE(h.status().ok()) << h.status();
  auto out = h.Run({Tensor::Scalar<int32_t>(7)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Int(out->at(0)), 0);
  EXPECT_EQ(Int(out->at(1)), 14);
  EXPECT_EQ(Int(out->at(2)), 7);
}

TEST(ExecutorTest, WideFanIntoAddN) {
  GraphDefBuilder b;
  b.Const("c", 2);
  std::vector<std::string> names;
  for (int i = 0; i < 1000; ++i) {
    names.push_back(absl::StrCat("n", i));
    b.Op(names.back(), i % 2 ? "Neg" : "Identity", {"c"}, {{"T", DT_INT32}});
  }
  b.Op("sum", "AddN", names, {{"T", DT_INT32}, {"N", 1000}});
  b.Op("done", "NoOp");
  for (const std::string& n : names) {
    b.mutable_def()
        ->mutable_node(b.Build().node_size() - 1)
        ->add_input(absl::StrCat("^", n));
  }
  for (bool pool : {false, true}) {
    Harness h(b.Build(), {}, {"sum"}, {"done"}, pool);
    ASSERT_TRUE(h.status().ok()) << h.status();
    auto out = h.Run();
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Int(out->at(0)), 0);
  }
}

TEST(ExecutorTest, ControlDependenciesOrderAndTrigger) {
  testing::ResetRunCounts();
  GraphDefBuilder b;
  b.Const("c", 1);
  b.Op("side", "CountRuns", {"c"}, {{"T", DT_INT32}});
  b.Op("after", "Neg", {"c", "^side"}, {{"T", DT_INT32}});
  b.Op("unused", "CountRuns", {"c"}, {{"T", DT_INT32}});
  Harness h(b.Build(), {}, {"after"}, {});
  ASSERT_TRUE(h.status().ok()) << h.status();
  auto out = h.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Int(out->at(0)), -1);
  EXPECT_EQ(RunCount("side"), 1);
  EXPECT_EQ(RunCount("unused"), 0);  // pruned away
}

// pred ? -x : x, with a counting node on each branch and a node that depends
// on the false branch only through a control edge.
tensorflow::GraphDef Conditional() {
  GraphDefBuilder b;
  b.Placeholder("x", DT_INT32).Placeholder("pred", DT_BOOL);
  b.Op("sw", "Switch", {"x", "pred"}, {{"T", DT_INT32}});
  b.Op("f", "CountRuns", {"sw:0"}, {{"T", DT_INT32}});
  b.Op("t_raw", "CountRuns", {"sw:1"}, {{"T", DT_INT32}});
  b.Op("t", "Neg", {"t_raw"}, {{"T", DT_INT32}});
  b.Op("m", "Merge", {"f", "t"}, {{"T", DT_INT32}, {"N", 2}});
  b.Const("k", 5);
  b.Op("gated_by_f", "CountRuns", {"k", "^f"}, {{"T", DT_INT32}});
  return b.Build();
}

Tensor Bool(bool v) { return Tensor::Scalar<bool>(v); }

TEST(ExecutorTest, SwitchMergeDeadness) {
  Harness h(Conditional(), {"x", "pred"}, {"m", "m:1"}, {"gated_by_f"});
  ASSERT_TRUE(h.status().ok()) << h.status();
  for (bool pred : {true, false, true}) {
    testing::ResetRunCounts();
    auto out = h.Run({Tensor::Scalar<int32_t>(4), Bool(pred)});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Int(out->at(0)), pred ? -4 : 4);
    EXPECT_EQ(Int(out->at(1)), pred ? 1 : 0);  // value_index
    EXPECT_EQ(RunCount("t_raw"), pred ? 1 : 0);
    EXPECT_EQ(RunCount("f"), pred ? 0 : 1);
    // A control edge from a dead node makes its consumer dead too.
    EXPECT_EQ(RunCount("gated_by_f"), pred ? 0 : 1);
  }
}

TEST(ExecutorTest, FetchingADeadTensorFails) {
  Harness h(Conditional(), {"x", "pred"}, {"t"}, {});
  ASSERT_TRUE(h.status().ok()) << h.status();
  auto out = h.Run({Tensor::Scalar<int32_t>(4), Bool(false)});
  EXPECT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("dead"));
  out = h.Run({Tensor::Scalar<int32_t>(4), Bool(true)});
  ASSERT_TRUE(out.ok()) << out.status();
}

TEST(ExecutorTest, MergeOfDeadInputsIsDeadAndWaitsForControl) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_INT32).Placeholder("pred", DT_BOOL);
  b.Op("sw", "Switch", {"x", "pred"}, {{"T", DT_INT32}});
  // Both Merge inputs come from the false side.
  b.Op("a", "Identity", {"sw:0"}, {{"T", DT_INT32}});
  b.Op("b", "Neg", {"sw:0"}, {{"T", DT_INT32}});
  b.Op("gate", "CountRuns", {"x"}, {{"T", DT_INT32}});
  b.Op("m", "Merge", {"a", "b", "^gate"}, {{"T", DT_INT32}, {"N", 2}});
  b.Op("after", "CountRuns", {"m"}, {{"T", DT_INT32}});
  Harness h(b.Build(), {"x", "pred"}, {}, {"after", "gate"});
  ASSERT_TRUE(h.status().ok()) << h.status();
  testing::ResetRunCounts();
  ASSERT_TRUE(h.Run({Tensor::Scalar<int32_t>(1), Bool(true)}).ok());
  EXPECT_EQ(RunCount("gate"), 1);
  EXPECT_EQ(RunCount("after"), 0);  // Merge was dead
  ASSERT_TRUE(h.Run({Tensor::Scalar<int32_t>(1), Bool(false)}).ok());
  EXPECT_EQ(RunCount("after"), 1);
}

TEST(ExecutorTest, ErrorAbortsStepAndNamesTheNode) {
  testing::ResetRunCounts();
  GraphDefBuilder b;
  b.Const("c", 1);
  b.Op("bad", "Fail", {"c"}, {{"T", DT_INT32}, {"code", 9}});
  b.Op("downstream", "CountRuns", {"bad"}, {{"T", DT_INT32}});
  for (bool pool : {false, true}) {
    Harness h(b.Build(), {}, {"downstream"}, {}, pool);
    ASSERT_TRUE(h.status().ok()) << h.status();
    auto out = h.Run();
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
    // The node on the first line, and TensorFlow's tail.
    EXPECT_EQ(out.status().message(),
              "node 'bad' (Fail): boom from bad\n\t [[{{node bad}}]]");
    EXPECT_EQ(RunCount("downstream"), 0);
  }
}

TEST(ExecutorTest, KernelThatSetsNoOutputIsAnInternalError) {
  GraphDefBuilder b;
  b.Const("c", 1);
  b.Op("lazy", "LeaveUnset", {"c"}, {{"T", DT_INT32}});
  b.Op("after", "Neg", {"lazy"}, {{"T", DT_INT32}});
  Harness h(b.Build(), {}, {"after"}, {});
  ASSERT_TRUE(h.status().ok());
  auto out = h.Run();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("without setting output 0"));
  EXPECT_THAT(std::string(out.status().message()),
              EndsWith("[[{{node lazy}}]]"));
}

TEST(ExecutorTest, ErrorWhileOtherWorkRunsDoesNotHang) {
  GraphDefBuilder b;
  b.Const("c", 1);
  std::vector<std::string> tails;
  for (int i = 0; i < 8; ++i) {
    std::string slow = absl::StrCat("slow", i);
    b.Op(slow, "SlowIdentity", {"c"}, {{"T", DT_INT32}, {"micros", 2000}});
    std::string tail = absl::StrCat("tail", i);
    b.Op(tail, "Neg", {slow}, {{"T", DT_INT32}});
    tails.push_back(tail);
  }
  b.Op("bad", "SleepThenFail", {"c"}, {{"T", DT_INT32}, {"micros", 500}});
  tails.push_back("bad");
  Harness h(b.Build(), {}, tails, {}, /*use_pool=*/true);
  ASSERT_TRUE(h.status().ok()) << h.status();
  for (int i = 0; i < 20; ++i) {
    auto out = h.Run();
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kAborted);
    EXPECT_THAT(std::string(out.status().message()),
                EndsWith("[[{{node bad}}]]"));
  }
}

TEST(ExecutorTest, CancellationStopsTheStep) {
  GraphDefBuilder b;
  b.Const("c", 1);
  b.Op("block", "Block", {"c"}, {{"T", DT_INT32}});
  b.Op("after", "CountRuns", {"block"}, {{"T", DT_INT32}});
  for (bool pool : {false, true}) {
    testing::ResetRunCounts();
    Harness h(b.Build(), {}, {"after"}, {}, pool);
    ASSERT_TRUE(h.status().ok()) << h.status();
    CancellationManager cm;
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      cm.StartCancel();
    });
    auto out = h.Run({}, &cm);
    canceller.join();
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled);
    EXPECT_EQ(RunCount("after"), 0);
  }
}

TEST(ExecutorTest, AlreadyCancelledStepDoesNotRun) {
  testing::ResetRunCounts();
  GraphDefBuilder b;
  b.Const("c", 1);
  b.Op("count", "CountRuns", {"c"}, {{"T", DT_INT32}});
  Harness h(b.Build(), {}, {"count"}, {});
  ASSERT_TRUE(h.status().ok());
  CancellationManager cm;
  cm.StartCancel();
  auto out = h.Run({}, &cm);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(RunCount("count"), 0);
  EXPECT_TRUE(h.Run().ok());  // the executor is still usable
}

TEST(ExecutorTest, AsyncKernels) {
  GraphDefBuilder b;
  b.Const("c", 6);
  b.Op("a1", "AsyncIdentity", {"c"}, {{"T", DT_INT32}});
  b.Op("n", "Neg", {"a1"}, {{"T", DT_INT32}});
  b.Op("a2", "AsyncIdentity", {"n"}, {{"T", DT_INT32}});
  b.Op("a3", "AsyncIdentity", {"c"}, {{"T", DT_INT32}});
  b.Op("sum", "AddV2", {"a2", "a3"}, {{"T", DT_INT32}});
  for (bool pool : {false, true}) {
    Harness h(b.Build(), {}, {"sum"}, {}, pool);
    ASSERT_TRUE(h.status().ok()) << h.status();
    for (int i = 0; i < 10; ++i) {
      auto out = h.Run();
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(Int(out->at(0)), 0);
    }
  }
}

// Records which thread ran each node.
class ThreadRecorder : public ExecutorObserver {
 public:
  void OnNodeStart(const NodeExecEvent& e) override {
    absl::MutexLock lock(&mu_);
    threads_[std::string(e.node_name)] = e.thread_id;
  }
  void OnNodeEnd(const NodeExecEvent& e) override {
    absl::MutexLock lock(&mu_);
    ++ends_;
    EXPECT_GE(e.end_nanos, e.start_nanos);
    EXPECT_TRUE(e.status != nullptr && e.status->ok());
  }
  int thread(const std::string& n) {
    absl::MutexLock lock(&mu_);
    return threads_[n];
  }
  int ends() {
    absl::MutexLock lock(&mu_);
    return ends_;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, int> threads_;
  int ends_ = 0;
};

TEST(ExecutorTest, ExpensiveKernelsRunInParallelOnThePool) {
  GraphDefBuilder b;
  b.Const("c", 1);
  b.Op("s1", "SlowIdentity", {"c"}, {{"T", DT_INT32}, {"micros", 5000}});
  b.Op("s2", "SlowIdentity", {"c"}, {{"T", DT_INT32}, {"micros", 5000}});
  b.Op("sum", "AddV2", {"s1", "s2"}, {{"T", DT_INT32}});
  Harness h(b.Build(), {}, {"sum"}, {}, /*use_pool=*/true);
  ASSERT_TRUE(h.status().ok());
  ThreadRecorder rec;
  auto out = h.Run({}, nullptr, &rec);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Int(out->at(0)), 2);
  EXPECT_NE(rec.thread("s1"), rec.thread("s2"));
  EXPECT_EQ(rec.ends(), 5);  // c, s1, s2, sum, _retval
}

TEST(ExecutorTest, AsyncKernelCompletedByAnotherThreadsWorkContinuesOnPool) {
  // Another partition's _Send completes this step's _Recv inside its own
  // kernel, on its own thread. The _Recv's successors must not run there:
  // that thread has its partition's next nodes to run, and running them
  // inline made a multi-device step run one device's work after the other's
  // (doc/benchmarks.md, several CPU devices). Here the sender raises the signal
  // the successor waits for only once its Send has returned, so running the
  // successor inside the Send deadlocks until WaitForSignal's 10 s deadline.
  testing::ResetSignals();
  GraphDefBuilder b;
  b.Op("recv", "RendezvousRecv", {}, {{"T", DT_INT32}, {"key", "k"}});
  b.Op("wait", "WaitForSignal", {"recv"},
       {{"T", DT_INT32}, {"signal", "send returned"}});
  Harness h(b.Build(), {}, {"wait"}, {}, /*use_pool=*/true);
  ASSERT_TRUE(h.status().ok()) << h.status();
  for (int step = 0; step < 3; ++step) {
    LocalRendezvous rendezvous;
    SimpleCallFrame frame({}, 1);
    Executor::StepArgs args;
    args.step_id = step;
    args.call_frame = &frame;
    args.rendezvous = &rendezvous;
    absl::Notification finished;
    absl::Status status;
    // The _Recv is a root: it has parked its callback when RunAsync returns.
    h.executor()->RunAsync(args, [&](absl::Status s) {
      status = std::move(s);
      finished.Notify();
    });
    ASSERT_TRUE(rendezvous.Send("k", Tensor::Scalar<int32_t>(7), false).ok());
    testing::RaiseSignal("send returned");
    finished.WaitForNotification();
    ASSERT_TRUE(status.ok()) << status;
    std::vector<Tensor> out;
    ASSERT_TRUE(frame.TakeRetvals(&out).ok());
    EXPECT_EQ(Int(out.at(0)), 7);
    testing::ResetSignals();
  }
}

TEST(ExecutorTest, StepStatsCollectorRecordsEveryNode) {
  GraphDefBuilder b;
  b.Const("c", 1);
  b.Op("n", "Neg", {"c"}, {{"T", DT_INT32}});
  Harness h(b.Build(), {}, {"n"}, {});
  ASSERT_TRUE(h.status().ok());
  StepStatsCollector stats;
  ASSERT_TRUE(h.Run({}, nullptr, &stats).ok());
  tensorflow::StepStats proto;
  stats.Finalize(&proto);
  ASSERT_EQ(proto.dev_stats_size(), 1);
  EXPECT_EQ(proto.dev_stats(0).device(), h.device()->name());
  std::set<std::string> names;
  for (const auto& ns : proto.dev_stats(0).node_stats()) {
    names.insert(ns.node_name());
    EXPECT_GT(ns.all_start_micros(), 0);
    EXPECT_GE(ns.all_end_rel_micros(), 0);
    EXPECT_GT(ns.thread_id(), 0u);
  }
  EXPECT_EQ(names, (std::set<std::string>{"c", "n", "_retval_n_0_0"}));
}

TEST(ExecutorTest, RefsFlowToRefInputsAndAreReadByPlainOnes) {
  GraphDefBuilder b;
  b.Op("v", "VariableV2", {},
       {{"dtype", DT_INT32}, {"shape", Attr::Shape({})}});
  b.Const("init_value", 41);
  b.Op("init", "Assign", {"v", "init_value"}, {{"T", DT_INT32}});
  b.Op("read", "Neg", {"v", "^init"}, {{"T", DT_INT32}});
  Harness h(b.Build(), {}, {"read", "init"}, {});
  ASSERT_TRUE(h.status().ok()) << h.status();
  auto out = h.Run();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Int(out->at(0)), -41);
  EXPECT_EQ(Int(out->at(1)), 41);  // fetching a ref returns its value
}

TEST(ExecutorTest, ReadingAnUninitializedVariableFails) {
  GraphDefBuilder b;
  b.Op("v", "VariableV2", {},
       {{"dtype", DT_INT32}, {"shape", Attr::Shape({})}});
  b.Op("read", "Neg", {"v"}, {{"T", DT_INT32}});
  Harness h(b.Build(), {}, {"read"}, {});
  ASSERT_TRUE(h.status().ok()) << h.status();
  auto out = h.Run();
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(out.status().message(),
            "node 'read' (Neg): Attempting to use uninitialized value v (run "
            "its initializer first)\n\t [[{{node read}}]]");
}

TEST(ExecutorTest, ConcurrentSteps) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_INT32);
  std::string prev = "x";
  for (int i = 0; i < 50; ++i) {
    std::string l = absl::StrCat("l", i), r = absl::StrCat("r", i),
                s = absl::StrCat("s", i);
    b.Op(l, "Neg", {prev}, {{"T", DT_INT32}});
    b.Op(r, i % 5 == 0 ? "AsyncIdentity" : "Identity", {prev},
         {{"T", DT_INT32}});
    b.Op(s, "AddV2", {l, r}, {{"T", DT_INT32}});
    b.Op(absl::StrCat("n", i), "AddV2", {s, prev}, {{"T", DT_INT32}});
    prev = absl::StrCat("n", i);
  }
  Harness h(b.Build(), {"x"}, {prev}, {}, /*use_pool=*/true);
  ASSERT_TRUE(h.status().ok()) << h.status();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const int32_t x = t * 100 + i;
        auto out = h.Run({Tensor::Scalar<int32_t>(x)});
        if (!out.ok() || Int(out->at(0)) != x) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ExecutorTest, CreationErrorsNameNodeOpAndDevice) {
  GraphDefBuilder b;
  b.Placeholder("x", DT_FLOAT);
  b.Op("mm", "MatMul", {"x", "x"}, {{"T", DT_FLOAT}});  // no kernel
  Harness h(b.Build(), {"x"}, {"mm"}, {});
  ASSERT_FALSE(h.status().ok());
  EXPECT_THAT(std::string(h.status().message()), HasSubstr("'MatMul'"));
  EXPECT_THAT(std::string(h.status().message()), HasSubstr("node 'mm'"));
  EXPECT_THAT(std::string(h.status().message()), HasSubstr("CPU"));

  // An Exit that no Enter leads to is a malformed loop.
  GraphDefBuilder loop;
  loop.Const("init", 0);
  loop.Op("exit", "Exit", {"init"}, {{"T", DT_INT32}});
  Harness l(loop.Build(), {}, {"exit"}, {});
  EXPECT_EQ(l.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(l.status().message()), HasSubstr("node 'exit'"));
}

TEST(ExecutorTest, RunAsyncCallsDoneOnce) {
  GraphDefBuilder b;
  b.Const("c", 1);
  b.Op("a", "AsyncIdentity", {"c"}, {{"T", DT_INT32}});
  Harness h(b.Build(), {}, {"a"}, {}, /*use_pool=*/true);
  ASSERT_TRUE(h.status().ok());
  SimpleCallFrame frame({}, 1);
  Executor::StepArgs args;
  args.call_frame = &frame;
  absl::Notification done;
  std::atomic<int> calls{0};
  h.executor()->RunAsync(args, [&](absl::Status s) {
    EXPECT_TRUE(s.ok()) << s;
    ++calls;
    done.Notify();
  });
  done.WaitForNotification();
  std::vector<Tensor> out;
  ASSERT_TRUE(frame.TakeRetvals(&out).ok());
  EXPECT_EQ(Int(out[0]), 1);
  EXPECT_EQ(calls.load(), 1);
}

}  // namespace
}  // namespace weft
