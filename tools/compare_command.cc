// weft compare: the same model, initial weights, data and global batch
// trained in every replication mode, on local clusters this command starts
// and stops itself, and a table, DIR/report.json and pictures of how the
// modes compare.
//
// Each run is a set of child `weft` processes (tools/local_processes.h):
//   single         weft train (one process, one device)
//   in-graph       weft server per task + one weft train --target client
//                  with a tower per worker task, variables on /job:ps/task:0
//   between-async  weft server per ps task + weft train --mode
//   between-sync   between-async|between-sync per worker
//   allreduce      weft train --mode allreduce per worker (no ps)
//   hybrid         weft train --mode hybrid per worker: allreduce, each
//                  worker's layers over 2 CPU devices of its own
// Every trainer writes --metrics-out lines, which are what the numbers come
// from. Every task serves TCP alone (--no-local-socket), so that its bytes
// cross the loopback, where they are counted and shaped. Where Linux allows
// it, every run gets a private network namespace of its own
// (unshare(CLONE_NEWNET); its loopback brought up here), so the
// bytes its loopback carried are exactly the run's and --link-rate can
// shape them with tc; elsewhere the runs share the machine's loopback and
// the byte counts include whatever else it carried (the report says so).
//
// Ctrl-C (or SIGTERM) stops the running children and ends the command; the
// children also get SIGTERM if this process dies.
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/compare_plots_py.h"
#include "tools/compare/projection.h"
#include "tools/compare/projection_report.h"
#include "tools/json_text.h"
#include "tools/local_processes.h"
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

struct RunSpec {
  std::string mode;
  int workers = 1;
  int ps = 0;
};

struct Metric {
  int64_t step = 0;
  double wall_s = 0, step_s = 0, loss = 0, accuracy = 0;
  int64_t examples = 0;
  bool has_accuracy = false;
};

struct RunResult {
  RunSpec spec;
  bool ok = false;
  std::string error;
  std::string log_dir;
  double examples_per_s = 0, step_p50_ms = 0, step_p99_ms = 0;
  double bytes_per_step = -1;  // -1: not measured
  double final_loss = 0, final_accuracy = 0;
  bool has_accuracy = false;
  std::vector<std::pair<double, double>> curve;  // (wall s, smoothed loss)
  std::vector<std::pair<double, int64_t>> curve_steps;  // (wall, batches)
  double time_to_target = -1;
  int64_t steps_to_target = -1;
};

std::vector<Metric> ReadMetrics(const std::string& path) {
  std::vector<Metric> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    // A line being written may be cut; json::parse without exceptions.
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    Metric m;
    m.step = j.value("step", int64_t{0});
    m.wall_s = j.value("wall_s", 0.0);
    m.step_s = j.value("step_s", 0.0);
    m.loss = j.value("loss", 0.0);
    m.has_accuracy = j.contains("accuracy");
    m.accuracy = j.value("accuracy", 0.0);
    m.examples = j.value("examples", int64_t{0});
    out.push_back(m);
  }
  return out;
}

// Bytes the loopback interface has sent, in this process's network
// namespace; -1 if /proc/net/dev has no "lo".
int64_t LoopbackBytes() {
  std::ifstream in("/proc/self/net/dev");
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view v = line;
    const size_t colon = v.find(':');
    if (colon == absl::string_view::npos) continue;
    std::string name(absl::StripAsciiWhitespace(v.substr(0, colon)));
    if (name != "lo") continue;
    std::vector<std::string> f = absl::StrSplit(
        std::string(v.substr(colon + 1)), ' ', absl::SkipEmpty());
    int64_t tx = 0;
    // receive: bytes packets errs drop fifo frame compressed multicast;
    // then transmit bytes.
    if (f.size() > 8 && absl::SimpleAtoi(f[8], &tx)) return tx;
  }
  return -1;
}

