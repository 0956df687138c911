// The data each worker of a between-graph job trains on (tools/step_feeds.h
// behind the trainer's StepFeedsFactory): worker w of W draws only from
// its own shard, so two workers never train on the same example.
#include "tools/step_feeds.h"

#include <set>
#include <string>
#include <vector>

#include "distributed/training/training_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

using ::testing::HasSubstr;

tensorflow::GraphDef MlpGraph() {
  TrainingModel model;
  model.options.batch = 4;
  model.options.hidden = 8;
  absl::StatusOr<tensorflow::GraphDef> graph = BuildModelGraph(model);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.value_or(tensorflow::GraphDef());
}

// The image rows shard `shard` of `shards` feeds in its first `steps` steps.
std::set<std::vector<float>> Rows(const tensorflow::GraphDef& graph, int shards,
                                  int shard, int steps) {
  FeedOptions o;
  o.shards = shards;
  o.shard = shard;
  absl::StatusOr<std::unique_ptr<StepFeeds>> feeds = DatasetFeeds(graph, "mlp", o);
  EXPECT_TRUE(feeds.ok()) << feeds.status();
  std::set<std::vector<float>> rows;
  if (!feeds.ok()) return rows;
  EXPECT_EQ((*feeds)->batch(), 4);
  for (int s = 0; s < steps; ++s) {
    auto next = (*feeds)->Next();
    EXPECT_TRUE(next.ok()) << next.status();
    if (!next.ok()) return rows;
    for (const auto& [name, t] : *next) {
      if (name != "images") continue;
      const int64_t width = t.shape().dim_size(1);
      auto flat = t.flat<float>();
      for (int64_t r = 0; r < t.shape().dim_size(0); ++r) {
        rows.emplace(flat.data() + r * width, flat.data() + (r + 1) * width);
      }
    }
  }
  return rows;
}

TEST(StepFeedsTest, WorkersOfAJobTrainOnDisjointShards) {
  const tensorflow::GraphDef graph = MlpGraph();
  const std::set<std::vector<float>> zero = Rows(graph, 2, 0, 50);
  const std::set<std::vector<float>> one = Rows(graph, 2, 1, 50);
  ASSERT_GT(zero.size(), 100u);
  ASSERT_GT(one.size(), 100u);
  for (const std::vector<float>& row : zero) {
    EXPECT_EQ(one.count(row), 0u) << "an example in both shards";
  }
  // The same shard is the same data (its own seed): a rerun resumes it.
  EXPECT_EQ(Rows(graph, 2, 1, 50), one);
}

TEST(StepFeedsTest, AShardSmallerThanABatchIsRefused) {
  FeedOptions o;
  o.shards = 1 << 20;
  o.shard = 3;  // example 3 alone: i mod W == 3
  absl::StatusOr<std::unique_ptr<StepFeeds>> feeds = DatasetFeeds(MlpGraph(), "mlp", o);
  ASSERT_FALSE(feeds.ok());
  EXPECT_THAT(std::string(feeds.status().message()),
              HasSubstr("worker shard 3 has 1 examples, fewer than --batch 4"));
}

}  // namespace
}  // namespace weft
