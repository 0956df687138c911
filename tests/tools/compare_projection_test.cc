// weft compare's cost model (tools/compare/projection.h) and its report
// (projection_report.h): runs generated from known costs give those costs
// back, the leave-one-out check predicts them, the projection follows the
// model's latency-bandwidth formula, terms nothing determines are refused
// by name, the report says which terms were fitted, assumed or stated, and
// link rates and latencies parse as users write them.
#include "tools/compare/projection.h"
#include "tools/compare/projection_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace weft {
namespace {

constexpr double kBatch = 64, kCores = 2, kC = 1e-4;  // s per example

// A run of `mode` measured under `s`, from the mode's fixed cost a, its
// growth d per worker, and model bytes g.
MeasuredRun Synthetic(const std::string& mode, int w, int ps, double a, double d,
                      double g, const MeasuredSetting& s) {
  MeasuredRun r;
  r.mode = mode;
  r.workers = w;
  r.ps = ps;
  const bool ring = mode == "allreduce";
  // Measured on one shaped loopback: all the step's bytes cross it.
  const double link = ring ? 2 * g * (w - 1) : 2 * g * w;
  const double tasks = w + ps + (mode == "in-graph" ? 1 : 0);
  const double t = std::max(1.0, tasks / kCores) * (a + d * (ring ? w - 1 : w) +
                                                    kC * (kBatch / w)) +
                   (s.link_bytes_per_s > 0 ? link / s.link_bytes_per_s : 0);
  r.examples_per_s = kBatch / t;
  r.bytes_per_step = ring ? 2 * g * (w - 1) : 2 * g * w;
  return r;
}

MeasuredRun Single() {
  MeasuredRun r;
  r.mode = "single";
  r.examples_per_s = 1 / kC;
  r.bytes_per_step = 0;
  return r;
}

const ModeFit* Find(const CostModel& m, const std::string& mode) {
  for (const ModeFit& f : m.modes) {
    if (f.mode == mode) return &f;
  }
  return nullptr;
}

TEST(CompareProjectionTest, FitsTheCostsTheRunsCameFrom) {
  MeasuredSetting s{kBatch, kCores, 1.25e7};  // shaped to 100mbit
  std::vector<MeasuredRun> runs = {Single()};
  for (int w : {1, 2, 4}) {
    runs.push_back(Synthetic("between-sync", w, 1, 2e-3, 5e-4, 4e5, s));
  }
  for (int w : {2, 3, 4}) runs.push_back(Synthetic("allreduce", w, 0, 1e-3, 2e-4, 4e5, s));
  // A ring of one: far faster than the model's ring (it averages with
  // nobody); left out of the fit, listed by the check, not predicted.
  runs.push_back(Synthetic("allreduce", 1, 0, 0, 0, 4e5, s));
  runs.push_back(Synthetic("in-graph", 2, 1, 5e-3, 0, 4e5, s));
  auto model = FitCostModel(runs, s);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_DOUBLE_EQ(model->compute_s_per_example, kC);
  ASSERT_EQ(model->modes.size(), 3u);
  struct Want {
    const char* mode;
    double a, d;
  };
  for (const Want& want : {Want{"between-sync", 2e-3, 5e-4},
                           Want{"allreduce", 1e-3, 2e-4}, Want{"in-graph", 5e-3, 0}}) {
    const ModeFit* f = Find(*model, want.mode);
    ASSERT_NE(f, nullptr) << want.mode;
    EXPECT_NEAR(f->fixed_s, want.a, 1e-12) << want.mode;
    EXPECT_NEAR(f->per_worker_s, want.d, 1e-12) << want.mode;
    EXPECT_NEAR(f->model_bytes, 4e5, 1e-6) << want.mode;
  }

  // Each run predicted from the others of its mode; in-graph has one run.
  std::vector<ModelCheck> checks = CheckCostModel(runs, s);
  ASSERT_EQ(checks.size(), 8u);
  for (const ModelCheck& c : checks) {
    if (c.mode == "allreduce" && c.workers == 1) {
      EXPECT_FALSE(c.modelled);
      continue;
    }
    EXPECT_TRUE(c.modelled) << c.mode << c.workers;
    EXPECT_NEAR(c.predicted, c.measured, 1e-9 * c.measured) << c.mode << c.workers;
    EXPECT_EQ(c.in_sample, c.mode == "in-graph") << c.mode;
  }

  // Two worker counts or more fit the growth; in-graph's one does not.
  EXPECT_TRUE(Find(*model, "between-sync")->growth_fitted);
  EXPECT_TRUE(Find(*model, "allreduce")->growth_fitted);
  EXPECT_FALSE(Find(*model, "in-graph")->growth_fitted);
  EXPECT_EQ(Find(*model, "allreduce")->worker_counts, (std::vector<int>{2, 3, 4}));

  // 8 workers of 16 examples on 1 Gbit/s with 50 us per message, a machine
  // each.
  const double lambda = 50e-6;
  absl::StatusOr<std::vector<Projection>> projected =
      Project(*model, runs, {8}, 16, ProjectedLink{1.25e8, lambda});
  ASSERT_TRUE(projected.ok()) << projected.status();
  const std::vector<Projection>& p = *projected;
  ASSERT_EQ(p.size(), 3u);
  for (const Projection& x : p) {
    const bool ring = x.mode == "allreduce";
    const double net = ring ? 2 * 4e5 * 7 / 8 / 1.25e8 : 4e5 * 8 / 1.25e8;
    const double hops = ring ? 14 : x.mode == "in-graph" ? 6 : 8;
    const ModeFit* f = Find(*model, x.mode);
    EXPECT_EQ(x.ps, ring ? 0 : 1);
    EXPECT_NEAR(x.network_s, net, 1e-12) << x.mode;
    EXPECT_NEAR(x.latency_s, hops * lambda, 1e-12) << x.mode;
    const double n = ring ? 7 : 8;  // ring hops / 2, or W
    EXPECT_NEAR(x.examples_per_s,
                8 * 16 / (f->fixed_s + f->per_worker_s * n + kC * 16 + net +
                          hops * lambda),
                1e-6)
        << x.mode;
  }
  // The ring's busiest link carries less than the ps's at 8 workers.
  EXPECT_LT(p[1].network_s, p[0].network_s);
}

TEST(CompareProjectionTest, AnUnshapedLoopbackLeavesTheNetworkToTheFixedCost) {
  MeasuredSetting s{kBatch, kCores, 0};
  std::vector<MeasuredRun> runs = {Single()};
  for (int w : {1, 2, 3}) {
    runs.push_back(Synthetic("between-async", w, 1, 3e-3, 1e-3, 1e5, s));
  }
  auto model = FitCostModel(runs, s);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->modes.size(), 1u);
  EXPECT_NEAR(model->modes[0].fixed_s, 3e-3, 1e-12);
  EXPECT_NEAR(model->modes[0].per_worker_s, 1e-3, 1e-12);
  EXPECT_NEAR(model->modes[0].model_bytes, 1e5, 1e-9);
  // A measured run that the model misses shows in the check.
  runs[3].examples_per_s /= 2;
  std::vector<ModelCheck> checks = CheckCostModel(runs, s);
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_FALSE(checks[2].in_sample);
  EXPECT_GT(checks[2].predicted, 1.5 * checks[2].measured);
}