// A fresh network namespace for this (single-threaded) process and the
// children it starts next, its loopback up and, with a rate, shaped. False
// when namespaces are not allowed here (*note says why; the process is
// back in the namespace it started in). *note also says when the rate could
// not be applied.
bool EnterPrivateNetwork(const std::string& link_rate, std::string* note) {
  static const int original = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (original < 0 || unshare(CLONE_NEWNET) != 0) {
    *note = absl::StrCat("no private network namespace (",
                         std::strerror(errno), ")");
    return false;
  }
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  bool up = fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0;
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  up = up && ioctl(fd, SIOCSIFFLAGS, &ifr) == 0;
  const int err = errno;
  if (fd >= 0) close(fd);
  if (!up) {
    setns(original, CLONE_NEWNET);
    *note = absl::StrCat("no private network namespace (cannot bring up its "
                         "loopback: ", std::strerror(err), ")");
    return false;
  }
  if (link_rate.empty()) {
    *note = "private loopback per run";
  } else if (std::system(absl::StrCat("tc qdisc add dev lo root tbf rate ",
                                      link_rate,
                                      " burst 256kb latency 100ms "
                                      ">/dev/null 2>&1")
                             .c_str()) == 0) {
    *note = absl::StrCat("private loopback per run, shaped to ", link_rate);
  } else {
    *note = absl::StrCat("private loopback per run, NOT shaped to ", link_rate,
                         ": tc failed (is it installed, and is ", link_rate,
                         " a tc rate?)");
  }
  return true;
}

bool Accepts(const std::string& address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port)) {
    return false;
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr);
  const bool ok =
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1,
                            static_cast<size_t>(p * (v.size() - 1) + 0.5));
  return v[i];
}

struct Flags {
  std::string model, data, optimizer, lr, hidden, seed, link_rate, out;
  // --graph FILE --loss T: the user's model (absolute paths), not --model.
  std::string graph, loss, init, train_op;
  std::vector<std::string> inputs;  // "NAME=FILE" with FILE absolute
  int64_t steps = 200, batch = 64;
  std::vector<std::string> modes;
  std::vector<int> workers, ps, project;
  // With --project: the projected link as stated, and parsed.
  std::string project_link_text, project_latency_text;
  ProjectedLink project_link;
  double link_bytes_per_s = 0;  // --link-rate's (0: unshaped)
  std::optional<double> target_loss;
  absl::Duration run_timeout;
};

class Comparison {
 public:
  Comparison(const Flags& f, const sigset_t& blocked)
      : f_(f), blocked_(blocked) {}

  // Runs one configuration; false when the user asked to stop.
  bool Run(const RunSpec& spec, RunResult* r);
  bool private_network() const { return private_network_; }
  const std::string& network_note() const { return network_note_; }

 private:
  std::vector<std::string> ModelArgs(int64_t batch) const {
    std::vector<std::string> a = {"--batch", absl::StrCat(batch)};
    if (f_.graph.empty()) {
      for (const std::string& x : {std::string("--model"), f_.model,
                                   std::string("--data"), f_.data}) {
        a.push_back(x);
      }
    } else {
      for (const std::string& x : {std::string("--graph"), f_.graph,
                                   std::string("--loss"), f_.loss}) {
        a.push_back(x);
      }
      if (!f_.init.empty()) a.insert(a.end(), {"--init", f_.init});
      if (!f_.train_op.empty()) a.insert(a.end(), {"--train-op", f_.train_op});
      for (const std::string& in : f_.inputs) a.insert(a.end(), {"--input", in});
    }
    for (const auto& [flag, value] :
         {std::pair<const char*, const std::string&>{"--optimizer", f_.optimizer},
          {"--lr", f_.lr}, {"--hidden", f_.hidden}, {"--seed", f_.seed}}) {
      if (!value.empty()) {
        a.push_back(flag);
        a.push_back(value);
      }
    }
    return a;
  }

  const Flags& f_;
  const sigset_t& blocked_;
  bool private_network_ = false;
  std::string network_note_;
};

