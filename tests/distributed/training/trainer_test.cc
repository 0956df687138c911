// The between-graph trainer's pieces that need no sockets: its options'
// checks, the worker's graph (placement, readiness checks, ring), the data
// each worker gets, the non-finite variables' names, the progress line.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "distributed/training/numerics.h"
#include "distributed/training/step_metrics.h"
#include "distributed/training/trainer.h"
#include "distributed/training/worker_context.h"
#include "distributed/training/worker_graph.h"
#include "graph/builder/allreduce.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/state_ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace weft {
namespace {

using ::testing::HasSubstr;

ClusterSpec Cluster(const std::string& spec) {
  absl::StatusOr<ClusterSpec> c = ParseClusterSpec(spec);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.value_or(ClusterSpec());
}

// A valid between-async worker 1 of two, with one ps task.
TrainerOptions Valid() {
  TrainerOptions o;
  o.cluster = Cluster("ps=localhost:1;worker=localhost:2,localhost:3");
  o.task = TaskId{"worker", 1};
  o.model.options.batch = 4;
  o.model.options.hidden = 8;
  o.feeds = [](const tensorflow::GraphDef&, int, int)
      -> absl::StatusOr<std::unique_ptr<StepFeeds>> {
    return absl::UnimplementedError("no data in this test");
  };
  return o;
}

TEST(ReplicationModeTest, NamesRoundTrip) {
  for (ReplicationMode m :
       {ReplicationMode::kBetweenAsync, ReplicationMode::kBetweenSync,
        ReplicationMode::kAllReduce, ReplicationMode::kHybrid}) {
    EXPECT_EQ(ParseReplicationMode(ReplicationModeName(m)), m);
  }
  EXPECT_EQ(ReplicationModeName(ReplicationMode::kBetweenSync), "between-sync");
  EXPECT_FALSE(ParseReplicationMode("single").has_value());
  EXPECT_FALSE(ParseReplicationMode("in-graph").has_value());
}

TEST(ValidateTrainerOptionsTest, AcceptsAWorkerOfTheCluster) {
  EXPECT_TRUE(ValidateTrainerOptions(Valid()).ok());
}

TEST(ValidateTrainerOptionsTest, RefusesATaskOutsideTheWorkerJob) {
  TrainerOptions o = Valid();
  o.task = TaskId{"ps", 0};
  absl::Status s = ValidateTrainerOptions(o);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("runs a worker task, not /job:ps/task:0; start ps "
                        "tasks with 'weft server --job ps'"));
}

TEST(ValidateTrainerOptionsTest, RefusesAWorkerIndexNotInTheCluster) {
  TrainerOptions o = Valid();
  o.task = TaskId{"worker", 2};
  absl::Status s = ValidateTrainerOptions(o);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(std::string(s.message()), HasSubstr("/job:worker/task:2 is not a task"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("its worker job has tasks 0, 1"));
}

TEST(ValidateTrainerOptionsTest, BetweenGraphNeedsAPsJobButTheRingDoesNot) {
  TrainerOptions o = Valid();
  o.cluster = Cluster("worker=localhost:2,localhost:3");
  for (ReplicationMode m : {ReplicationMode::kBetweenAsync, ReplicationMode::kBetweenSync}) {
    o.mode = m;
    absl::Status s = ValidateTrainerOptions(o);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << ReplicationModeName(m);
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("has no ps job; between-graph replication keeps the "
                          "variables there"));
  }
  o.mode = ReplicationMode::kAllReduce;
  EXPECT_TRUE(ValidateTrainerOptions(o).ok());
}

TEST(ValidateTrainerOptionsTest, RefusesMoreReplicasToAggregateThanWorkers) {
  TrainerOptions o = Valid();
  o.mode = ReplicationMode::kBetweenSync;
  o.replicas_to_aggregate = 2;
  EXPECT_TRUE(ValidateTrainerOptions(o).ok());
  o.replicas_to_aggregate = 3;
  absl::Status s = ValidateTrainerOptions(o);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("--replicas-to-aggregate 3 is more than the 2 workers"));
}

TEST(ValidateTrainerOptionsTest, NeedsFeedsAndSteps) {
  TrainerOptions o = Valid();
  o.feeds = nullptr;
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateTrainerOptions(o)));
  o = Valid();
  o.steps = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateTrainerOptions(o)));
}

TEST(TrainBetweenGraphTest, AnInvalidTaskFailsBeforeServing) {
  TrainerOptions o = Valid();
  o.task = TaskId{"ps", 0};
  std::vector<std::string> lines;
  o.log = [&](absl::string_view l) { lines.emplace_back(l); };
  EXPECT_TRUE(absl::IsInvalidArgument(TrainBetweenGraph(o)));
  EXPECT_TRUE(lines.empty());
}

