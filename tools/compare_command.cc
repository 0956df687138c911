// weft compare: the same model, initial weights, data and global batch
// trained in every replication mode, on local clusters this command starts
// and stops itself, and a table, DIR/report.json and pictures of how the
// modes compare.
//
// This file parses the flags; the runs, their networks and numbers, the
// report and the projection are libraries under tools/compare/ (runner.h,
// network.h, metrics.h, report.h, projection_report.h).
//
// Ctrl-C (or SIGTERM) stops the running children and ends the command; the
// children also get SIGTERM if this process dies.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/compare/local_processes.h"
#include "tools/compare/projection.h"
#include "tools/compare/projection_report.h"
#include "tools/compare/report.h"
#include "tools/compare/runner.h"
#include "tools/step_feeds.h"

namespace weft {
namespace {

constexpr char kUsage[] =
    "usage: weft compare --model mlp|cnn|transformer [flags]\n"
    "       weft compare --graph FILE --loss T [--input NAME=FILE.npy ...] [flags]\n"
    "\n"
    "Trains the same model (same initial weights, data and global batch) in\n"
    "each replication mode on local clusters it starts and stops itself,\n"
    "then prints a table and writes DIR/report.json, DIR/loss_vs_time.png and\n"
    "DIR/throughput_vs_workers.png (with python3 and matplotlib), and each\n"
    "run's TensorBoard events under DIR/tensorboard.\n"
    "\n"
    "  --model M         mlp, cnn or transformer\n"
    "  --graph FILE --loss T  your own model: a forward graph and its loss\n"
    "                    tensor, as for weft train (tools/export_keras_graph.py\n"
    "                    exports a Keras model); its modes are single,\n"
    "                    model-parallel (split by estimated cost), in-graph,\n"
    "                    between-async, between-sync and allreduce\n"
    "  --input NAME=FILE.npy, --init NODE, --train-op NODE: as for weft train\n"
    "                    --graph (with --train-op: single and between-async)\n"
    "  --modes LIST      of single, model-parallel (one process, layers over\n"
    "                    2 CPU devices; mlp and cnn), in-graph, between-async,\n"
    "                    between-sync, allreduce, hybrid (allreduce with\n"
    "                    each worker's layers over 2 CPU devices; mlp, cnn)\n"
    "                    (default: all of them)\n"
    "  --workers LIST    worker counts to run the distributed modes with\n"
    "                    (default 2)\n"
    "  --ps LIST         ps task counts for the between-graph modes (default 1)\n"
    "  --steps N         global batches each run trains on (default 200)\n"
    "  --batch B         the global batch; each of W workers takes B/W\n"
    "                    (default 64)\n"
    "  --data D          synthetic (default) or digits\n"
    "  --optimizer O, --lr X, --hidden H, --seed S: as for weft train\n"
    "  --target-loss X   report time and steps to this loss (default: the\n"
    "                    highest final loss of the runs, so all reach it)\n"
    "  --link-rate R     shape each run's private loopback to R (tc rates:\n"
    "                    1gbit, 100mbit) as a network between machines would\n"
    "  --run-timeout-s N give up on a run after N seconds (default 600)\n"
    "  --project LIST    also project each distributed mode's throughput at\n"
    "                    these worker counts (8,32,128), one machine per task,\n"
    "                    from a cost model fitted to the runs (needs single)\n"
    "  --project-link R  the projected link's rate (tc units; default:\n"
    "                    --link-rate, else it must be given)\n"
    "  --project-latency T  the projected link's one-way latency per message\n"
    "                    (50us, 0.2ms; 0 leaves latency out); needed\n"
    "  --out DIR         where the report and logs go (default: a new\n"
    "                    directory under /tmp)\n";

struct Flags {
  RunOptions run;  // the model, steps, batch, --link-rate, --out, timeout
  std::vector<std::string> modes;
  std::vector<int> workers, ps, project;
  // With --project: the projected link as stated, and parsed.
  std::string project_link_text, project_latency_text;
  ProjectedLink project_link;
  double link_bytes_per_s = 0;  // --link-rate's (0: unshaped)
  std::optional<double> target_loss;
};

absl::StatusOr<std::vector<int>> IntList(const CommandLine& cl,
                                         const std::string& flag,
                                         const std::string& fallback) {
  std::vector<int> out;
  for (absl::string_view part : absl::StrSplit(cl.Get(flag, fallback), ',')) {
    int v = 0;
    if (!absl::SimpleAtoi(part, &v) || v < 1 || v > 64) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, " takes a list of counts from 1 to 64, not '", part, "'"));
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace

int CompareCommand(int argc, char** argv) {
  const sigset_t blocked = BlockStopSignals();

  std::map<std::string, FlagKind> flag_kinds;
  for (const char* name :
       {"model", "modes", "workers", "ps", "steps", "batch", "data", "optimizer",
        "lr", "hidden", "seed", "target-loss", "link-rate", "run-timeout-s", "out",
        "project", "project-link", "project-latency", "graph", "loss", "init", "train-op"}) {
    flag_kinds[name] = kValue;
  }
  flag_kinds["input"] = kRepeated;
  flag_kinds["help"] = kSwitch;
  CommandLine cl(flag_kinds);
  if (std::optional<int> rc = StartCommand(argc, argv, kUsage, {}, &cl)) {
    return *rc;
  }
  auto usage = [&](const std::string& m) {
    return ReportUsage(absl::InvalidArgumentError(m), kUsage);
  };
  Flags f;
  RunOptions& o = f.run;
  TrainerModel& tm = o.model;
  if (cl.Has("model") == cl.Has("graph")) {
    return usage("give exactly one of --model and --graph");
  }
  if (cl.Has("graph")) {
    if (!cl.Has("loss")) return usage("--graph needs --loss, the loss tensor to train");
    for (const char* flag : {"data", "hidden", "seed"}) {
      if (cl.Has(flag)) {
        return usage(absl::StrCat("--", flag, " goes with --model: a --graph model "
                                  "takes --input NAME=FILE.npy (or synthetic data)"));
      }
    }
    auto absolute = [](const std::string& p) {
      if (p.empty() || p[0] == '/') return p;
      char cwd[4096];
      return getcwd(cwd, sizeof(cwd)) ? absl::StrCat(cwd, "/", p) : p;
    };
    tm.graph = absolute(cl.Get("graph"));
    tm.loss = cl.Get("loss");
    tm.init = cl.Get("init", "");
    tm.train_op = cl.Get("train-op", "");
    std::map<std::string, std::string> inputs;
    for (const std::string& in : cl.GetAll("input")) {
      if (absl::Status s = ParseInputFlag(in, &inputs); !s.ok()) {
        return ReportUsage(s, kUsage);
      }
    }
    for (const auto& [name, file] : inputs) {
      tm.inputs.push_back(absl::StrCat(name, "=", absolute(file)));
    }
    tm.model = cl.Get("graph");
  } else {
    if (cl.Has("loss") || cl.Has("init") || cl.Has("input") || cl.Has("train-op")) {
      return usage("--loss, --init, --input and --train-op go with --graph");
    }
    tm.model = cl.Get("model");
    if (tm.model != "mlp" && tm.model != "cnn" && tm.model != "transformer") {
      return usage(absl::StrCat("unknown model '", tm.model, "' (mlp, cnn or transformer)"));
    }
  }
  tm.data = cl.Get("data", "synthetic");
  tm.optimizer = cl.Get("optimizer", "");
  tm.lr = cl.Get("lr", "");
  tm.hidden = cl.Get("hidden", "");
  tm.seed = cl.Get("seed", "");
  o.link_rate = cl.Get("link-rate", "");
  if (o.link_rate.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.") !=
      std::string::npos) {
    return usage(absl::StrCat("--link-rate takes a tc rate such as 1gbit, not '",
                              o.link_rate, "'"));
  }
  absl::StatusOr<int64_t> steps = cl.GetPositiveInt("steps", 200, 1000000);
  absl::StatusOr<int64_t> batch = cl.GetPositiveInt("batch", 64, 1 << 16);
  absl::StatusOr<int64_t> timeout = cl.GetPositiveInt("run-timeout-s", 600, 86400);
  absl::StatusOr<std::vector<int>> workers = IntList(cl, "workers", "2");
  absl::StatusOr<std::vector<int>> ps = IntList(cl, "ps", "1");
  for (const absl::Status& s : {steps.status(), batch.status(), timeout.status(),
                                workers.status(), ps.status()}) {
    if (!s.ok()) return ReportUsage(s, kUsage);
  }
  o.steps = *steps;
  o.batch = *batch;
  o.run_timeout = absl::Seconds(*timeout);
  f.workers = *workers;
  f.ps = *ps;
  if (cl.Has("target-loss")) {
    double t = 0;
    if (!absl::SimpleAtod(cl.Get("target-loss"), &t) || !(t > 0)) {
      return usage("--target-loss takes a positive number");
    }
    f.target_loss = t;
  }
  const std::vector<std::string> known = {"single", "model-parallel", "in-graph",
                                          "between-async", "between-sync",
                                          "allreduce", "hybrid"};
  // The transformer has no layers to split (graph/models/models.h); a
  // user's graph is split by estimated cost.
  std::vector<std::string> defaults = known;
  const bool own_graph = !tm.graph.empty();
  for (const char* split : {"model-parallel", "hybrid"}) {
    if (tm.model == "transformer") {
      defaults.erase(std::find(defaults.begin(), defaults.end(), split));
    }
  }
  if (!tm.train_op.empty()) {
    // A graph that trains itself: Weft has no gradients to average or split.
    defaults = {"single", "between-async"};
  }
  f.modes = absl::StrSplit(cl.Get("modes", absl::StrJoin(defaults, ",")), ',');
  for (const std::string& m : f.modes) {
    if (std::find(known.begin(), known.end(), m) == known.end()) {
      return usage(absl::StrCat("unknown mode '", m, "' in --modes (",
                                absl::StrJoin(known, ", "), ")"));
    }
    if ((m == "model-parallel" || m == "hybrid") && tm.model == "transformer") {
      return usage(absl::StrCat("--modes ", m, " needs mlp or cnn (the "
                                "transformer's layers are not split)"));
    }
    if (own_graph && std::find(defaults.begin(), defaults.end(), m) == defaults.end()) {
      return usage(absl::StrCat("--modes ", m, " is not available for a --graph "
                                "model yet (", absl::StrJoin(defaults, ", "), " are)"));
    }
  }
  if (cl.Has("project")) {
    for (absl::string_view part : absl::StrSplit(cl.Get("project"), ',')) {
      int v = 0;
      if (!absl::SimpleAtoi(part, &v) || v < 1 || v > 100000) {
        return usage(absl::StrCat("--project takes worker counts from 1 to "
                                  "100000, not '", part, "'"));
      }
      f.project.push_back(v);
    }
    if (std::find(f.modes.begin(), f.modes.end(), "single") == f.modes.end()) {
      return usage("--project needs the single run in --modes (its compute "
                   "time per example is the cost model's)");
    }
    // The projected link is stated, never guessed (projection.h).
    f.project_link_text = cl.Get("project-link", o.link_rate);
    if (f.project_link_text.empty()) {
      return usage("--project needs the projected link's rate: --project-link "
                   "R (e.g. 10gbit; --link-rate's is taken when given)");
    }
    if (!cl.Has("project-latency")) {
      return usage("--project needs the projected link's one-way latency per "
                   "message: --project-latency T (e.g. 50us; 0 leaves it out)");
    }
    f.project_latency_text = cl.Get("project-latency");
    for (auto [rate, bytes] :
         {std::pair{&f.project_link_text, &f.project_link.bytes_per_s},
          std::pair{&o.link_rate, &f.link_bytes_per_s}}) {
      if (rate->empty()) continue;
      absl::StatusOr<double> parsed = ParseLinkRate(*rate);
      if (!parsed.ok()) return ReportUsage(parsed.status(), kUsage);
      *bytes = *parsed;
    }
    absl::StatusOr<double> latency = ParseLatency(f.project_latency_text);
    if (!latency.ok()) return ReportUsage(latency.status(), kUsage);
    f.project_link.latency_s = *latency;
  } else if (cl.Has("project-link") || cl.Has("project-latency")) {
    return usage("--project-link and --project-latency go with --project");
  }
  for (int w : f.workers) {
    if (o.batch % w != 0) {
      return usage(absl::StrCat("--batch ", o.batch, " must divide among ", w,
                                " workers"));
    }
  }
  o.out = cl.Get("out", "");
  if (o.out.empty()) {
    char tmpl[] = "/tmp/weft-compare-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      return ReportError(absl::FailedPreconditionError(
          absl::StrCat("cannot make an output directory: ", std::strerror(errno))));
    }
    o.out = tmpl;
  } else if (mkdir(o.out.c_str(), 0755) != 0 && errno != EEXIST) {
    return ReportError(absl::FailedPreconditionError(absl::StrCat(
        "cannot make --out ", o.out, ": ", std::strerror(errno))));
  }
  mkdir((o.out + "/tensorboard").c_str(), 0755);  // every run's events

  const std::vector<RunSpec> plan = PlanRuns(f.modes, f.workers, f.ps);
  std::printf("weft compare: %s, global batch %lld, %lld steps, %zu runs; "
              "logs and report in %s\n",
              tm.model.c_str(), static_cast<long long>(o.batch),
              static_cast<long long>(o.steps), plan.size(), o.out.c_str());
  std::fflush(stdout);
  CompareRunner runner(o, blocked);
  std::vector<RunResult> results;
  for (const RunSpec& spec : plan) {
    std::printf("  %-14s %d worker(s), %d ps ... ", spec.mode.c_str(),
                spec.workers, spec.ps);
    std::fflush(stdout);
    const absl::Time t0 = absl::Now();
    absl::StatusOr<RunResult> r = runner.Run(spec);
    if (!r.ok()) {
      std::printf("stopped\nweft compare: stopped by a signal; the runs' "
                  "processes are stopped\n");
      return 130;
    }
    if (r->ok) {
      std::printf("%.0f examples/s, final loss %.4f (%.1fs)\n",
                  r->numbers.examples_per_s, r->numbers.final_loss,
                  absl::ToDoubleSeconds(absl::Now() - t0));
    } else {
      std::printf("failed: %s\n", r->error.c_str());
    }
    std::fflush(stdout);
    results.push_back(*std::move(r));
  }

  // The target loss every run can be measured against.
  ReportSetting setting;
  setting.model = tm.model;
  setting.data = tm.data;
  setting.batch = o.batch;
  setting.steps = o.steps;
  setting.machine = Machine();
  setting.network_note = runner.network_note();
  setting.link_rate = o.link_rate;
  setting.out = o.out;
  setting.target_loss = TargetLoss(f.target_loss, results);
  setting.target_given = f.target_loss.has_value();
  bool any_failed = false;
  for (RunResult& r : results) {
    if (r.ok) MarkTarget(setting.target_loss, &r.numbers);
    any_failed = any_failed || !r.ok;
  }
  std::fputs(RunsTable(results, setting).c_str(), stdout);

  // --project: the cost model fitted to the runs, its check against them
  // and its projection, printed, and for the report.
  nlohmann::json projection = nullptr;
  if (!f.project.empty()) {
    ProjectionRequest request;
    request.workers = f.project;
    request.link = f.project_link;
    request.link_text = f.project_link_text;
    request.latency_text = f.project_latency_text;
    ProjectionReport report =
        ProjectRuns(results, o.batch, f.link_bytes_per_s, std::move(request));
    std::fputs(report.text.c_str(), stdout);
    projection = std::move(report.json);
  }
  const std::string report_path = o.out + "/report.json";
  if (absl::Status s = WriteReport(ReportJson(results, setting, projection), report_path);
      !s.ok()) {
    return ReportError(s);
  }
  // The pictures, by matplotlib (embedded tools/compare/compare_plots.py).
  if (DrawPlots(report_path, o.out)) {
    std::printf("weft compare: report %s, pictures %s/loss_vs_time.png and "
                "%s/throughput_vs_workers.png\n",
                report_path.c_str(), o.out.c_str(), o.out.c_str());
  } else {
    std::printf("weft compare: report %s; no pictures: python3 with "
                "matplotlib did not run (pip install matplotlib; see %s/plots.log)\n",
                report_path.c_str(), o.out.c_str());
  }
  std::printf("weft compare: TensorBoard shows the runs side by side: "
              "tensorboard --logdir %s/tensorboard\n", o.out.c_str());
  return any_failed ? kExitError : kExitOk;
}

}  // namespace weft