// With one worker count measured, the old model projected perfect scaling;
// the ring's 2 (W-1) hops of stated latency now slow it as it grows.
TEST(CompareProjectionTest, OneWorkerCountStillScalesByLatencyAndBandwidth) {
  MeasuredSetting s{kBatch, kCores, 0};
  std::vector<MeasuredRun> runs = {Single(), Synthetic("allreduce", 2, 0, 1e-3, 0, 1e6, s)};
  auto model = FitCostModel(runs, s);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_FALSE(model->modes[0].growth_fitted);
  auto p = Project(*model, runs, {8, 128}, 32, ProjectedLink{1.25e9, 20e-6});
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->size(), 2u);
  EXPECT_NEAR((*p)[1].latency_s, 254 * 20e-6, 1e-12);
  EXPECT_GT((*p)[1].step_s, (*p)[0].step_s + 2e-3);
  // Per worker, 128 workers run slower than 8.
  EXPECT_LT((*p)[1].examples_per_s / 128, (*p)[0].examples_per_s / 8);
}

TEST(CompareProjectionTest, RefusesTermsNothingDetermines) {
  MeasuredSetting s{kBatch, kCores, 0};
  std::vector<MeasuredRun> runs = {Single(), Synthetic("between-async", 2, 1, 1e-3, 0, 1e5, s)};
  auto model = FitCostModel(runs, s);
  ASSERT_TRUE(model.ok()) << model.status();
  auto no_rate = Project(*model, runs, {8}, 16, ProjectedLink{0, 1e-5});
  ASSERT_FALSE(no_rate.ok());
  EXPECT_NE(std::string(no_rate.status().message()).find("--project-link"),
            std::string::npos);
  auto no_latency = Project(*model, runs, {8}, 16, ProjectedLink{1.25e8, -1});
  ASSERT_FALSE(no_latency.ok());
  EXPECT_NE(std::string(no_latency.status().message()).find("--project-latency"),
            std::string::npos);
  // Bytes not measured (no private network namespace): G is unknown.
  runs[1].bytes_per_step = -1;
  model = FitCostModel(runs, s);
  ASSERT_TRUE(model.ok()) << model.status();
  auto no_bytes = Project(*model, runs, {8}, 16, ProjectedLink{1.25e8, 0});
  ASSERT_FALSE(no_bytes.ok());
  EXPECT_EQ(no_bytes.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(no_bytes.status().message()).find("between-async"),
            std::string::npos);
  // The report refuses with the same words, and says so in the JSON.
  ProjectionRequest request{{8}, 16, ProjectedLink{1.25e8, 0}, "1gbit", "0"};
  ProjectionReport report = BuildProjectionReport(runs, s, request);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.text.find("no projection: cannot project between-async"),
            std::string::npos)
      << report.text;
  EXPECT_TRUE(report.json.contains("error"));
}