// The factory sees this worker's placed graph and its shard of the data:
// worker i of W takes shard i; the trainer stops with the factory's error
// before it serves anything.
TEST(TrainBetweenGraphTest, EachWorkerAsksForItsOwnShard) {
  for (int task : {0, 2}) {
    TrainerOptions o = Valid();
    o.cluster = Cluster("ps=localhost:1;worker=localhost:2,localhost:3,localhost:4");
    o.task = TaskId{"worker", task};
    int shards = -1, shard = -1;
    bool placed = true;
    o.feeds = [&](const tensorflow::GraphDef& graph, int n, int i)
        -> absl::StatusOr<std::unique_ptr<StepFeeds>> {
      shards = n;
      shard = i;
      for (const tensorflow::NodeDef& node : graph.node()) {
        if (node.op() == "VarHandleOp" &&
            !absl::StartsWith(node.device(), "/job:ps")) {
          placed = false;
        }
      }
      return absl::UnavailableError("the test's data is not there");
    };
    absl::Status s = TrainBetweenGraph(o);
    EXPECT_TRUE(absl::IsUnavailable(s)) << s;
    EXPECT_EQ(s.message(), "the test's data is not there");
    EXPECT_EQ(shards, 3);
    EXPECT_EQ(shard, task);
    EXPECT_TRUE(placed);
  }
}

TEST(WorkerGraphTest, BetweenGraphPlacesVariablesOnThePsAndChecksThem) {
  TrainerOptions o = Valid();
  o.cluster = Cluster("ps=localhost:1,localhost:5;worker=localhost:2,localhost:3");
  WorkerContext w(o);
  absl::StatusOr<WorkerGraph> g = BuildWorkerGraph(w);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->workers, 2);
  EXPECT_EQ(g->model.mode, "between-async");
  EXPECT_EQ(g->global_step, "global_step/Read");
  EXPECT_FALSE(g->saver.has_value());
  ASSERT_TRUE(g->progress.has_value());
  EXPECT_EQ(g->progress->bump.size(), 2u);
  ASSERT_FALSE(g->ready_checks.empty());
  int variables = 0;
  for (const tensorflow::NodeDef& n : g->graph.node()) {
    if (n.op() == "VarHandleOp" && !absl::StartsWith(n.name(), "weft_progress/")) {
      ++variables;
      EXPECT_TRUE(absl::StartsWith(n.device(), "/job:ps")) << n.name();
    }
    if (n.op() == "MatMul") {
      EXPECT_TRUE(absl::StartsWith(n.device(), "/job:worker/task:1")) << n.name();
    }
  }
  // One check per model variable; the counters are left out.
  EXPECT_EQ(static_cast<int>(g->ready_checks.size()), variables);
}

TEST(WorkerGraphTest, TheRingKeepsTheWholeModelOnThisWorker) {
  TrainerOptions o = Valid();
  o.mode = ReplicationMode::kAllReduce;
  o.checkpoint_dir = "/tmp/not-written-by-this-test";
  WorkerContext w(o);
  absl::StatusOr<WorkerGraph> g = BuildWorkerGraph(w);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->model.rank, 1);
  EXPECT_EQ(g->model.group_tasks,
            (std::vector<std::string>{"/job:worker/replica:0/task:0",
                                      "/job:worker/replica:0/task:1"}));
  EXPECT_TRUE(g->ready_checks.empty());
  EXPECT_FALSE(g->progress.has_value());
  EXPECT_TRUE(g->saver.has_value());
  bool broadcast = false;
  for (const tensorflow::NodeDef& n : g->graph.node()) {
    broadcast |= n.name() == kBroadcastNode;
    if (n.op() == "VarHandleOp" || n.op() == "MatMul") {
      EXPECT_TRUE(absl::StartsWith(n.device(), "/job:worker/task:1")) << n.name();
    }
  }
  EXPECT_TRUE(broadcast);
}

