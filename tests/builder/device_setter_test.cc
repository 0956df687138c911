// ApplyReplicaDeviceSetter on a small training graph: variables over the ps
// tasks by each strategy, slots and variable ops beside their variable,
// everything else on the worker, existing requests kept field by field.
#include "graph/builder/device_setter.h"

#include <map>
#include <memory>
#include <string>

#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/optimizers.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

// Three variables of 400, 4 and 40 floats, an Adam update, one matmul.
tensorflow::GraphDef TrainingGraph(VariableKind kind) {
  Scope root = Scope::NewRoot();
  auto var = [&](const char* name, int64_t rows, int64_t cols) {
    return NewTrainableVariable(
        root.WithOpName(name), {rows, cols}, DT_FLOAT,
        Fill(root, Const(root, {rows, cols}), Const(root, 0.5f)), kind);
  };
  TrainableVariable big = var("big", 20, 20);
  TrainableVariable small = var("small", 2, 2);
  TrainableVariable mid = var("mid", 20, 2);
  Output x = Const(root.WithOpName("x"), std::vector<float>(40, 1.f),
                   TensorShape({2, 20}));
  Output h = MatMul(root.WithOpName("h"), x, big.value);
  Output y = MatMul(root.WithOpName("y"), h, mid.value);
  Output z = MatMul(root.WithOpName("z").WithDevice("/device:CPU:1"), y,
                    small.value);
  Output loss = Sum(root.WithOpName("loss"), z, Const(root, {0, 1}));
  std::unique_ptr<Optimizer> adam = NewAdamOptimizer({});
  auto train = adam->Minimize(root, loss, {big, small, mid}, nullptr);
  EXPECT_TRUE(train.ok()) << train.status();
  auto graph = root.ToGraphDef();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *graph;
}

std::map<std::string, std::string> Devices(const tensorflow::GraphDef& g) {
  std::map<std::string, std::string> out;
  for (const auto& n : g.node()) out[n.name()] = n.device();
  return out;
}

TEST(ReplicaDeviceSetter, RoundRobinPutsVariablesOnPsAndTheRestOnTheWorker) {
  for (VariableKind kind : {VariableKind::kResource, VariableKind::kRef}) {
    tensorflow::GraphDef g = TrainingGraph(kind);
    ReplicaDeviceSetterOptions o;
    o.ps_tasks = 2;
    o.worker_device = "/job:worker/task:1";
    ASSERT_TRUE(ApplyReplicaDeviceSetter(o, &g).ok());
    auto d = Devices(g);
    EXPECT_EQ(d["big"], "/job:ps/task:0");
    EXPECT_EQ(d["small"], "/job:ps/task:1");
    EXPECT_EQ(d["mid"], "/job:ps/task:0");
    // Adam's slots follow their variable; beta powers are variables too.
    EXPECT_EQ(d["big/Adam"], "/job:ps/task:0");
    EXPECT_EQ(d["big/Adam_1"], "/job:ps/task:0");
    EXPECT_EQ(d["small/Adam"], "/job:ps/task:1");
    // The variable's own ops (initial assignment, read) sit beside it.
    EXPECT_EQ(d["small/Assign"], "/job:ps/task:1");
    EXPECT_EQ(d["h"], "/job:worker/task:1");
    EXPECT_EQ(d["x"], "/job:worker/task:1");
    // A request already made wins field by field.
    EXPECT_EQ(d["z"], "/job:worker/task:1/device:CPU:1");
    // Every update runs where its variable lives.
    int updates = 0;
    for (const auto& n : g.node()) {
      if (n.op() != "ResourceApplyAdam" && n.op() != "ApplyAdam") continue;
      ++updates;
      std::string var = n.input(0);
      EXPECT_EQ(n.device(), d[var.substr(0, var.find(':'))]) << n.name();
    }
    EXPECT_EQ(updates, 3);
  }
}

TEST(ReplicaDeviceSetter, GreedyBytesBalancesTheLoad) {
  tensorflow::GraphDef g = TrainingGraph(VariableKind::kResource);
  ReplicaDeviceSetterOptions o;
  o.ps_tasks = 2;
  o.strategy = PsStrategy::kGreedyBytes;
  ASSERT_TRUE(ApplyReplicaDeviceSetter(o, &g).ok());
  auto d = Devices(g);
  EXPECT_EQ(d["big"], "/job:ps/task:0");    // 1600 bytes
  EXPECT_EQ(d["small"], "/job:ps/task:1");  // 16
  EXPECT_EQ(d["mid"], "/job:ps/task:1");    // 16 < 1600
  EXPECT_EQ(d["h"], "/job:worker");
}

TEST(ReplicaDeviceSetter, KeepsPinnedVariablesAndNamesBadRequests) {
  tensorflow::GraphDef g = TrainingGraph(VariableKind::kResource);
  for (auto& n : *g.mutable_node()) {
    if (n.name() == "big") n.set_device("/job:ps/task:2");
    if (n.name() == "small") n.set_device("/job:local/task:0");
  }
  ReplicaDeviceSetterOptions o;
  o.ps_tasks = 3;
  ASSERT_TRUE(ApplyReplicaDeviceSetter(o, &g).ok());
  auto d = Devices(g);
  EXPECT_EQ(d["big"], "/job:ps/task:2");
  EXPECT_EQ(d["small"], "/job:local/task:0");
  EXPECT_EQ(d["small/Assign"], "/job:local/task:0");

  for (auto& n : *g.mutable_node()) {
    if (n.name() == "h") n.set_device("/job:worker/task:zero");
  }
  absl::Status s = ApplyReplicaDeviceSetter(o, &g);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("node 'h'"), std::string::npos) << s;
  o.ps_tasks = 0;
  EXPECT_EQ(ApplyReplicaDeviceSetter(o, &g).code(),
            absl::StatusCode::kInvalidArgument);
  PsStrategy strategy;
  EXPECT_FALSE(ParsePsStrategy("random", &strategy).ok());
  EXPECT_TRUE(ParsePsStrategy("greedy-bytes", &strategy).ok());
}

}  // namespace
}  // namespace weft
