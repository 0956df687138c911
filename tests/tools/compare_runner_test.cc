// The parts of weft compare's runner (tools/compare/runner.h) that need
// no processes: which runs a comparison plans, and the weft train flags
// its trainers get for the model. compare_cli_test runs real clusters.
#include "tools/compare/runner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace weft {
namespace {

std::string Plan(const std::vector<RunSpec>& plan) {
  std::vector<std::string> out;
  for (const RunSpec& r : plan) {
    out.push_back(absl::StrCat(r.mode, "/", r.workers, "w/", r.ps, "ps"));
  }
  return absl::StrJoin(out, " ");
}

TEST(PlanRuns, OnePerModeAndCountThatApplies) {
  EXPECT_EQ(Plan(PlanRuns({"single", "model-parallel", "in-graph", "between-async",
                           "between-sync", "allreduce", "hybrid"},
                          {2, 4}, {1, 2})),
            "single/1w/0ps model-parallel/1w/0ps in-graph/2w/1ps in-graph/4w/1ps "
            "between-async/2w/1ps between-async/2w/2ps between-async/4w/1ps "
            "between-async/4w/2ps between-sync/2w/1ps between-sync/2w/2ps "
            "between-sync/4w/1ps between-sync/4w/2ps allreduce/2w/0ps "
            "allreduce/4w/0ps hybrid/2w/0ps hybrid/4w/0ps");
  EXPECT_EQ(Plan(PlanRuns({}, {2}, {1})), "");
}

TEST(TrainerArgs, BuiltInModel) {
  TrainerModel m;
  m.model = "mlp";
  m.data = "digits";
  m.lr = "0.1";
  EXPECT_EQ(absl::StrJoin(TrainerArgs(m, 32), " "),
            "--batch 32 --model mlp --data digits --lr 0.1");
}

TEST(TrainerArgs, OwnGraph) {
  TrainerModel m;
  m.model = "g.pb";  // what the report names it; the flags take graph
  m.graph = "/abs/g.pb";
  m.loss = "loss:0";
  m.init = "init";
  m.inputs = {"x=/abs/x.npy", "y=/abs/y.npy"};
  m.optimizer = "adam";
  m.seed = "7";
  EXPECT_EQ(absl::StrJoin(TrainerArgs(m, 16), " "),
            "--batch 16 --graph /abs/g.pb --loss loss:0 --init init "
            "--input x=/abs/x.npy --input y=/abs/y.npy --optimizer adam --seed 7");
}

}  // namespace
}  // namespace weft