TEST(ReadinessChecksTest, OneCheckBesideEachSharedVariable) {
  tensorflow::GraphDef graph;
  auto add = [&](const std::string& name, const std::string& op,
                 const std::string& device) {
    tensorflow::NodeDef* n = graph.add_node();
    n->set_name(name);
    n->set_op(op);
    n->set_device(device);
    return n;
  };
  tensorflow::NodeDef* ref = add("w", "VariableV2", "/job:ps/task:0");
  (*ref->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
  add("v", "VarHandleOp", "/job:ps/task:1");
  add("sync_rep_local_step", "VarHandleOp", "/job:worker/task:0");
  add("loss", "Mean", "/job:worker/task:0");
  const std::vector<std::string> checks = AddReadinessChecks(&graph);
  EXPECT_EQ(checks, (std::vector<std::string>{"weft_ready/w", "weft_ready/v"}));
  ASSERT_EQ(graph.node_size(), 6);
  const tensorflow::NodeDef& w = graph.node(4);
  EXPECT_EQ(w.name(), "weft_ready/w");
  EXPECT_EQ(w.op(), "IsVariableInitialized");
  EXPECT_EQ(w.device(), "/job:ps/task:0");
  ASSERT_EQ(w.input_size(), 1);
  EXPECT_EQ(w.input(0), "w");
  EXPECT_EQ(w.attr().at("dtype").type(), tensorflow::DT_FLOAT);
  const tensorflow::NodeDef& v = graph.node(5);
  EXPECT_EQ(v.op(), "VarIsInitializedOp");
  EXPECT_EQ(v.device(), "/job:ps/task:1");
  EXPECT_EQ(v.input(0), "v");
  EXPECT_EQ(v.attr().count("dtype"), 0u);
}

TEST(GlobalStepReadTest, EitherKindOfVariable) {
  tensorflow::GraphDef graph;
  EXPECT_EQ(GlobalStepRead(graph), "");
  graph.add_node()->set_name("global_step/read");
  EXPECT_EQ(GlobalStepRead(graph), "global_step/read");
  graph.mutable_node(0)->set_name("global_step/Read");
  EXPECT_EQ(GlobalStepRead(graph), "global_step/Read");
}

TEST(NumericsTest, NamesTheVariablesHoldingNanOrInf) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Scope root = Scope::NewRoot();
  Variable w = NewVariable(root.WithOpName("w").WithDevice("/device:CPU:0"), {2},
                           DT_FLOAT, Const(root, {1.f, nan}));
  ResourceVariable v = NewResourceVariable(root.WithOpName("v"), {2}, DT_FLOAT,
                                           Const(root, {inf, 2.f}));
  ResourceVariable ok = NewResourceVariable(root.WithOpName("ok"), {1}, DT_FLOAT,
                                            Const(root, {3.f}));
  const tensorflow::GraphDef graph = root.ToGraphDef().value();
  const std::vector<VariableRead> reads = VariableReads(graph);
  ASSERT_EQ(reads.size(), 3u);
  EXPECT_EQ(reads[0].name, "w");
  EXPECT_EQ(reads[0].fetch, "w");
  EXPECT_EQ(reads[0].device, "/device:CPU:0");
  EXPECT_EQ(reads[1].name, "v");
  EXPECT_EQ(reads[1].fetch, v.value.node);
  EXPECT_EQ(reads[2].name, "ok");

  std::unique_ptr<Session> session = NewLocalSession(SessionOptions());
  ASSERT_TRUE(session->Create(graph).ok());
  std::vector<Tensor> none;
  ASSERT_TRUE(session
                  ->Run({}, {}, {w.initializer.node, v.initializer.node,
                                 ok.initializer.node}, &none)
                  .ok());
  EXPECT_EQ(NonFiniteVariables(session.get(), graph),
            "variables holding non-finite values: w on /device:CPU:0, v on ");

  absl::Status s = NonFiniteLoss(TaskId{"worker", 1}, nan, 40, 12, "why");
  EXPECT_TRUE(absl::IsFailedPrecondition(s));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("task /job:worker/task:1: the loss is nan at global step "
                        "40 (this worker's step 12); why. Stopping"));
}

TEST(NumericsTest, SaysWhenEveryVariableIsFinite) {
  Scope root = Scope::NewRoot();
  Variable w = NewVariable(root.WithOpName("w"), {1}, DT_FLOAT, Const(root, {1.f}));
  const tensorflow::GraphDef graph = root.ToGraphDef().value();
  std::unique_ptr<Session> session = NewLocalSession(SessionOptions());
  ASSERT_TRUE(session->Create(graph).ok());
  // Not initialised yet: the read fails, and the message says so.
  EXPECT_TRUE(absl::StartsWith(NonFiniteVariables(session.get(), graph),
                               "its variables could not be read ("));
  std::vector<Tensor> none;
  ASSERT_TRUE(session->Run({}, {}, {w.initializer.node}, &none).ok());
  EXPECT_EQ(NonFiniteVariables(session.get(), graph),
            "every variable is finite: the batch or the model's arithmetic "
            "overflowed");
}

TEST(StepProgressTest, LinesEveryKStepsAndAtTheEnds) {
  const StepProgress p(100, 25, false);
  EXPECT_TRUE(p.Prints(1));
  EXPECT_FALSE(p.Prints(2));
  EXPECT_TRUE(p.Prints(50));
  EXPECT_TRUE(p.Prints(100));
  EXPECT_TRUE(StepProgress(100, 25, true).Prints(2));
  EXPECT_EQ(p.Line(5, 0.5, 0.25, true, 1234.4, "behind: x"),
            "step   5/100  loss 0.5000  accuracy 0.250  1234 examples/s  behind: x");
  EXPECT_EQ(p.Line(100, 1, 0, false, 0), "step 100/100  loss 1.0000  0 examples/s");
}

}  // namespace
}  // namespace weft
