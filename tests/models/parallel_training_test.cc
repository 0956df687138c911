// Data and model parallelism on local CPU devices: K towers (in-graph
// replication) and layer-split placement train exactly like one device on
// the same global batches, and really run on K devices.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/optimizers.h"
#include "graph/builder/replication.h"
#include "graph/models/datasets.h"
#include "graph/models/models.h"
#include "gtest/gtest.h"
#include "runtime/session.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

constexpr int kSteps = 20;

enum class Mode { kSingle, kInGraph, kModelParallel };

struct TrainSetup {
  ModelKind kind = ModelKind::kMlp;
  std::string optimizer = "sgd";
  Mode mode = Mode::kSingle;
  int devices = 1;
  VariableKind vars = VariableKind::kResource;
};

std::vector<std::string> CpuDevices(int n) {
  std::vector<std::string> d;
  for (int i = 0; i < n; ++i) d.push_back(absl::StrCat("/device:CPU:", i));
  return d;
}

struct RunResult {
  std::vector<float> losses, accuracies;
  std::set<std::string> devices_used;  // from the partition graphs
};

absl::StatusOr<tensorflow::GraphDef> Build(const TrainSetup& s) {
  ModelOptions options;
  options.batch = 16;
  options.hidden = 32;
  options.variable_kind = s.vars;
  WEFT_ASSIGN_OR_RETURN(auto opt, NewOptimizerByName(
                                      s.optimizer,
                                      s.optimizer == "adam" ? 0.01f : 0.1f));
  Scope root = Scope::NewRoot();
  switch (s.mode) {
    case Mode::kSingle:
      WEFT_RETURN_IF_ERROR(
          BuildTrainingGraph(root, s.kind, options, opt.get()).status());
      break;
    case Mode::kInGraph:
      WEFT_RETURN_IF_ERROR(BuildReplicatedTrainingGraph(
                               root, s.kind, options, opt.get(),
                               CpuDevices(s.devices), "/device:CPU:0")
                               .status());
      break;
    case Mode::kModelParallel:
      options.layer_devices = CpuDevices(s.devices);
      WEFT_RETURN_IF_ERROR(
          BuildTrainingGraph(root, s.kind, options, opt.get()).status());
      break;
  }
  return root.ToGraphDef();
}

// Trains kSteps steps on the same seeded batches whatever the setup.
RunResult Train(const TrainSetup& s) {
  RunResult r;
  absl::StatusOr<tensorflow::GraphDef> graph = Build(s);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return r;
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = s.devices;
  std::unique_ptr<Session> session = NewLocalSession(options);
  absl::Status st = session->Create(*graph);
  std::vector<Tensor> out;
  if (st.ok()) st = session->Run({}, {}, {"init"}, &out);
  EXPECT_TRUE(st.ok()) << st;
  if (!st.ok()) return r;
  SyntheticOptions data_options;
  data_options.examples = 512;
  data_options.seed = 7;
  Dataset data = MakeSyntheticDataset(data_options);
  BatchIterator batches(&data, 16, /*seed=*/3);
  tensorflow::RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  for (int i = 0; i < kSteps; ++i) {
    Batch b = *batches.Next();
    tensorflow::RunMetadata metadata;
    st = session->Run(run_options, {{"images", b.images}, {"labels", b.labels}},
                      {"loss", "accuracy"}, {"train_op"}, &out, &metadata);
    EXPECT_TRUE(st.ok()) << "step " << i << ": " << st;
    if (!st.ok()) return r;
    r.losses.push_back(out[0].flat<float>()[0]);
    r.accuracies.push_back(out[1].flat<float>()[0]);
    for (const auto& part : metadata.partition_graphs()) {
      for (const auto& node : part.node()) r.devices_used.insert(node.device());
    }
  }
  return r;
}

// rtol 0 asks for the very same floats, bit for bit.
void ExpectSameTrajectory(const RunResult& want, const RunResult& got,
                          double rtol) {
  ASSERT_EQ(want.losses.size(), static_cast<size_t>(kSteps));
  ASSERT_EQ(got.losses.size(), static_cast<size_t>(kSteps));
  for (int i = 0; i < kSteps; ++i) {
    if (rtol == 0) {
      EXPECT_EQ(std::memcmp(&got.losses[i], &want.losses[i], sizeof(float)),
                0)
          << "step " << i << ": one device " << std::hexfloat
          << want.losses[i] << ", parallel " << got.losses[i];
      EXPECT_EQ(got.accuracies[i], want.accuracies[i]) << "step " << i;
      continue;
    }
    EXPECT_LE(std::fabs(got.losses[i] - want.losses[i]),
              rtol * std::fabs(want.losses[i]))
        << "step " << i << ": one device " << want.losses[i] << ", parallel "
        << got.losses[i];
    EXPECT_NEAR(got.accuracies[i], want.accuracies[i], 1e-6) << "step " << i;
  }
  // It learned something: a trajectory that is flat would compare equal
  // trivially.
  EXPECT_LT(want.losses.back(), want.losses.front());
}

struct Case {
  ModelKind kind;
  std::string optimizer;
  Mode mode;
  int devices;
};

std::string CaseName(const testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return absl::StrCat(ModelKindName(c.kind), "_", c.optimizer, "_",
                      c.mode == Mode::kInGraph ? "towers" : "layers", "_",
                      c.devices);
}

