// The model library: each model trains (its loss falls) on seeded synthetic
// data, with each optimizer and variable kind; graph names tools rely on.
#include "graph/models/models.h"

#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "graph/builder/array_ops.h"
#include "graph/builder/optimizers.h"
#include "graph/builder/variables.h"
#include "graph/models/datasets.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace weft {
namespace {

struct TrainRun {
  std::vector<double> losses;
  double last_accuracy = 0;
};

// Builds `kind` with `optimizer`, trains `steps` steps on synthetic data
// and returns each step's loss (measured before that step's update).
TrainRun Train(ModelKind kind, const std::string& optimizer, float lr,
          VariableKind vars, int steps) {
  TrainRun run;
  ModelOptions options;
  options.batch = 16;
  options.hidden = 32;
  options.variable_kind = vars;
  Scope root = Scope::NewRoot();
  auto opt = NewOptimizerByName(optimizer, lr);
  EXPECT_TRUE(opt.ok()) << opt.status();
  if (!opt.ok()) return run;
  auto g = BuildTrainingGraph(root, kind, options, opt->get());
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return run;
  auto graph = root.ToGraphDef();
  EXPECT_TRUE(graph.ok()) << graph.status();
  std::unique_ptr<Session> session = NewLocalSession(SessionOptions());
  absl::Status st = session->Create(*graph);
  EXPECT_TRUE(st.ok()) << st;
  std::vector<Tensor> out;
  st = session->Run({}, {}, {"init"}, &out);
  EXPECT_TRUE(st.ok()) << st;
  if (!st.ok()) return run;
  SyntheticOptions data_options;
  data_options.examples = 512;
  data_options.seed = 7;
  Dataset data = MakeSyntheticDataset(data_options);
  BatchIterator batches(&data, options.batch, /*seed=*/3);
  for (int i = 0; i < steps; ++i) {
    Batch b = *batches.Next();
    st = session->Run({{"images", b.images}, {"labels", b.labels}},
                      {"loss", "accuracy"}, {"train_op"}, &out);
    EXPECT_TRUE(st.ok()) << "step " << i << ": " << st;
    if (!st.ok()) return run;
    run.losses.push_back(out[0].flat<float>()[0]);
    run.last_accuracy = out[1].flat<float>()[0];
  }
  st = session->Run({}, {g->global_step.value.name()}, {}, &out);
  EXPECT_TRUE(st.ok()) << st;
  if (st.ok()) EXPECT_EQ(out[0].flat<int64_t>()[0], steps);
  return run;
}

double MeanOf(const std::vector<double>& v, size_t from, size_t to) {
  return std::accumulate(v.begin() + from, v.begin() + to, 0.0) / (to - from);
}

// Loss over the last 5 steps well below the first 5 (with noise from
// different batches, a real drop is needed).
void ExpectLearns(ModelKind kind, const std::string& optimizer, float lr,
                  VariableKind vars, int steps = 80) {
  TrainRun run = Train(kind, optimizer, lr, vars, steps);
  ASSERT_EQ(run.losses.size(), static_cast<size_t>(steps));
  const double first = MeanOf(run.losses, 0, 5);
  const double last = MeanOf(run.losses, steps - 5, steps);
  std::cout << ModelKindName(kind) << "/" << optimizer << ": loss " << first << " -> " << last << "\n";
  EXPECT_LT(last, 0.8 * first)
      << ModelKindName(kind) << " with " << optimizer << ": loss " << first
      << " -> " << last;
}

TEST(ModelsTest, MlpLearnsWithEveryOptimizer) {
  ExpectLearns(ModelKind::kMlp, "sgd", 0.5f, VariableKind::kRef, 200);
  ExpectLearns(ModelKind::kMlp, "sgd", 0.5f, VariableKind::kResource, 200);
  ExpectLearns(ModelKind::kMlp, "momentum", 0.1f, VariableKind::kRef);
  ExpectLearns(ModelKind::kMlp, "nesterov", 0.1f, VariableKind::kResource);
  ExpectLearns(ModelKind::kMlp, "adam", 0.01f, VariableKind::kRef);
  ExpectLearns(ModelKind::kMlp, "adam", 0.01f, VariableKind::kResource);
}

TEST(ModelsTest, CnnLearns) {
  ExpectLearns(ModelKind::kCnn, "adam", 0.01f, VariableKind::kResource, 150);
}

TEST(ModelsTest, TransformerLearns) {
  ExpectLearns(ModelKind::kTransformer, "adam", 0.01f, VariableKind::kRef);
}

// Every model's logits work for any batch size, and batching does not mix
// examples: the logits of a batch of 5 equal those of each example alone.
TEST(ModelsTest, LogitsForAnyBatchSize) {
  for (ModelKind kind :
       {ModelKind::kMlp, ModelKind::kCnn, ModelKind::kTransformer}) {
    ModelOptions options;  // options.batch (32) is not used below
    options.hidden = 16;
    Scope root = Scope::NewRoot();
    Output images = Placeholder(root.WithOpName("images"), DT_FLOAT,
                                {-1, options.image_rows * options.image_cols});
    auto params = CreateModelParams(root, kind, options);
    ASSERT_TRUE(params.ok()) << params.status();
    auto logits = ModelLogits(root, kind, options, *params, images);
    ASSERT_TRUE(logits.ok()) << logits.status();
    std::vector<Operation> inits;
    for (const TrainableVariable& v : params->list) {
      inits.push_back(v.initializer);
    }
    Operation init = Group(root.WithOpName("init"), inits);
    auto graph = root.ToGraphDef();
    ASSERT_TRUE(graph.ok()) << graph.status();
    std::unique_ptr<Session> session = NewLocalSession(SessionOptions());
    ASSERT_TRUE(session->Create(*graph).ok());
    std::vector<Tensor> out;
    ASSERT_TRUE(session->Run({}, {}, {init.node}, &out).ok());
    SyntheticOptions data_options;
    data_options.examples = 5;
    Dataset data = MakeSyntheticDataset(data_options);
    BatchIterator batches(&data, 5, /*seed=*/1);
    Batch b = *batches.Next();
    absl::Status st = session->Run({{"images", b.images}}, {logits->name()},
                                   {}, &out);
    ASSERT_TRUE(st.ok()) << ModelKindName(kind) << ": " << st;
    Tensor all = out[0];
    ASSERT_EQ(all.shape(), TensorShape({5, options.num_classes}));
    const int64_t pixels = options.image_rows * options.image_cols;
    for (int64_t i = 0; i < 5; ++i) {
      Tensor one(DT_FLOAT, TensorShape({1, pixels}));
      for (int64_t k = 0; k < pixels; ++k) {
        one.flat<float>()[k] = b.images.flat<float>()[i * pixels + k];
      }
      st = session->Run({{"images", one}}, {logits->name()}, {}, &out);
      ASSERT_TRUE(st.ok()) << ModelKindName(kind) << ": " << st;
      for (int64_t c = 0; c < options.num_classes; ++c) {
        EXPECT_NEAR(out[0].flat<float>()[c],
                    all.flat<float>()[i * options.num_classes + c], 1e-5)
            << ModelKindName(kind) << " example " << i << " class " << c;
      }
    }
  }
}

TEST(ModelsTest, SameSeedSameLosses) {
  TrainRun a = Train(ModelKind::kMlp, "sgd", 0.1f, VariableKind::kRef, 3);
  TrainRun b = Train(ModelKind::kMlp, "sgd", 0.1f, VariableKind::kRef, 3);
  EXPECT_EQ(a.losses, b.losses);
}

TEST(ModelsTest, NamesToolsLookUp) {
  Scope root = Scope::NewRoot();
  auto opt = NewOptimizerByName("momentum", 0.1f);
  ASSERT_TRUE(opt.ok());
  auto g = BuildTrainingGraph(root, ModelKind::kCnn, ModelOptions(), opt->get());
  ASSERT_TRUE(g.ok()) << g.status();
  for (const char* name : {"images", "labels", "logits", "loss", "accuracy",
                           "train_op", "init", "global_step"}) {
    EXPECT_NE(root.FindNode(name), nullptr) << name;
  }
  EXPECT_EQ(g->loss.node, "loss");
  EXPECT_NE(root.FindNode("cnn/conv1/w/Momentum"), nullptr);
}

TEST(ModelsTest, BadOptionsAreErrors) {
  ModelOptions o;
  o.heads = 3;  // does not divide 64
  auto opt = NewOptimizerByName("sgd", 0.1f);
  ASSERT_TRUE(opt.ok());
  auto g = BuildTrainingGraph(Scope::NewRoot(), ModelKind::kTransformer, o,
                              opt->get());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(NewOptimizerByName("rmsprop", 0.1f).ok());
  ModelKind kind;
  EXPECT_FALSE(ParseModelKind("resnet", &kind).ok());
}

}  // namespace
}  // namespace weft
