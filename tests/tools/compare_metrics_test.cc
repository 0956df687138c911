// weft compare's per-run numbers (tools/compare/metrics.h) from synthetic
// --metrics-out lines with known answers: throughput over every trainer,
// the chief's step-time percentiles, the global batch's loss as the mean
// of the workers' (sync, allreduce, hybrid) or the chief's (async), the
// final loss over the last 10 steps, bytes per step from the loopback
// samples (or the launch fallback), and time and steps to a target. No
// processes, no sockets.
#include "tools/compare/metrics.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace weft {
namespace {

// `n` steps of a trainer taking `per_step` examples a step, 0.1 s apart
// from `t0`, each step taking step_ms, the loss falling from `loss0` by
// `drop` a step.
std::vector<Metric> Trainer(int n, int64_t per_step, double loss0, double drop,
                            double step_ms = 100, double t0 = 0) {
  std::vector<Metric> v;
  for (int i = 0; i < n; ++i) {
    Metric m;
    m.step = i + 1;
    m.wall_s = t0 + 0.1 * i;
    m.step_s = step_ms / 1e3;
    m.loss = loss0 - drop * i;
    m.examples = per_step * (i + 1);
    v.push_back(m);
  }
  return v;
}

TEST(ReadMetrics, ReadsWholeObjectLinesAndSkipsTheRest) {
  const std::string path = ::testing::TempDir() + "/m.metrics";
  {
    std::ofstream out(path);
    out << R"({"step":1,"wall_s":0.5,"step_s":0.02,"loss":2.5,"examples":32})" "\n"
        << "not json\n"
        << R"({"step":2,"wall_s":0.6,"step_s":0.03,"loss":2.25,"accuracy":0.5,"examples":64})" "\n"
        << "[1,2]\n"
        << R"({"step":3,"wall_s":0.7,"lo)";  // a line being written, cut
  }
  std::vector<Metric> v = ReadMetrics(path);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].step, 1);
  EXPECT_DOUBLE_EQ(v[0].wall_s, 0.5);
  EXPECT_DOUBLE_EQ(v[0].step_s, 0.02);
  EXPECT_DOUBLE_EQ(v[0].loss, 2.5);
  EXPECT_FALSE(v[0].has_accuracy);
  EXPECT_EQ(v[1].examples, 64);
  EXPECT_TRUE(v[1].has_accuracy);
  EXPECT_DOUBLE_EQ(v[1].accuracy, 0.5);
  EXPECT_TRUE(ReadMetrics(path + ".missing").empty());
  std::remove(path.c_str());
}

TEST(Percentile, NearestRank) {
  EXPECT_EQ(Percentile({}, 0.5), 0);
  EXPECT_EQ(Percentile({3, 1, 2}, 0.5), 2);
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_EQ(Percentile(v, 0.99), 99);  // rank round(0.99 * 99) = 98
  EXPECT_EQ(Percentile(v, 1.0), 100);
  EXPECT_EQ(Percentile(v, 0.0), 1);
}

