// A forward graph brought by the user, made a training graph: it trains
// exactly as the same model built with the library does (same losses, bit
// for bit; also in towers, and split over devices by estimated cost),
// leaves assigned variables (moving statistics) untrained but updated every
// step, and refuses what it cannot train, naming the node.
#include "graph/models/imported_model.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "graph/builder/array_ops.h"
#include "graph/builder/math_ops.h"
#include "graph/builder/optimizers.h"
#include "graph/builder/state_ops.h"
#include "graph/builder/variables.h"
#include "graph/models/cost_split.h"
#include "graph/models/datasets.h"
#include "graph/models/models.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace weft {
namespace {

ModelOptions SmallMlp() {
  ModelOptions o;
  o.batch = 16;
  o.hidden = 16;
  o.variable_kind = VariableKind::kResource;
  return o;
}

// The MLP's forward graph as a user would export it: inputs, variables
// with one "init", the loss; no optimizer.
tensorflow::GraphDef ForwardMlp() {
  Scope root = Scope::NewRoot();
  const ModelOptions o = SmallMlp();
  Output images = Placeholder(root.WithOpName("images"), DT_FLOAT,
                              {o.batch, o.image_rows * o.image_cols});
  Output labels = Placeholder(root.WithOpName("labels"), DT_INT64, {o.batch});
  Scope model = root.NewSubScope("mlp");
  absl::StatusOr<ModelParams> params = CreateModelParams(model, ModelKind::kMlp, o);
  EXPECT_TRUE(params.ok()) << params.status();
  absl::StatusOr<Output> logits = ModelLogits(model, ModelKind::kMlp, o, *params, images);
  EXPECT_TRUE(logits.ok()) << logits.status();
  AddLossAndAccuracy(root, Identity(root.WithOpName("logits"), *logits), labels);
  std::vector<Operation> inits;
  for (const TrainableVariable& v : params->list) inits.push_back(v.initializer);
  Group(root.WithOpName("init"), inits);
  absl::StatusOr<tensorflow::GraphDef> g = root.ToGraphDef();
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

// Runs "init" then `steps` of "train_op" on the same seeded batches,
// returning the losses.
std::vector<float> Losses(const tensorflow::GraphDef& graph, int steps) {
  std::vector<float> losses;
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = 2;
  std::unique_ptr<Session> session = NewLocalSession(options);
  absl::Status s = session->Create(graph);
  EXPECT_TRUE(s.ok()) << s;
  std::vector<Tensor> out;
  s = session->Run({}, {}, {"init"}, &out);
  EXPECT_TRUE(s.ok()) << s;
  if (!s.ok()) return losses;
  SyntheticOptions data_options;
  data_options.examples = 256;
  Dataset data = MakeSyntheticDataset(data_options);
  BatchIterator batches(&data, SmallMlp().batch, /*seed=*/3);
  for (int i = 0; i < steps; ++i) {
    Batch b = *batches.Next();
    s = session->Run({{"images", b.images}, {"labels", b.labels}}, {"loss"},
                     {"train_op"}, &out);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) break;
    losses.push_back(out[0].flat<float>()[0]);
  }
  return losses;
}

TEST(ImportedModelTest, TrainsAsTheLibrarysOwnGraphDoes) {
  for (const char* optimizer : {"sgd", "momentum", "adam"}) {
    SCOPED_TRACE(optimizer);
    Scope built = Scope::NewRoot();
    auto opt = NewOptimizerByName(optimizer, 0.05f);
    ASSERT_TRUE(opt.ok());
    ASSERT_TRUE(BuildTrainingGraph(built, ModelKind::kMlp, SmallMlp(), opt->get()).ok());

    Scope imported = Scope::NewRoot();
    auto opt2 = NewOptimizerByName(optimizer, 0.05f);
    ASSERT_TRUE(opt2.ok());
    ImportedModelOptions o;
    o.loss = "loss";
    absl::StatusOr<ImportedTrainingGraph> g =
        BuildImportedTrainingGraph(imported, ForwardMlp(), o, opt2->get());
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ(g->variables.size(), 6u);  // 3 layers, weights and biases
    ASSERT_EQ(g->inputs.size(), 2u);
    EXPECT_EQ(g->inputs[0].name, "images");
    EXPECT_EQ(g->inputs[0].shape, (std::vector<int64_t>{16, 64}));
    EXPECT_EQ(g->inputs[1].dtype, DT_INT64);

    const std::vector<float> want = Losses(*built.ToGraphDef(), 5);
    const std::vector<float> got = Losses(*imported.ToGraphDef(), 5);
    ASSERT_EQ(want.size(), 5u);
    EXPECT_EQ(got, want);
    EXPECT_LT(got.back(), got.front());
  }
}

TEST(ImportedModelTest, InGraphTowersTrainAsTheLibrarysReplicatedGraph) {
  const std::vector<std::string> towers = {"/device:CPU:0", "/device:CPU:1"};
  Scope built = Scope::NewRoot();
  auto opt = NewOptimizerByName("momentum", 0.05f);
  ASSERT_TRUE(opt.ok());
  ASSERT_TRUE(BuildReplicatedTrainingGraph(built, ModelKind::kMlp, SmallMlp(), opt->get(),
                                           towers, towers[0])
                  .ok());
  Scope imported = Scope::NewRoot();
  auto opt2 = NewOptimizerByName("momentum", 0.05f);
  ImportedModelOptions o;
  o.loss = "loss";
  absl::StatusOr<ImportedTrainingGraph> g = BuildImportedReplicatedTrainingGraph(
      imported, ForwardMlp(), o, opt2->get(), towers, towers[0]);
  ASSERT_TRUE(g.ok()) << g.status();
  // Each tower's copy runs on its device and reads the shared variables.
  const tensorflow::NodeDef* read = imported.FindNode("tower_1/mlp/hidden1/MatMul");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->device(), towers[1]);
  const std::vector<float> want = Losses(*built.ToGraphDef(), 5);
  const std::vector<float> got = Losses(*imported.ToGraphDef(), 5);
  ASSERT_EQ(want.size(), 5u);
  EXPECT_EQ(got, want);

