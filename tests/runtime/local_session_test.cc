// LocalSession over the test ops: feeds, fetches and targets, the prepared
// run cache, feed checks, Extend, variables, timeouts, tracing, Close.
#include "runtime/local_session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/core/local_device_mgr.h"
#include "runtime/session_graph.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace {

using testing::Attr;
using ::testing::EndsWith;
using testing::GraphDefBuilder;
using ::testing::HasSubstr;

std::unique_ptr<LocalSession> NewTestSession(
    tensorflow::ConfigProto config = {}) {
  SessionOptions options;
  options.config = config;
  return std::make_unique<LocalSession>(options, testing::TestOps(),
                                        testing::TestKernels());
}

int32_t Int(const Tensor& t) { return t.scalar<int32_t>(); }
Tensor I(int32_t v) { return Tensor::Scalar<int32_t>(v); }

// y = -x + c, z = x + y, w is unrelated; "noop" depends on "count".
tensorflow::GraphDef Sample() {
  GraphDefBuilder b;
  b.Placeholder("x", DT_INT32, Attr::Shape({}));
  b.Const("c", 10);
  b.Op("negx", "Neg", {"x"}, {{"T", DT_INT32}});
  b.Op("y", "AddV2", {"negx", "c"}, {{"T", DT_INT32}});
  b.Op("z", "AddV2", {"x", "y"}, {{"T", DT_INT32}});
  b.Const("w", 7);
  b.Op("count", "CountRuns", {"w"}, {{"T", DT_INT32}});
  b.Op("noop", "NoOp", {"^count"});
  b.Placeholder("f", DT_FLOAT, Attr::Shape({-1, 2}));
  b.Op("negf", "Neg", {"f"}, {{"T", DT_FLOAT}});
  return b.Build();
}