bool Comparison::Run(const RunSpec& spec, RunResult* r) {
  r->spec = spec;
  r->log_dir = absl::StrCat(f_.out, "/", spec.mode, "-", spec.workers, "w-",
                            spec.ps, "ps");
  mkdir(r->log_dir.c_str(), 0755);
  std::string why;
  private_network_ = EnterPrivateNetwork(f_.link_rate, &why);
  network_note_ = private_network_
                      ? why
                      : absl::StrCat("shared loopback, ", why,
                                     ": bytes include other traffic",
                                     f_.link_rate.empty()
                                         ? ""
                                         : "; --link-rate skipped");
  std::vector<Child> servers, trainers;
  std::vector<std::string> metrics;
  auto fail = [&](const std::string& e) {
    r->error = e;
    StopAll(&trainers);
    StopAll(&servers);
    return true;
  };
  const bool local = spec.mode == "single" || spec.mode == "model-parallel";
  const int w = spec.workers;
  const int64_t per_worker = f_.batch / w;
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
  // TensorBoard events of the run's chief, a directory per run under
  // OUT/tensorboard, so that `tensorboard --logdir OUT/tensorboard` shows
  // the runs side by side.
  const std::string events = absl::StrCat(
      f_.out, "/tensorboard/", r->log_dir.substr(r->log_dir.rfind('/') + 1));
  // The loopback's count before any trainer starts: the fallback for a run
  // too short to sample after its chief's first steps (see below).
  int64_t bytes_launch = -1;
  if (local) {
    std::vector<std::string> a = {"train", "--steps", absl::StrCat(f_.steps),
                                  "--metrics-out", metrics_file("train"),
                                  "--logdir", events};
    if (spec.mode == "model-parallel") {
      for (const char* x : {"--devices", "cpu:0,cpu:1", "--mode", "model-parallel"}) {
        a.push_back(x);
      }
    }
    for (auto& x : ModelArgs(f_.batch)) a.push_back(x);
    if (!spawn(&trainers, a, "train", {})) return fail(r->error);
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
    bytes_launch = LoopbackBytes();
    if (in_graph) {
      std::vector<std::string> devices;
      for (int i = 0; i < w; ++i) devices.push_back(absl::StrCat("/job:worker/task:", i));
      std::vector<std::string> a = {
          "train", "--steps", absl::StrCat(f_.steps), "--metrics-out",
          metrics_file("client"), "--target",
          absl::StrCat("grpc://", *cluster->Address({"worker", 0})),
          "--mode", "in-graph", "--devices", absl::StrJoin(devices, ","),
          "--param-device", "/job:ps/task:0", "--logdir", events};
      for (auto& x : ModelArgs(f_.batch)) a.push_back(x);
      if (!spawn(&trainers, a, "client", {})) return fail(r->error);
    } else {
      // Async counts every worker's update as a global step of B/W
      // examples: as many examples as the other modes' steps.
      const int64_t steps =
          spec.mode == "between-async" ? f_.steps * w : f_.steps;
      for (int i = w - 1; i >= 0; --i) {
        std::vector<std::string> a = {
            "train", "--mode", spec.mode, "--cluster", cspec, "--job",
            "worker", "--task", absl::StrCat(i), "--steps", absl::StrCat(steps),
            "--metrics-out", metrics_file(absl::StrCat("worker", i)),
            "--logdir", events,  // the chief writes them
            "--no-local-socket"};
        for (auto& x : ModelArgs(per_worker)) a.push_back(x);
        if (!spawn(&trainers, a, absl::StrCat("worker", i), {"worker", i})) {
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
  const absl::Time give_up = absl::Now() + f_.run_timeout;
  int64_t bytes0 = -1, examples0 = 0;
  for (;;) {
    timespec tick{0, 100 * 1000 * 1000};
    siginfo_t info;
    const int sig = sigtimedwait(&blocked_, &info, &tick);
    if (sig == SIGINT || sig == SIGTERM) {
      fail("stopped");
      return false;
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
    if (bytes0 < 0 && !all_done) {
      int64_t examples = 0;
      bool started = true;
      for (size_t i = 0; i < metrics.size(); ++i) {
        std::vector<Metric> v = ReadMetrics(metrics[i]);
        if (i == 0 && v.size() < 2) started = false;
        if (!v.empty()) examples += v.back().examples;
      }
      if (started) {
        bytes0 = LoopbackBytes();
        examples0 = examples;
      }
    }
    if (all_done) break;
    if (absl::Now() > give_up) {
      return fail(absl::StrCat("the run took longer than --run-timeout-s (",
                               absl::FormatDuration(f_.run_timeout), ")"));
    }
  }
  const int64_t bytes1 = LoopbackBytes();
  StopAll(&servers);

  // The numbers: throughput over every trainer, the rest from the first
  // (the single process, the in-graph client, the chief).
  std::vector<std::vector<Metric>> all;
  for (const std::string& m : metrics) all.push_back(ReadMetrics(m));
  int64_t examples1 = 0;
  // A worker of an async run may find the job done after a step or none.
  if (all.front().size() < 2) {
    return fail(absl::StrCat("the chief wrote fewer than 2 steps of metrics (",
                             metrics.front(), ")"));
  }
  for (const auto& v : all) {
    if (v.empty()) continue;
    const double span = v.back().wall_s - v.front().wall_s;
    if (span > 0) r->examples_per_s += (v.back().examples - v.front().examples) / span;
    examples1 += v.back().examples;
  }
  const std::vector<Metric>& chief = all.front();
  // The loss of a step is the global batch's: with sync and allreduce every
  // worker's step k runs on the same weights, and the mean of their losses
  // on equal slices is the whole batch's (async workers' steps are their
  // own, so each worker's line is a loss of its own).
  std::vector<Metric> global = chief;
  if (spec.mode == "between-sync" || spec.mode == "allreduce" || spec.mode == "hybrid") {
    size_t n = global.size();
    for (const auto& v : all) n = std::min(n, v.size());
    global.resize(std::max<size_t>(n, 1));
    for (size_t i = 0; i < n; ++i) {
      double loss = 0, accuracy = 0;
      for (const auto& v : all) {
        loss += v[i].loss / all.size();
        accuracy += v[i].accuracy / all.size();
      }
      global[i].loss = loss;
      global[i].accuracy = accuracy;
    }
  }
  std::vector<double> step_ms;
  for (size_t i = 1; i < chief.size(); ++i) step_ms.push_back(chief[i].step_s * 1e3);
  r->step_p50_ms = Percentile(step_ms, 0.5);
  r->step_p99_ms = Percentile(step_ms, 0.99);
  // A run that ended between two samples (a few fast ring steps) is
  // counted whole: its start-up traffic (the variables' first broadcast or
  // pull) is included, small against its steps'.
  if (bytes0 < 0 && bytes_launch >= 0) {
    bytes0 = bytes_launch;
    examples0 = 0;
  }
  const double batches = static_cast<double>(examples1 - examples0) / f_.batch;
  if (local) {
    r->bytes_per_step = 0;  // one process: nothing crosses a network
  } else if (bytes0 >= 0 && bytes1 >= bytes0 && batches > 0) {
    r->bytes_per_step = (bytes1 - bytes0) / batches;
  }
  const size_t tail = std::min<size_t>(10, global.size());
  for (size_t i = global.size() - tail; i < global.size(); ++i) {
    r->final_loss += global[i].loss / tail;
    r->final_accuracy += global[i].accuracy / tail;
  }
  r->has_accuracy = chief.back().has_accuracy;
  // The loss curve, smoothed over 10 steps; its position in global
  // batches from the chief's global step (async: one per worker update of
  // B/W).
  double sum = 0;
  for (size_t i = 0; i < global.size(); ++i) {
    sum += global[i].loss;
    if (i >= 10) sum -= global[i - 10].loss;
    const double mean = sum / std::min<size_t>(i + 1, 10);
    r->curve.emplace_back(global[i].wall_s, mean);
    r->curve_steps.emplace_back(
        global[i].wall_s,
        spec.mode == "between-async" ? global[i].step / w : global[i].step);
  }
  r->ok = true;
  return true;
}

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

std::string Machine() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  return absl::StrCat(model, ", ", sysconf(_SC_NPROCESSORS_ONLN), " cores");
}

std::string Bytes(double b) {
  if (b < 0) return "?";
  if (b < 1024) return absl::StrFormat("%.0f B", b);
  if (b < 1024 * 1024) return absl::StrFormat("%.1f KiB", b / 1024);
  return absl::StrFormat("%.2f MiB", b / (1024 * 1024));
}

// --project: the cost model (tools/compare/projection.h) fitted to the
// runs, its check against them and its projection, printed and returned
// for the report; null without --project.
nlohmann::json Projections(const Flags& f, const std::vector<RunResult>& results) {
  if (f.project.empty()) return nullptr;
  std::vector<MeasuredRun> runs;
  int most_workers = 1;
  for (const RunResult& r : results) {
    if (!r.ok) continue;
    runs.push_back({r.spec.mode, r.spec.workers, r.spec.ps, r.examples_per_s,
                    r.bytes_per_step});
    if (r.spec.mode != "single" && r.spec.mode != "model-parallel") {
      most_workers = std::max(most_workers, r.spec.workers);
    }
  }
  MeasuredSetting setting;
  setting.global_batch = static_cast<double>(f.batch);
  setting.cores = static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN));
  setting.link_bytes_per_s = f.link_bytes_per_s;
  ProjectionRequest request;
  request.workers = f.project;
  request.per_worker_batch = static_cast<double>(f.batch) / most_workers;
  request.link = f.project_link;
  request.link_text = f.project_link_text;
  request.latency_text = f.project_latency_text;
  ProjectionReport report = BuildProjectionReport(runs, setting, request);
  std::fputs(report.text.c_str(), stdout);
  return report.json;
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
    f.graph = absolute(cl.Get("graph"));
    f.loss = cl.Get("loss");
    f.init = cl.Get("init", "");
    f.train_op = cl.Get("train-op", "");
    std::map<std::string, std::string> inputs;
    for (const std::string& in : cl.GetAll("input")) {
      if (absl::Status s = ParseInputFlag(in, &inputs); !s.ok()) {
        return ReportUsage(s, kUsage);
      }
    }
    for (const auto& [name, file] : inputs) {
      f.inputs.push_back(absl::StrCat(name, "=", absolute(file)));
    }
    f.model = cl.Get("graph");
  } else {
    if (cl.Has("loss") || cl.Has("init") || cl.Has("input") || cl.Has("train-op")) {
      return usage("--loss, --init, --input and --train-op go with --graph");
    }
    f.model = cl.Get("model");
    if (f.model != "mlp" && f.model != "cnn" && f.model != "transformer") {
      return usage(absl::StrCat("unknown model '", f.model, "' (mlp, cnn or transformer)"));
    }
  }
  f.data = cl.Get("data", "synthetic");
  f.optimizer = cl.Get("optimizer", "");
  f.lr = cl.Get("lr", "");
  f.hidden = cl.Get("hidden", "");
  f.seed = cl.Get("seed", "");
  f.link_rate = cl.Get("link-rate", "");
  if (f.link_rate.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.") !=
      std::string::npos) {
    return usage(absl::StrCat("--link-rate takes a tc rate such as 1gbit, not '",
                              f.link_rate, "'"));
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
  f.steps = *steps;
  f.batch = *batch;
  f.run_timeout = absl::Seconds(*timeout);
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
  // user's graph is split by cost, but not yet in hybrid.
  std::vector<std::string> defaults = known;
  const bool own_graph = !f.graph.empty();
  for (const char* split : {"model-parallel", "hybrid"}) {
    const bool hybrid = std::string(split) == "hybrid";
    if (f.model == "transformer" || (own_graph && hybrid)) {
      defaults.erase(std::find(defaults.begin(), defaults.end(), split));
    }
  }
  if (!f.train_op.empty()) {
    // A graph that trains itself: Weft has no gradients to average or split.
    defaults = {"single", "between-async"};
  }
  f.modes = absl::StrSplit(cl.Get("modes", absl::StrJoin(defaults, ",")), ',');
  for (const std::string& m : f.modes) {
    if (std::find(known.begin(), known.end(), m) == known.end()) {
      return usage(absl::StrCat("unknown mode '", m, "' in --modes (",
                                absl::StrJoin(known, ", "), ")"));
    }
    if ((m == "model-parallel" || m == "hybrid") && f.model == "transformer") {
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
    f.project_link_text = cl.Get("project-link", f.link_rate);
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
          std::pair{&f.link_rate, &f.link_bytes_per_s}}) {
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
    if (f.batch % w != 0) {
      return usage(absl::StrCat("--batch ", f.batch, " must divide among ", w,
                                " workers"));
    }
  }
  f.out = cl.Get("out", "");
  if (f.out.empty()) {
    char tmpl[] = "/tmp/weft-compare-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      return ReportError(absl::FailedPreconditionError(
          absl::StrCat("cannot make an output directory: ", std::strerror(errno))));
    }
    f.out = tmpl;
  } else if (mkdir(f.out.c_str(), 0755) != 0 && errno != EEXIST) {
    return ReportError(absl::FailedPreconditionError(absl::StrCat(
        "cannot make --out ", f.out, ": ", std::strerror(errno))));
  }
  mkdir((f.out + "/tensorboard").c_str(), 0755);  // every run's events

  std::vector<RunSpec> plan;
  for (const std::string& m : f.modes) {
    if (m == "single" || m == "model-parallel") {
      plan.push_back({m, 1, 0});
    } else if (m == "in-graph") {
      for (int w : f.workers) plan.push_back({m, w, 1});
    } else if (m == "allreduce" || m == "hybrid") {
      for (int w : f.workers) plan.push_back({m, w, 0});
    } else {
      for (int w : f.workers) {
        for (int p : f.ps) plan.push_back({m, w, p});
      }
    }
  }
  std::printf("weft compare: %s, global batch %lld, %lld steps, %zu runs; "
              "logs and report in %s\n",
              f.model.c_str(), static_cast<long long>(f.batch),
              static_cast<long long>(f.steps), plan.size(), f.out.c_str());
  std::fflush(stdout);
  Comparison comparison(f, blocked);
  std::vector<RunResult> results;
  for (const RunSpec& spec : plan) {
    std::printf("  %-14s %d worker(s), %d ps ... ", spec.mode.c_str(),
                spec.workers, spec.ps);
    std::fflush(stdout);
    RunResult r;
    const absl::Time t0 = absl::Now();
    if (!comparison.Run(spec, &r)) {
      std::printf("stopped\nweft compare: stopped by a signal; the runs' "
                  "processes are stopped\n");
      return 130;
    }
    if (r.ok) {
      std::printf("%.0f examples/s, final loss %.4f (%.1fs)\n", r.examples_per_s,
                  r.final_loss, absl::ToDoubleSeconds(absl::Now() - t0));
    } else {
      std::printf("failed: %s\n", r.error.c_str());
    }
    std::fflush(stdout);
    results.push_back(std::move(r));
  }

  // The target loss every run can be measured against.
  double target = f.target_loss.value_or(0);
  if (!f.target_loss) {
    for (const RunResult& r : results) {
      if (r.ok) target = std::max(target, r.final_loss);
    }
  }
  for (RunResult& r : results) {
    for (size_t i = 0; r.ok && i < r.curve.size(); ++i) {
      if (r.curve[i].second <= target) {
        r.time_to_target = r.curve[i].first;
        r.steps_to_target = r.curve_steps[i].second;
        break;
      }
    }
  }

  std::printf("\n%-14s %7s %3s %11s %8s %8s %11s %8s %7s %14s\n", "mode",
              "workers", "ps", "examples/s", "p50 ms", "p99 ms", "bytes/step",
              "loss", "acc", "to target");
  bool any_failed = false;
  for (const RunResult& r : results) {
    if (!r.ok) {
      any_failed = true;
      std::printf("%-14s %7d %3d  failed (see %s)\n", r.spec.mode.c_str(),
                  r.spec.workers, r.spec.ps, r.log_dir.c_str());
      continue;
    }
    std::printf("%-14s %7d %3d %11.0f %8.2f %8.2f %11s %8.4f %7s %14s\n",
                r.spec.mode.c_str(), r.spec.workers, r.spec.ps, r.examples_per_s,
                r.step_p50_ms, r.step_p99_ms, Bytes(r.bytes_per_step).c_str(),
                r.final_loss,
                r.has_accuracy ? absl::StrFormat("%.3f", r.final_accuracy).c_str()
                               : "-",
                r.time_to_target >= 0
                    ? absl::StrFormat("%.1fs/%lld", r.time_to_target,
                                      static_cast<long long>(r.steps_to_target))
                          .c_str()
                    : "not reached");
  }
  std::printf(
      "(a step is one global batch of %lld examples; loss and accuracy are "
      "means over the last 10 steps of the global batch's (sync, allreduce: "
      "the mean of the workers') or, async, the chief's; target loss "
      "%.4f%s; network: %s; "
      "%s)\n",
      static_cast<long long>(f.batch), target,
      f.target_loss ? "" : " (the highest final loss)",
      comparison.network_note().c_str(), Machine().c_str());

  nlohmann::json projection = Projections(f, results);

  nlohmann::json report;
  report["model"] = f.model;
  report["batch"] = f.batch;
  report["steps"] = f.steps;
  report["data"] = f.data;
  report["machine"] = Machine();
  report["network"] = comparison.network_note();
  report["link_rate"] = f.link_rate;
  report["target_loss"] = target;
  report["tensorboard"] = f.out + "/tensorboard";
  // The runs' figures are measured; those under "projection" (with
  // --project) come from the cost model and say so.
  report["measured"] = f.project.empty();
  if (!f.project.empty()) report["projection"] = projection;
  report["runs"] = nlohmann::json::array();
  for (const RunResult& r : results) {
    nlohmann::json j;
    j["mode"] = r.spec.mode;
    j["workers"] = r.spec.workers;
    j["ps"] = r.spec.ps;
    j["ok"] = r.ok;
    j["measured"] = true;
    j["logs"] = r.log_dir;
    if (!r.ok) {
      j["error"] = r.error;
    } else {
      j["examples_per_s"] = r.examples_per_s;
      j["step_p50_ms"] = r.step_p50_ms;
      j["step_p99_ms"] = r.step_p99_ms;
      if (r.bytes_per_step >= 0) j["bytes_per_step"] = r.bytes_per_step;
      j["final_loss"] = r.final_loss;
      if (r.has_accuracy) j["final_accuracy"] = r.final_accuracy;
      if (r.time_to_target >= 0) {
        j["time_to_target_s"] = r.time_to_target;
        j["steps_to_target"] = r.steps_to_target;
      }
      nlohmann::json curve = nlohmann::json::array();
      for (const auto& [t, l] : r.curve) curve.push_back({t, l});
      j["curve"] = curve;
    }
    report["runs"].push_back(j);
  }
  const std::string report_path = f.out + "/report.json";
  {
    std::ofstream out(report_path);
    out << JsonText(report) << "\n";
    if (!out) {
      return ReportError(absl::FailedPreconditionError(
          absl::StrCat("cannot write ", report_path)));
    }
  }
  // The pictures, by matplotlib (embedded tools/compare_plots.py).
  const std::string script = f.out + "/.compare_plots.py";
  std::ofstream(script) << kComparePlotsPy;
  const std::string cmd = absl::StrCat(
      "python3 '", script, "' '", report_path, "' '", f.out, "' 2>'", f.out,
      "/plots.log'");
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, nullptr);  // system() waits for SIGCHLD
  if (std::system(cmd.c_str()) == 0) {
    std::printf("weft compare: report %s, pictures %s/loss_vs_time.png and "
                "%s/throughput_vs_workers.png\n",
                report_path.c_str(), f.out.c_str(), f.out.c_str());
  } else {
    std::printf("weft compare: report %s; no pictures: python3 with "
                "matplotlib did not run (pip install matplotlib; see %s/plots.log)\n",
                report_path.c_str(), f.out.c_str());
  }
  std::remove(script.c_str());
  std::printf("weft compare: TensorBoard shows the runs side by side: "
              "tensorboard --logdir %s/tensorboard\n", f.out.c_str());
  return any_failed ? kExitError : kExitOk;
}

}  // namespace weft