  // A static batch that does not split evenly is refused, naming it.
  Scope three = Scope::NewRoot();
  auto opt3 = NewOptimizerByName("sgd", 0.1f);
  absl::Status s = BuildImportedReplicatedTrainingGraph(
                       three, ForwardMlp(), o, opt3->get(),
                       {"/device:CPU:0", "/device:CPU:1", "/device:CPU:0"}, towers[0])
                       .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(ImportedModelTest, ModelParallelSplitsByCostAndTrainsTheSame) {
  // The MLP (64 -> 16 -> 16 -> 10, batch 16): hidden1's MatMul is about
  // two thirds of the cost, so it is one piece and the rest the other.
  absl::StatusOr<CostSplit> split = SplitByCost(ForwardMlp(), {"loss"}, 2);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->part.at("mlp/hidden1/MatMul"), 0);
  EXPECT_EQ(split->part.at("mlp/hidden2/MatMul"), 1);
  EXPECT_EQ(split->part.at("mlp/output/MatMul"), 1);
  EXPECT_EQ(split->part.at("mlp/hidden2/w"), 1);  // with its first reader
  EXPECT_EQ(split->part.at("images"), 0);
  EXPECT_FALSE(split->part.contains("mlp/hidden2/w/Read"));  // where w lives
  ASSERT_EQ(split->cost.size(), 2u);
  EXPECT_GT(split->cost[0], split->cost[1]);
  EXPECT_GT(split->cost[1], 0);
  EXPECT_EQ(SplitByCost(ForwardMlp(), {"nope"}, 2).status().code(),
            absl::StatusCode::kInvalidArgument);