TEST(LocalSessionTest, FeedsFetchesAndTargets) {
  testing::ResetRunCounts();
  auto s = NewTestSession();
  ASSERT_TRUE(s->Create(Sample()).ok());
  std::vector<Tensor> out;
  absl::Status st =
      s->Run({{"x:0", I(3)}}, {"z", "y:0", "z:0", "c"}, {"noop"}, &out);
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(Int(out[0]), 10);
  EXPECT_EQ(Int(out[1]), 7);
  EXPECT_EQ(Int(out[2]), 10);  // the same tensor twice
  EXPECT_EQ(Int(out[3]), 10);
  EXPECT_EQ(testing::RunCount("count"), 1);

  // Feeding an intermediate tensor cuts the graph there.
  ASSERT_TRUE(s->Run({{"x", I(1)}, {"y", I(100)}}, {"z"}, {}, &out).ok());
  EXPECT_EQ(Int(out[0]), 101);
  // Targets only.
  ASSERT_TRUE(s->Run({}, {}, {"noop"}, &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(testing::RunCount("count"), 2);
}

TEST(LocalSessionTest, CachesPreparedRunsBySignature) {
  auto s = NewTestSession();
  ASSERT_TRUE(s->Create(Sample()).ok());
  std::vector<Tensor> out;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(s->Run({{"x", I(i)}}, {"z"}, {}, &out).ok());
    EXPECT_EQ(Int(out[0]), 10);
  }
  EXPECT_EQ(s->num_cached_runs(), 1);
  ASSERT_TRUE(s->Run({{"x:0", I(1)}}, {"z"}, {}, &out).ok());  // same as "x"
  EXPECT_EQ(s->num_cached_runs(), 1);
  // Feed order does not matter; fetch order does.
  ASSERT_TRUE(s->Run({{"x", I(1)}, {"c", I(2)}}, {"y", "z"}, {}, &out).ok());
  ASSERT_TRUE(s->Run({{"c", I(2)}, {"x", I(1)}}, {"y", "z"}, {}, &out).ok());
  EXPECT_EQ(Int(out[0]), 1);
  EXPECT_EQ(Int(out[1]), 2);
  EXPECT_EQ(s->num_cached_runs(), 2);
  ASSERT_TRUE(s->Run({{"c", I(2)}, {"x", I(1)}}, {"z", "y"}, {}, &out).ok());
  EXPECT_EQ(Int(out[0]), 2);
  EXPECT_EQ(s->num_cached_runs(), 3);
}

TEST(LocalSessionTest, FeedChecks) {
  auto s = NewTestSession();
  ASSERT_TRUE(s->Create(Sample()).ok());
  std::vector<Tensor> out;
  auto expect = [&](absl::Status st, const std::string& msg) {
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
    EXPECT_THAT(std::string(st.message()), HasSubstr(msg));
  };
  expect(s->Run({{"f", I(1)}}, {"negf"}, {}, &out),
         "feed 'f:0' has dtype int32 but the placeholder expects float");
  expect(s->Run({{"f", Tensor(DT_FLOAT, TensorShape({2, 3}))}}, {"negf"}, {},
                &out),
         "feed 'f:0' has shape [2,3] but the placeholder expects shape [?,2]");
  expect(s->Run({{"c", Tensor::Scalar<float>(1)}}, {"y"}, {}, &out),
         "feed 'c:0' has dtype float but the fed tensor expects int32");
  expect(s->Run({{"nope:0", I(1)}}, {"z"}, {}, &out),
         "feed 'nope:0': node 'nope' does not exist");
  expect(s->Run({{"x", I(1)}, {"x:0", I(2)}}, {"z"}, {}, &out),
         "feed 'x:0' is given twice");
  expect(s->Run({{"x", Tensor()}}, {"z"}, {}, &out), "uninitialized");
  expect(s->Run({}, {"y:1"}, {}, &out), "fetch 'y:1': node 'y' has 1 output");
  // A placeholder nobody fed fails when its kernel runs.
  absl::Status st = s->Run({}, {"z"}, {}, &out);
  expect(st, "You must feed a value for placeholder tensor 'x'");
  EXPECT_THAT(std::string(st.message()), EndsWith("[[{{node x}}]]"));
  ASSERT_TRUE(
      s->Run({{"f", Tensor(DT_FLOAT, TensorShape({5, 2}))}}, {"negf"}, {}, &out)
          .ok());
  EXPECT_EQ(out[0].shape(), TensorShape({5, 2}));
}

TEST(LocalSessionTest, LifecycleErrors) {
  auto s = NewTestSession();
  std::vector<Tensor> out;
  EXPECT_EQ(s->Run({}, {"c"}, {}, &out).code(),
            absl::StatusCode::kFailedPrecondition);
  GraphDefBuilder bad;
  bad.Op("b", "Neg", {"missing"}, {{"T", DT_INT32}});
  absl::Status st = s->Create(bad.Build());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("'missing'"));
  ASSERT_TRUE(s->Create(Sample()).ok());
  EXPECT_EQ(s->Create(Sample()).code(), absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(s->Close().ok());
  ASSERT_TRUE(s->Close().ok());
  EXPECT_EQ(s->Run({}, {"c"}, {}, &out).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s->Extend(Sample()).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(LocalSessionTest, Extend) {
  auto s = NewTestSession();
  ASSERT_TRUE(s->Extend(GraphDefBuilder().Const("a", 2).Build()).ok());
  GraphDefBuilder more;
  more.Op("b", "Neg", {"a"}, {{"T", DT_INT32}});
  ASSERT_TRUE(s->Extend(more.Build()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"b"}, {}, &out).ok());
  EXPECT_EQ(Int(out[0]), -2);
  absl::Status st = s->Extend(GraphDefBuilder().Const("a", 3).Build());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("node 'a' is already"));
  GraphDefBuilder broken;
  broken.Op("c", "Neg", {"ghost"}, {{"T", DT_INT32}});
  EXPECT_FALSE(s->Extend(broken.Build()).ok());
  ASSERT_TRUE(s->Run({}, {"b"}, {}, &out).ok());  // old graph still there
}

TEST(LocalSessionTest, ExtendMergesVersionsAsTensorFlowDoes) {
  // Clients send the graph's versions with every extension; adding
  // functions raises min_consumer, which the merge keeps (the larger).
  auto versioned = [](tensorflow::GraphDef def, int producer, int min_consumer) {
    def.mutable_versions()->set_producer(producer);
    def.mutable_versions()->set_min_consumer(min_consumer);
    return def;
  };
  absl::StatusOr<std::shared_ptr<const SessionGraph>> g = SessionGraph::Create(
      versioned(GraphDefBuilder().Const("a", 2).Build(), 2474, 0), testing::TestOps());
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::shared_ptr<const SessionGraph>> more = (*g)->Extend(
      versioned(GraphDefBuilder().Const("b", 3).Build(), 2474, 12), testing::TestOps());
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_EQ((*more)->def.versions().min_consumer(), 12);
  absl::StatusOr<std::shared_ptr<const SessionGraph>> again = (*more)->Extend(
      versioned(GraphDefBuilder().Const("c", 4).Build(), 2474, 0), testing::TestOps());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->def.versions().min_consumer(), 12);
  absl::StatusOr<std::shared_ptr<const SessionGraph>> newer = (*again)->Extend(
      versioned(GraphDefBuilder().Const("d", 5).Build(), 2475, 12), testing::TestOps());
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(newer.status().message()),
              HasSubstr("Can't extend GraphDef at version 2474 with graph at version 2475"));
}