TEST(ComputeRunNumbers, RefusesAChiefOfFewerThanTwoSteps) {
  absl::StatusOr<RunNumbers> n =
      ComputeRunNumbers("single", 1, 64, {Trainer(1, 64, 1, 0)}, {});
  EXPECT_EQ(n.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(n.status().message(), "the chief wrote fewer than 2 steps of metrics");
  EXPECT_FALSE(ComputeRunNumbers("single", 1, 64, {}, {}).ok());
}

TEST(ComputeRunNumbers, SingleProcess) {
  // 21 steps of 64 examples, 0.1 s apart: 20 * 64 examples in 2 s.
  std::vector<Metric> t = Trainer(21, 64, 3.0, 0.1, /*step_ms=*/50);
  t[5].step_s = 0.9;  // one slow step: the p99, not the p50
  t[0].step_s = 5;    // the first step (setup) is left out
  t.back().has_accuracy = true;
  for (auto& m : t) m.accuracy = 0.25;
  absl::StatusOr<RunNumbers> n = ComputeRunNumbers("single", 1, 64, {t}, {});
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_DOUBLE_EQ(n->examples_per_s, 20 * 64 / 2.0);
  EXPECT_DOUBLE_EQ(n->step_p50_ms, 50);
  EXPECT_DOUBLE_EQ(n->step_p99_ms, 900);
  EXPECT_EQ(n->bytes_per_step, 0);  // one process: no network
  // The last 10 losses: 3.0 - 0.1 * (11..20), mean 3.0 - 1.55.
  EXPECT_NEAR(n->final_loss, 1.45, 1e-12);
  EXPECT_TRUE(n->has_accuracy);
  EXPECT_NEAR(n->final_accuracy, 0.25, 1e-12);
  ASSERT_EQ(n->curve.size(), 21u);
  EXPECT_DOUBLE_EQ(n->curve[0].second, 3.0);
  // Step index 12: the mean of the losses of indices 3..12.
  EXPECT_NEAR(n->curve[12].second, 3.0 - 0.1 * 7.5, 1e-12);
  EXPECT_EQ(n->curve_steps[12].second, 13);
  EXPECT_EQ(n->time_to_target, -1);  // until MarkTarget
}

TEST(ComputeRunNumbers, SyncLossIsTheMeanOfTheWorkers) {
  // Two workers of 32 examples; their losses differ by 1 at every step,
  // worker 1 wrote a step fewer.
  std::vector<Metric> w0 = Trainer(12, 32, 2.0, 0.0);
  std::vector<Metric> w1 = Trainer(11, 32, 3.0, 0.0);
  for (const char* mode : {"between-sync", "allreduce", "hybrid"}) {
    absl::StatusOr<RunNumbers> n = ComputeRunNumbers(mode, 2, 64, {w0, w1}, {});
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_NEAR(n->final_loss, 2.5, 1e-12) << mode;
    EXPECT_EQ(n->curve.size(), 11u) << mode;  // the steps all wrote
    // Throughput over both: 11 * 32 in 1.1 s and 10 * 32 in 1.0 s.
    EXPECT_NEAR(n->examples_per_s, 320 + 320, 1e-9) << mode;
  }
  // Async: the chief's own losses, every line of its.
  absl::StatusOr<RunNumbers> n =
      ComputeRunNumbers("between-async", 2, 64, {w0, w1}, {});
  ASSERT_TRUE(n.ok());
  EXPECT_NEAR(n->final_loss, 2.0, 1e-12);
  EXPECT_EQ(n->curve.size(), 12u);
  // Its global step counts every worker's update of B/W: 12 -> 6 batches.
  EXPECT_EQ(n->curve_steps.back().second, 6);
}

TEST(ComputeRunNumbers, BytesPerStepFromTheLoopbackSamples) {
  std::vector<Metric> w0 = Trainer(11, 32, 1, 0), w1 = Trainer(11, 32, 1, 0);
  LoopbackSamples b;
  b.at_launch = 100;
  b.at_first = 1000;
  b.examples_at_first = 2 * 32;  // one step each
  b.at_end = 1000 + 10 * 5000;   // 10 more global batches of 5000 bytes
  absl::StatusOr<RunNumbers> n = ComputeRunNumbers("allreduce", 2, 64, {w0, w1}, b);
  ASSERT_TRUE(n.ok());
  EXPECT_DOUBLE_EQ(n->bytes_per_step, 5000);
  // Not sampled after the first step: from launch, over every batch.
  b.at_first = -1;
  b.at_end = 100 + 11 * 4000;
  n = ComputeRunNumbers("allreduce", 2, 64, {w0, w1}, b);
  ASSERT_TRUE(n.ok());
  EXPECT_DOUBLE_EQ(n->bytes_per_step, 4000);
  // Not sampled at all, or a counter that went back: not measured.
  n = ComputeRunNumbers("allreduce", 2, 64, {w0, w1}, LoopbackSamples{});
  EXPECT_EQ(n->bytes_per_step, -1);
  b.at_end = 50;
  n = ComputeRunNumbers("allreduce", 2, 64, {w0, w1}, b);
  EXPECT_EQ(n->bytes_per_step, -1);
}

TEST(MarkTarget, FirstPointOfTheSmoothedCurveAtOrBelow) {
  absl::StatusOr<RunNumbers> n =
      ComputeRunNumbers("single", 1, 64, {Trainer(30, 64, 3.0, 0.1)}, {});
  ASSERT_TRUE(n.ok());
  // Smoothed over 10 steps the curve at index i >= 9 is 3.0 - 0.1 (i - 4.5):
  // at or below 1.5 first at i = 20 (wall 2.0 s, step 21).
  MarkTarget(1.5, &*n);
  EXPECT_NEAR(n->time_to_target, 2.0, 1e-12);
  EXPECT_EQ(n->steps_to_target, 21);
  MarkTarget(0.01, &*n);
  EXPECT_EQ(n->time_to_target, -1);
  EXPECT_EQ(n->steps_to_target, -1);
}

}  // namespace
}  // namespace weft