  Scope single = Scope::NewRoot();
  auto opt = NewOptimizerByName("adam", 0.05f);
  ImportedModelOptions o;
  o.loss = "loss";
  ASSERT_TRUE(BuildImportedTrainingGraph(single, ForwardMlp(), o, opt->get()).ok());
  Scope split_graph = Scope::NewRoot();
  auto opt2 = NewOptimizerByName("adam", 0.05f);
  o.layer_devices = {"/device:CPU:0", "/device:CPU:1"};
  absl::StatusOr<ImportedTrainingGraph> g =
      BuildImportedTrainingGraph(split_graph, ForwardMlp(), o, opt2->get());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(split_graph.FindNode("mlp/output/MatMul")->device(), "/device:CPU:1");
  // Gradients go with their forward ops.
  bool backward_on_1 = false;
  for (const tensorflow::NodeDef& n : split_graph.graph().node()) {
    backward_on_1 |= absl::StartsWith(n.name(), "gradients/") &&
                     n.op() == "MatMul" && n.device() == "/device:CPU:1";
  }
  EXPECT_TRUE(backward_on_1);
  const std::vector<float> want = Losses(*single.ToGraphDef(), 5);
  const std::vector<float> got = Losses(*split_graph.ToGraphDef(), 5);
  ASSERT_EQ(want.size(), 5u);
  EXPECT_EQ(got, want);
}

// y = x * w; loss = sum(y); a "moving" variable assigned from the loss
// each step, as batch norm's statistics are.
tensorflow::GraphDef ForwardWithMovingStat() {
  Scope root = Scope::NewRoot();
  Output x = Placeholder(root.WithOpName("x"), DT_FLOAT, {2});
  ResourceVariable w = NewResourceVariable(root.WithOpName("w"), {2}, DT_FLOAT,
                                           Const(root, {1.f, 2.f}));
  ResourceVariable m = NewResourceVariable(root.WithOpName("moving"), {}, DT_FLOAT,
                                           Const(root, 0.f));
  Output loss = Sum(root.WithOpName("total"), Mul(root, x, w.value), Const(root, 0));
  // moving += loss (read of `moving` is on no path to the loss).
  AddNode0(root.WithOpName("update_moving"), "AssignAddVariableOp",
           {m.handle, loss});
  Group(root.WithOpName("init"), {w.initializer, m.initializer});
  return *root.ToGraphDef();
}

TEST(ImportedModelTest, AssignedVariablesAreUpdatedNotTrained) {
  Scope root = Scope::NewRoot();
  auto opt = NewOptimizerByName("sgd", 0.5f);
  ASSERT_TRUE(opt.ok());
  ImportedModelOptions o;
  o.loss = "total";
  absl::StatusOr<ImportedTrainingGraph> g =
      BuildImportedTrainingGraph(root, ForwardWithMovingStat(), o, opt->get());
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->variables.size(), 1u);
  EXPECT_EQ(g->variables[0].name, "w");
  std::unique_ptr<Session> session = NewLocalSession(SessionOptions());
  ASSERT_TRUE(session->Create(*root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  Tensor x(DT_FLOAT, TensorShape({2}));
  x.flat<float>()[0] = x.flat<float>()[1] = 1.f;
  for (int i = 0; i < 2; ++i) {
    absl::Status s = session->Run({{"x", x}}, {"loss"}, {"train_op"}, &out);
    ASSERT_TRUE(s.ok()) << s;
  }
  // Step 1: loss 3, w -> (0.5, 1.5); step 2: loss 2, w -> (0, 1).
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 2.f);
  ASSERT_TRUE(session->Run({}, {"w/Read:0", "moving/Read:0", "global_step/Read:0"},
                           {}, &out).ok());
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 0.f);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[1], 1.f);
  EXPECT_FLOAT_EQ(out[1].flat<float>()[0], 5.f);  // 3 + 2: ran every step
  EXPECT_EQ(out[2].flat<int64_t>()[0], 2);
}