TEST(LocalSessionTest, VariablesPersistAcrossRuns) {
  GraphDefBuilder b;
  b.Op("v", "VariableV2", {},
       {{"dtype", DT_INT32}, {"shape", Attr::Shape({})}});
  b.Const("zero", 0).Const("one", 1);
  b.Op("init", "Assign", {"v", "zero"}, {{"T", DT_INT32}});
  b.Op("next", "AddV2", {"v", "one"}, {{"T", DT_INT32}});
  b.Op("inc", "Assign", {"v", "next"}, {{"T", DT_INT32}});
  auto s = NewTestSession();
  ASSERT_TRUE(s->Create(b.Build()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {}, {"init"}, &out).ok());
  for (int i = 1; i <= 3; ++i) {
    absl::Status st = s->Run({}, {"inc"}, {}, &out);
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(Int(out[0]), i);
  }
  ASSERT_TRUE(s->Run({}, {"v"}, {}, &out).ok());
  EXPECT_EQ(Int(out[0]), 3);
}

TEST(LocalSessionTest, StatefulKernelsAreSharedAcrossSignatures) {
  GraphDefBuilder b;
  b.Op("counter", "StatefulCounter");
  b.Op("neg", "Neg", {"counter"}, {{"T", DT_INT32}});
  auto s = NewTestSession();
  ASSERT_TRUE(s->Create(b.Build()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({}, {"counter"}, {}, &out).ok());
  EXPECT_EQ(Int(out[0]), 1);
  ASSERT_TRUE(s->Run({}, {"neg"}, {}, &out).ok());  // another executor
  EXPECT_EQ(Int(out[0]), -2);
  ASSERT_TRUE(s->Run({}, {"counter"}, {}, &out).ok());
  EXPECT_EQ(Int(out[0]), 3);
  EXPECT_EQ(s->num_cached_runs(), 2);
}

TEST(LocalSessionTest, TimeoutAndTracing) {
  GraphDefBuilder b;
  b.Const("c", 1);
  b.Op("block", "Block", {"c"}, {{"T", DT_INT32}});
  b.Op("n", "Neg", {"c"}, {{"T", DT_INT32}});
  auto s = NewTestSession();
  ASSERT_TRUE(s->Create(b.Build()).ok());
  std::vector<Tensor> out;
  tensorflow::RunOptions options;
  options.set_timeout_in_ms(50);
  absl::Status st = s->Run(options, {}, {"block"}, {}, &out, nullptr);
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;

  options.set_trace_level(tensorflow::RunOptions::FULL_TRACE);
  options.set_output_partition_graphs(true);
  tensorflow::RunMetadata metadata;
  ASSERT_TRUE(s->Run(options, {}, {"n"}, {}, &out, &metadata).ok());
  EXPECT_EQ(Int(out[0]), -1);
  // Neg of a constant is folded (runtime/constant_folding.h): what runs is
  // the folded constant and the _Retval.
  ASSERT_EQ(metadata.step_stats().dev_stats_size(), 1);
  EXPECT_EQ(metadata.step_stats().dev_stats(0).node_stats_size(), 2);
  ASSERT_EQ(metadata.partition_graphs_size(), 1);
  EXPECT_EQ(metadata.partition_graphs(0).node_size(), 2);
  EXPECT_EQ(metadata.partition_graphs(0).node(1).name(), "n/folded");
  EXPECT_EQ(metadata.partition_graphs(0).node(0).device(),
            s->device_mgr().default_device()->name());
}

TEST(LocalSessionTest, OperationTimeoutFromConfig) {
  GraphDefBuilder b;
  b.Const("c", 1);
  b.Op("block", "Block", {"c"}, {{"T", DT_INT32}});
  tensorflow::ConfigProto config;
  config.set_operation_timeout_in_ms(30);
  auto s = NewTestSession(config);
  ASSERT_TRUE(s->Create(b.Build()).ok());
  std::vector<Tensor> out;
  EXPECT_EQ(s->Run({}, {"block"}, {}, &out).code(),
            absl::StatusCode::kDeadlineExceeded);
}

TEST(LocalSessionTest, CloseCancelsRunningSteps) {
  GraphDefBuilder b;
  b.Const("c", 1);
  b.Op("block", "Block", {"c"}, {{"T", DT_INT32}});
  auto s = NewTestSession();
  ASSERT_TRUE(s->Create(b.Build()).ok());
  absl::Status st;
  std::thread runner([&] {
    std::vector<Tensor> out;
    st = s->Run({}, {"block"}, {}, &out);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  ASSERT_TRUE(s->Close().ok());
  runner.join();
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled) << st;
}

TEST(LocalSessionTest, ConcurrentRuns) {
  auto s = NewTestSession();
  ASSERT_TRUE(s->Create(Sample()).ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        std::vector<Tensor> out;
        const std::string fetch = (i + t) % 2 ? "z" : "y";
        absl::Status st = s->Run({{"x", I(i)}}, {fetch}, {}, &out);
        const int32_t want = fetch == "z" ? 10 : 10 - i;
        if (!st.ok() || Int(out[0]) != want) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(s->num_cached_runs(), 2);
}

TEST(LocalSessionTest, KernelErrorsNameTheNodeAndInlineMode) {
  GraphDefBuilder b;
  b.Const("c", 1);
  b.Op("bad", "Fail", {"c"}, {{"T", DT_INT32}, {"code", 11}});
  tensorflow::ConfigProto config;
  config.set_inter_op_parallelism_threads(-1);
  auto s = NewTestSession(config);
  ASSERT_TRUE(s->Create(b.Build()).ok());
  std::vector<Tensor> out;
  absl::Status st = s->Run({}, {"bad"}, {}, &out);
  EXPECT_EQ(st.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(st.message(),
            "node 'bad' (Fail): boom from bad\n\t [[{{node bad}}]]");
}

TEST(LocalSessionTest, DeviceCountAndThreads) {
  tensorflow::ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 2;
  config.set_inter_op_parallelism_threads(3);
  auto s = NewTestSession(config);
  EXPECT_EQ(s->device_mgr().devices().size(), 2u);
  ASSERT_TRUE(s->Create(Sample()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(s->Run({{"x", I(4)}}, {"z"}, {}, &out).ok());
  EXPECT_EQ(Int(out[0]), 10);
}

// Counts from a client or peer: more devices or threads than a process can
// start are refused by Create, naming the field, and the session stays small.
TEST(LocalSessionTest, ConfigBeyondTheBoundsIsRefused) {
  struct Case {
    const char* field;
    std::function<void(tensorflow::ConfigProto*)> set;
  };
  const Case cases[] = {
      {"device_count[\"CPU\"] is 50000000",
       [](tensorflow::ConfigProto* c) {
         (*c->mutable_device_count())["CPU"] = 50000000;
       }},
      {"intra_op_parallelism_threads is 1000000",
       [](tensorflow::ConfigProto* c) {
         c->set_intra_op_parallelism_threads(1000000);
       }},
      {"inter_op_parallelism_threads is 1000000",
       [](tensorflow::ConfigProto* c) {
         c->set_inter_op_parallelism_threads(1000000);
       }},
  };
  for (const Case& c : cases) {
    tensorflow::ConfigProto config;
    c.set(&config);
    auto s = NewTestSession(config);
    // One CPU device (and the machine's GPUs, if any), as by default.
    int cpus = 0;
    for (const Device* d : s->device_mgr().devices()) {
      cpus += d->device_type() == "CPU";
    }
    EXPECT_EQ(cpus, 1) << c.field;
    absl::Status st = s->Create(Sample());
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_THAT(std::string(st.message()), HasSubstr(c.field));
  }
}

}  // namespace
}  // namespace weft
