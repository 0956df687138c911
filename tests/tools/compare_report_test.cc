// weft compare's report (tools/compare/report.h) from made-up runs: the
// target loss, the table's rows and closing note, report.json's fields,
// and byte counts as printed. No processes.
#include "tools/compare/report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace weft {
namespace {

std::vector<RunResult> Runs() {
  RunResult single;
  single.spec = {"single", 1, 0};
  single.ok = true;
  single.log_dir = "/o/single-1w-0ps";
  single.numbers.examples_per_s = 1234.4;
  single.numbers.step_p50_ms = 1.5;
  single.numbers.step_p99_ms = 2.25;
  single.numbers.bytes_per_step = 0;
  single.numbers.final_loss = 0.5;
  single.numbers.curve = {{0.1, 2.0}, {0.2, 0.4}};
  single.numbers.curve_steps = {{0.1, 1}, {0.2, 2}};
  RunResult ring = single;
  ring.spec = {"allreduce", 2, 0};
  ring.log_dir = "/o/allreduce-2w-0ps";
  ring.numbers.bytes_per_step = 3 * 1024 * 1024;
  ring.numbers.final_loss = 0.75;
  ring.numbers.has_accuracy = true;
  ring.numbers.final_accuracy = 0.875;
  RunResult failed;
  failed.spec = {"between-sync", 2, 1};
  failed.log_dir = "/o/between-sync-2w-1ps";
  failed.error = "worker1 ended with exit status 1";
  failed.numbers.final_loss = 9;  // not counted: the run failed
  return {single, ring, failed};
}

ReportSetting Setting(const std::vector<RunResult>& runs) {
  ReportSetting s;
  s.model = "mlp";
  s.data = "digits";
  s.batch = 64;
  s.steps = 2;
  s.machine = "a CPU, 2 cores";
  s.network_note = "private loopback per run";
  s.out = "/o";
  s.target_loss = TargetLoss(std::nullopt, runs);
  return s;
}

TEST(TargetLoss, GivenOrTheHighestFinalLossOfTheRunsThatSucceeded) {
  EXPECT_EQ(TargetLoss(0.3, Runs()), 0.3);
  EXPECT_EQ(TargetLoss(std::nullopt, Runs()), 0.75);
  EXPECT_EQ(TargetLoss(std::nullopt, {}), 0);
}

TEST(RunsTable, RowsAndNote) {
  std::vector<RunResult> runs = Runs();
  MarkTarget(0.75, &runs[0].numbers);
  const std::string t = RunsTable(runs, Setting(runs));
  EXPECT_NE(t.find("\nmode           workers  ps  examples/s   p50 ms   p99 ms  "
                   "bytes/step     loss     acc      to target\n"),
            std::string::npos) << t;
  EXPECT_NE(t.find("single               1   0        1234     1.50     2.25"
                   "         0 B   0.5000       -         0.2s/2\n"),
            std::string::npos) << t;
  EXPECT_NE(t.find("allreduce            2   0        1234     1.50     2.25"
                   "    3.00 MiB   0.7500   0.875    not reached\n"),
            std::string::npos) << t;
  EXPECT_NE(t.find("between-sync         2   1  failed (see /o/between-sync-2w-1ps)\n"),
            std::string::npos) << t;
  EXPECT_NE(t.find("target loss 0.7500 (the highest final loss); network: "
                   "private loopback per run; a CPU, 2 cores)\n"),
            std::string::npos) << t;
}

TEST(ReportJson, Fields) {
  std::vector<RunResult> runs = Runs();
  MarkTarget(0.75, &runs[0].numbers);
  nlohmann::json j = ReportJson(runs, Setting(runs), nullptr);
  EXPECT_EQ(j["model"], "mlp");
  EXPECT_EQ(j["batch"], 64);
  EXPECT_EQ(j["target_loss"], 0.75);
  EXPECT_EQ(j["tensorboard"], "/o/tensorboard");
  EXPECT_EQ(j["measured"], true);
  EXPECT_FALSE(j.contains("projection"));
  ASSERT_EQ(j["runs"].size(), 3u);
  EXPECT_EQ(j["runs"][0]["time_to_target_s"], 0.2);
  EXPECT_EQ(j["runs"][0]["steps_to_target"], 2);
  EXPECT_FALSE(j["runs"][0].contains("final_accuracy"));
  EXPECT_EQ(j["runs"][0]["curve"], nlohmann::json::parse("[[0.1,2.0],[0.2,0.4]]"));
  EXPECT_EQ(j["runs"][1]["final_accuracy"], 0.875);
  EXPECT_FALSE(j["runs"][1].contains("time_to_target_s"));
  EXPECT_EQ(j["runs"][2]["ok"], false);
  EXPECT_EQ(j["runs"][2]["error"], "worker1 ended with exit status 1");
  EXPECT_FALSE(j["runs"][2].contains("final_loss"));
  nlohmann::json projected = ReportJson(runs, Setting(runs), {{"measured", false}});
  EXPECT_EQ(projected["measured"], false);
  EXPECT_EQ(projected["projection"]["measured"], false);
}

TEST(Bytes, AsPrinted) {
  EXPECT_EQ(Bytes(-1), "?");
  EXPECT_EQ(Bytes(512), "512 B");
  EXPECT_EQ(Bytes(1536), "1.5 KiB");
  EXPECT_EQ(Bytes(2 * 1024 * 1024), "2.00 MiB");
}

}  // namespace
}  // namespace weft