TEST(ImportedModelTest, AGraphThatTrainsItselfRunsItsOwnStep) {
  // loss = sum(x * w); the graph's own step (called "train_op", a name the
  // training graph takes: it becomes "train_op_model") is w -= 0.5.
  Scope forward = Scope::NewRoot();
  Output x = Placeholder(forward.WithOpName("x"), DT_FLOAT, {2});
  ResourceVariable w = NewResourceVariable(forward.WithOpName("w"), {2}, DT_FLOAT,
                                           Const(forward, {1.f, 2.f}));
  Sum(forward.WithOpName("total"), Mul(forward, x, w.value), Const(forward, 0));
  AddNode0(forward.WithOpName("train_op"), "AssignSubVariableOp",
           {w.handle, Const(forward, {0.5f, 0.5f})});
  Group(forward.WithOpName("init"), {w.initializer});

  Scope root = Scope::NewRoot();
  auto opt = NewOptimizerByName("sgd", 0.1f);
  ImportedModelOptions o;
  o.loss = "total";
  o.train_op = "train_op";
  absl::StatusOr<ImportedTrainingGraph> g =
      BuildImportedTrainingGraph(root, *forward.ToGraphDef(), o, opt->get());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->variables.empty());  // nothing for Weft to differentiate
  ASSERT_NE(root.FindNode("train_op_model"), nullptr);
  std::unique_ptr<Session> session = NewLocalSession(SessionOptions());
  ASSERT_TRUE(session->Create(*root.ToGraphDef()).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({}, {}, {"init"}, &out).ok());
  Tensor feed(DT_FLOAT, TensorShape({2}));
  feed.flat<float>()[0] = feed.flat<float>()[1] = 1.f;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(session->Run({{"x", feed}}, {"loss"}, {"train_op"}, &out).ok());
  }
  ASSERT_TRUE(session->Run({}, {"w/Read:0", "global_step/Read:0"}, {}, &out).ok());
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 0.f);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[1], 1.f);
  EXPECT_EQ(out[1].flat<int64_t>()[0], 2);

  o.train_op = "no_such_step";
  Scope bad = Scope::NewRoot();
  EXPECT_TRUE(absl::StrContains(
      BuildImportedTrainingGraph(bad, *forward.ToGraphDef(), o, opt->get()).status().message(),
      "no train op 'no_such_step'"));
}

absl::Status BuildError(tensorflow::GraphDef forward, const std::string& loss,
                        const std::string& init = "") {
  Scope root = Scope::NewRoot();
  auto opt = NewOptimizerByName("sgd", 0.1f);
  ImportedModelOptions o;
  o.loss = loss;
  o.init = init;
  return BuildImportedTrainingGraph(root, std::move(forward), o, opt->get()).status();
}

TEST(ImportedModelTest, RefusesWhatItCannotTrainNamingTheNode) {
  absl::Status s = BuildError(ForwardMlp(), "no_such_node");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "no_such_node")) << s;

  s = BuildError(ForwardMlp(), "labels");  // int64, and reads no variable
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "nothing to train")) << s;

  s = BuildError(ForwardMlp(), "loss", "no_init");
  EXPECT_TRUE(absl::StrContains(s.message(), "no_init")) << s;

  tensorflow::GraphDef no_init = ForwardMlp();
  for (tensorflow::NodeDef& n : *no_init.mutable_node()) {
    if (n.name() == "init") n.set_name("setup");
  }
  s = BuildError(no_init, "loss");
  EXPECT_TRUE(absl::StrContains(s.message(), "no initializer")) << s;

  tensorflow::GraphDef clash = ForwardMlp();
  clash.add_node()->CopyFrom(clash.node(0));
  clash.mutable_node(clash.node_size() - 1)->set_name("train_op");
  s = BuildError(clash, "loss");
  EXPECT_TRUE(absl::StrContains(s.message(), "'train_op'")) << s;

  tensorflow::GraphDef unknown = ForwardMlp();
  for (tensorflow::NodeDef& n : *unknown.mutable_node()) {
    if (n.op() == "VarHandleOp") {
      (*n.mutable_attr())["shape"].mutable_shape()->set_unknown_rank(true);
      break;
    }
  }
  s = BuildError(unknown, "loss");
  EXPECT_TRUE(absl::StrContains(s.message(), "static shape")) << s;
}

}  // namespace
}  // namespace weft