TEST(CompareProjectionTest, TheReportSaysWhereEachTermCameFrom) {
  MeasuredSetting s{kBatch, kCores, 0};
  std::vector<MeasuredRun> runs = {Single()};
  for (int w : {2, 4}) runs.push_back(Synthetic("allreduce", w, 0, 1e-3, 2e-4, 1e5, s));
  runs.push_back(Synthetic("between-sync", 2, 1, 2e-3, 0, 1e5, s));
  ProjectionRequest request{{8, 32}, 16, ProjectedLink{1.25e9, 5e-5}, "10gbit", "50us"};
  ProjectionReport report = BuildProjectionReport(runs, s, request);
  ASSERT_TRUE(report.ok) << report.text;
  const nlohmann::json& j = report.json;
  EXPECT_EQ(j["measured"], false);
  ASSERT_EQ(j["runs"].size(), 4u);
  for (const auto& row : j["runs"]) EXPECT_EQ(row["measured"], false);
  std::map<std::string, std::string> growth;
  for (const auto& m : j["model"]["modes"]) {
    growth[m["mode"]] = m["terms"][1]["source"];
  }
  EXPECT_EQ(growth["allreduce"].rfind("fitted from 2 runs (2, 4 workers)", 0), 0u)
      << growth["allreduce"];
  EXPECT_EQ(growth["between-sync"].rfind("ASSUMED 0", 0), 0u) << growth["between-sync"];
  bool rate_stated = false, latency_stated = false;
  for (const auto& t : j["terms"]) {
    rate_stated |= t["source"] == "stated: --project-link 10gbit";
    latency_stated |= t["source"] == "stated: --project-latency 50us";
  }
  EXPECT_TRUE(rate_stated && latency_stated) << j["terms"].dump();
  EXPECT_NE(report.text.find("projected (cost model, NOT measured)"), std::string::npos);
  EXPECT_NE(report.text.find("ASSUMED 0: one worker count measured"), std::string::npos);
  ASSERT_EQ(j["check"].size(), 3u);
}

TEST(CompareProjectionTest, NeedsTheSingleRun) {
  MeasuredSetting s{kBatch, kCores, 0};
  auto model = FitCostModel({Synthetic("allreduce", 2, 0, 1e-3, 0, 1e5, s)}, s);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(model.status().message()).find("single"), std::string::npos);
}

TEST(CompareProjectionTest, LinkRatesInTcUnits) {
  EXPECT_DOUBLE_EQ(ParseLinkRate("1gbit").value(), 1.25e8);
  EXPECT_DOUBLE_EQ(ParseLinkRate("100mbit").value(), 1.25e7);
  EXPECT_DOUBLE_EQ(ParseLinkRate("2.5gbit").value(), 3.125e8);
  EXPECT_DOUBLE_EQ(ParseLinkRate("10mbps").value(), 1e7);
  for (const char* bad : {"", "fast", "0gbit", "1 gbit", "gbit", "1gb"}) {
    EXPECT_FALSE(ParseLinkRate(bad).ok()) << bad;
  }
}

TEST(CompareProjectionTest, Latencies) {
  EXPECT_DOUBLE_EQ(ParseLatency("50us").value(), 50e-6);
  EXPECT_DOUBLE_EQ(ParseLatency("0.2ms").value(), 2e-4);
  EXPECT_DOUBLE_EQ(ParseLatency("0").value(), 0);
  for (const char* bad : {"", "fast", "-1ms", "50", "1h"}) {
    EXPECT_FALSE(ParseLatency(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace weft
