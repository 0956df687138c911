#include "tools/compare/runner.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "distributed/cluster_spec.h"
#include "tools/compare/local_processes.h"
#include "tools/compare/network.h"

namespace weft {
namespace {

// The every-trainer examples once the chief is past its first step;
// nullopt before.
std::optional<int64_t> ExamplesOnceStarted(const std::vector<std::string>& metrics) {
  int64_t examples = 0;
  for (size_t i = 0; i < metrics.size(); ++i) {
    std::vector<Metric> v = ReadMetrics(metrics[i]);
    if (i == 0 && v.size() < 2) return std::nullopt;
    if (!v.empty()) examples += v.back().examples;
  }
  return examples;
}

}  // namespace

std::vector<std::string> TrainerArgs(const TrainerModel& m, int64_t batch) {
  std::vector<std::string> a = {"--batch", absl::StrCat(batch)};
  if (m.graph.empty()) {
    a.insert(a.end(), {"--model", m.model, "--data", m.data});
  } else {
    a.insert(a.end(), {"--graph", m.graph, "--loss", m.loss});
    if (!m.init.empty()) a.insert(a.end(), {"--init", m.init});
    if (!m.train_op.empty()) a.insert(a.end(), {"--train-op", m.train_op});
    for (const std::string& in : m.inputs) a.insert(a.end(), {"--input", in});
  }
  for (const auto& [flag, value] :
       {std::pair<const char*, const std::string&>{"--optimizer", m.optimizer},
        {"--lr", m.lr}, {"--hidden", m.hidden}, {"--seed", m.seed}}) {
    if (!value.empty()) a.insert(a.end(), {flag, value});
  }
  return a;
}

std::vector<RunSpec> PlanRuns(const std::vector<std::string>& modes,
                              const std::vector<int>& workers,
                              const std::vector<int>& ps) {
  std::vector<RunSpec> plan;
  for (const std::string& m : modes) {
    if (m == "single" || m == "model-parallel") {
      plan.push_back({m, 1, 0});
    } else if (m == "in-graph") {
      for (int w : workers) plan.push_back({m, w, 1});
    } else if (m == "allreduce" || m == "hybrid") {
      for (int w : workers) plan.push_back({m, w, 0});
    } else {
      for (int w : workers) {
        for (int p : ps) plan.push_back({m, w, p});
      }
    }
  }
  return plan;
}

absl::StatusOr<RunResult> CompareRunner::Run(const RunSpec& spec) {
  const RunOptions& o = options_;
  RunResult result;
  RunResult* r = &result;
  r->spec = spec;
  const std::string run_name =
      absl::StrCat(spec.mode, "-", spec.workers, "w-", spec.ps, "ps");
  r->log_dir = absl::StrCat(o.out, "/", run_name);
  mkdir(r->log_dir.c_str(), 0755);
  network_note_ = EnterRunNetwork(o.link_rate).note;
  std::vector<Child> servers, trainers;
  std::vector<std::string> metrics;
  auto fail = [&](const std::string& e) {
    r->error = e;
    StopAll(&trainers);
    StopAll(&servers);
    return result;
  };
  const bool local = spec.mode == "single" || spec.mode == "model-parallel";
  const int w = spec.workers;
  const int64_t per_worker = o.batch / w;
  absl::StatusOr<ClusterSpec> cluster =
      local ? absl::StatusOr<ClusterSpec>(ClusterSpec())
            : LocalCluster(spec.ps, w);
  if (!cluster.ok()) return fail(std::string(cluster.status().message()));
  const std::string cspec = cluster->ToString();
  // The cluster's tasks and clients share a token of their own: no other
  // process on this host can call them.
  std::string token_file;
  if (!local) {
    absl::StatusOr<std::string> token = WriteGeneratedToken(r->log_dir);
    if (!token.ok()) return fail(std::string(token.status().message()));
    token_file = *token;
  }
  auto spawn = [&](std::vector<Child>* into, std::vector<std::string> args,
                   const std::string& name, TaskId task) -> bool {
    Child c;
    c.task = task;
    c.address = cluster->Address(task).value_or("");
    c.log = absl::StrCat(r->log_dir, "/", name, ".log");
    if (!token_file.empty()) {
      args.push_back("--auth-token-file");
      args.push_back(token_file);
    }
    absl::Status s = SpawnWeft(args, blocked_, &c);
    if (!s.ok()) {
      r->error = std::string(s.message());
      return false;
    }
    into->push_back(c);
    return true;
  };
  auto metrics_file = [&](const std::string& name) {
    metrics.push_back(absl::StrCat(r->log_dir, "/", name, ".metrics"));
    return metrics.back();
  };
  auto with_model = [&](std::vector<std::string> a, int64_t batch) {
    for (auto& x : TrainerArgs(o.model, batch)) a.push_back(std::move(x));
    return a;
  };
  // TensorBoard events of the run's chief, a directory per run under
  // OUT/tensorboard, so that `tensorboard --logdir OUT/tensorboard` shows
  // the runs side by side.
  const std::string events = absl::StrCat(o.out, "/tensorboard/", run_name);
  // The loopback's count before any trainer starts: the fallback for a run
  // too short to sample after its chief's first steps (metrics.h).
  LoopbackSamples bytes;
  if (local) {
    std::vector<std::string> a = {"train", "--steps", absl::StrCat(o.steps),
                                  "--metrics-out", metrics_file("train"),
                                  "--logdir", events};
    if (spec.mode == "model-parallel") {
      a.insert(a.end(), {"--devices", "cpu:0,cpu:1", "--mode", "model-parallel"});
    }
    if (!spawn(&trainers, with_model(a, o.batch), "train", {})) return fail(r->error);
  } else {
    const bool in_graph = spec.mode == "in-graph";
    std::vector<TaskId> serve;
    for (int i = 0; i < spec.ps; ++i) serve.push_back({"ps", i});
    if (in_graph) {
      for (int i = 0; i < w; ++i) serve.push_back({"worker", i});
    }
    for (const TaskId& t : serve) {
      if (!spawn(&servers,
                 {"server", "--cluster", cspec, "--job", t.job, "--task",
                  absl::StrCat(t.index), "--no-local-socket"},
                 absl::StrCat(t.job, t.index), t)) {
        return fail(r->error);
      }
    }
    // The servers listen before the trainers start (bounded wait).
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    for (Child& c : servers) {
      while (!Accepts(c.address)) {
        if (!StillRunning(&c)) {
          return fail(absl::StrCat(c.task.ToString(), " ended (",
                                   ExitText(c.status), "): ", Tail(c.log, 600)));
        }
        if (absl::Now() > deadline) {
          return fail(absl::StrCat(c.task.ToString(), " at ", c.address,
                                   " did not listen within 60s; see ", c.log));
        }
        absl::SleepFor(absl::Milliseconds(50));
      }
    }
    bytes.at_launch = LoopbackBytes();
    if (in_graph) {
      std::vector<std::string> devices;
      for (int i = 0; i < w; ++i) devices.push_back(absl::StrCat("/job:worker/task:", i));
      std::vector<std::string> a = {
          "train", "--steps", absl::StrCat(o.steps), "--metrics-out",
          metrics_file("client"), "--target",
          absl::StrCat("grpc://", *cluster->Address({"worker", 0})),
          "--mode", "in-graph", "--devices", absl::StrJoin(devices, ","),
          "--param-device", "/job:ps/task:0", "--logdir", events};
      if (!spawn(&trainers, with_model(a, o.batch), "client", {})) {
        return fail(r->error);
      }
    } else {
      // Async counts every worker's update as a global step of B/W
      // examples: as many examples as the other modes' steps.
      const int64_t steps = spec.mode == "between-async" ? o.steps * w : o.steps;
      for (int i = w - 1; i >= 0; --i) {
        std::vector<std::string> a = {
            "train", "--mode", spec.mode, "--cluster", cspec, "--job",
            "worker", "--task", absl::StrCat(i), "--steps", absl::StrCat(steps),
            "--metrics-out", metrics_file(absl::StrCat("worker", i)),
            "--logdir", events,  // the chief writes them
            "--no-local-socket"};
        if (!spawn(&trainers, with_model(a, per_worker), absl::StrCat("worker", i),
                   {"worker", i})) {
          return fail(r->error);
        }
      }
      std::reverse(metrics.begin(), metrics.end());  // worker 0 first
      std::reverse(trainers.begin(), trainers.end());
    }
  }
  // Watch: poll the metrics, sample the loopback once the chief is past
  // its first step (its setup traffic is not a step's; that of a worker
  // joining later is counted), stop on Ctrl-C.
  const absl::Time give_up = absl::Now() + o.run_timeout;
  for (;;) {
    timespec tick{0, 100 * 1000 * 1000};
    siginfo_t info;
    const int sig = sigtimedwait(&blocked_, &info, &tick);
    if (sig == SIGINT || sig == SIGTERM) {
      fail("stopped");
      return absl::CancelledError("stopped by a signal");
    }
    bool all_done = true;
    for (Child& c : trainers) {
      if (StillRunning(&c)) {
        all_done = false;
      } else if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0) {
        return fail(absl::StrCat("a trainer (", c.log, ") ended with ",
                                 ExitText(c.status), ": ", Tail(c.log, 700)));
      }
    }
    for (Child& c : servers) {
      if (!StillRunning(&c)) {
        return fail(absl::StrCat(c.task.ToString(), " ended with ",
                                 ExitText(c.status), ": ", Tail(c.log, 600)));
      }
    }
    if (bytes.at_first < 0 && !all_done) {
      if (std::optional<int64_t> examples = ExamplesOnceStarted(metrics)) {
        bytes.at_first = LoopbackBytes();
        bytes.examples_at_first = *examples;
      }
    }
    if (all_done) break;
    if (absl::Now() > give_up) {
      return fail(absl::StrCat("the run took longer than --run-timeout-s (",
                               absl::FormatDuration(o.run_timeout), ")"));
    }
  }
  bytes.at_end = LoopbackBytes();
  StopAll(&servers);

  // The numbers: throughput over every trainer, the rest from the first
  // (the single process, the in-graph client, the chief).
  std::vector<std::vector<Metric>> all;
  for (const std::string& m : metrics) all.push_back(ReadMetrics(m));
  absl::StatusOr<RunNumbers> numbers =
      ComputeRunNumbers(spec.mode, w, o.batch, all, bytes);
  if (!numbers.ok()) {
    return fail(absl::StrCat(numbers.status().message(), " (", metrics.front(), ")"));
  }
  r->numbers = *std::move(numbers);
  r->ok = true;
  return result;
}

}  // namespace weft