class ParallelTrainingTest : public testing::TestWithParam<Case> {};

TEST_P(ParallelTrainingTest, MatchesOneDevice) {
  const Case& c = GetParam();
  TrainSetup single{c.kind, c.optimizer, Mode::kSingle, 1};
  TrainSetup parallel{c.kind, c.optimizer, c.mode, c.devices};
  RunResult want = Train(single);
  RunResult got = Train(parallel);
  // Towers sum their gradients in another order (float rounding); a
  // layer split runs the very same ops on the very same values, only
  // elsewhere, so its losses must be identical.
  ExpectSameTrajectory(want, got, c.mode == Mode::kInGraph ? 1e-5 : 0);
  EXPECT_EQ(got.devices_used.size(), static_cast<size_t>(c.devices))
      << "the parallel graph should run on every device";
}

INSTANTIATE_TEST_SUITE_P(
    Towers, ParallelTrainingTest,
    testing::Values(Case{ModelKind::kMlp, "sgd", Mode::kInGraph, 2},
                    Case{ModelKind::kMlp, "sgd", Mode::kInGraph, 4},
                    Case{ModelKind::kMlp, "adam", Mode::kInGraph, 2},
                    Case{ModelKind::kMlp, "adam", Mode::kInGraph, 4},
                    Case{ModelKind::kCnn, "momentum", Mode::kInGraph, 2},
                    Case{ModelKind::kTransformer, "sgd", Mode::kInGraph, 2}),
    CaseName);

INSTANTIATE_TEST_SUITE_P(
    Layers, ParallelTrainingTest,
    testing::Values(Case{ModelKind::kMlp, "sgd", Mode::kModelParallel, 2},
                    Case{ModelKind::kMlp, "adam", Mode::kModelParallel, 3},
                    Case{ModelKind::kCnn, "adam", Mode::kModelParallel, 2},
                    Case{ModelKind::kCnn, "sgd", Mode::kModelParallel, 4}),
    CaseName);

TEST(ParallelTrainingErrors, BatchMustSplitEvenly) {
  ModelOptions options;
  options.batch = 10;
  auto opt = NewGradientDescentOptimizer({});
  Scope root = Scope::NewRoot();
  auto g = BuildReplicatedTrainingGraph(root, ModelKind::kMlp, options,
                                        opt.get(), CpuDevices(4),
                                        "/device:CPU:0");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("batch 10"), std::string::npos)
      << g.status();
}

TEST(ParallelTrainingErrors, MoreLayerDevicesThanLayers) {
  ModelOptions options;
  options.layer_devices = CpuDevices(4);
  auto opt = NewGradientDescentOptimizer({});
  Scope root = Scope::NewRoot();
  auto g = BuildTrainingGraph(root, ModelKind::kMlp, options, opt.get());
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("has 3 layers"), std::string::npos)
      << g.status();
  Scope root2 = Scope::NewRoot();
  options.layer_devices = CpuDevices(2);
  g = BuildTrainingGraph(root2, ModelKind::kTransformer, options, opt.get());
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("only mlp and cnn"), std::string::npos)
      << g.status();
}

// The generic helper: towers on task devices keep those requests, and each
// tower's ops (and gradients) land on its own device.
TEST(ReplicationHelper, TowersRequestTheirDevices) {
  Scope root = Scope::NewRoot();
  const std::string ps = "/job:ps/task:0";
  Scope params = root.WithDevice(ps);
  Output x = Placeholder(params.WithOpName("x"), DT_FLOAT, {4, 2});
  TrainableVariable w = NewTrainableVariable(
      params.WithOpName("w"), {2, 1}, DT_FLOAT,
      Const(params, {{1.f}, {2.f}}), VariableKind::kResource);
  auto opt = NewGradientDescentOptimizer({});
  ReplicationOptions r;
  r.tower_devices = {"/job:worker/task:0", "/job:worker/task:1"};
  r.param_device = ps;
  TowerFn tower = [&](const Scope& s, int, const std::vector<Output>& in)
      -> absl::StatusOr<TowerOutputs> {
    Output y = MatMul(s.WithOpName("y"), in[0], w.value);
    return TowerOutputs{Mean(s, Square(s, y), Const(s, {0, 1})), {}, {y}};
  };
  auto step = BuildReplicatedStep(root, r, {x}, {w}, tower, opt.get(), nullptr);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(root.FindNode("tower_0/y")->device(), "/job:worker/task:0");
  EXPECT_EQ(root.FindNode("tower_1/y")->device(), "/job:worker/task:1");
  int tower1_grads = 0;
  for (const auto& n : root.graph().node()) {
    if (n.name().rfind("tower_1/gradients/", 0) == 0) {
      ++tower1_grads;
      EXPECT_EQ(n.device(), "/job:worker/task:1") << n.name();
    }
  }
  EXPECT_GT(tower1_grads, 0);
  EXPECT_EQ(root.FindNode(step->loss.node)->device(), ps);
  EXPECT_EQ(step->per_example.size(), 1u);
}

TEST(ReplicationHelper, NoTowersIsAnError) {
  Scope root = Scope::NewRoot();
  auto opt = NewGradientDescentOptimizer({});
  auto step = BuildReplicatedStep(root, ReplicationOptions(), {}, {},
                                  TowerFn(), opt.get(), nullptr);
  ASSERT_FALSE(step.ok());
  EXPECT_EQ(step.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace weft
