// weft train: train a model locally, from a GraphDef written by `weft
// graphgen` or built on the spot, with a live progress line and a summary.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "graph/models/datasets.h"
#include "runtime/gpu/gpu_devices.h"
#include "runtime/core/local_device_mgr.h"
#include "runtime/session.h"
#include "runtime/core/status.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/graph_file.h"
#include "distributed/rpc/grpc_session.h"
#include "distributed/training/trainer.h"
#include "tools/cluster_flags.h"
#include "tools/local_devices.h"
#include "tools/model_flags.h"
#include "runtime/events/event_writer.h"
#include "tools/step_feeds.h"
#include "tools/train_common.h"

namespace weft {
namespace {

std::string Usage() {
  return absl::StrCat(
      "usage: weft train --graph FILE [--steps N] [--data synthetic|digits]\n"
      "       weft train --graph FILE --loss T [--input NAME=FILE.npy ...]\n"
      "                  [--batch B] [--optimizer O] [--lr X] ...\n"
      "       weft train --model mlp|cnn|transformer [--steps N] [--data D]\n"
      "                  [--batch B] [--optimizer O] [--lr X] ...\n"
      "\n"
      "  --graph FILE     a training graph from 'weft graphgen' (nodes images,\n"
      "                   labels, loss, train_op, init; accuracy optional), or\n"
      "                   with --loss a forward graph of your own model\n"
      "                   (tools/export_keras_graph.py writes one from Keras)\n"
      "  --loss T         the forward graph's loss tensor: Weft adds the\n"
      "                   gradients and the --optimizer's updates of every\n"
      "                   floating variable the loss reads and the graph does\n"
      "                   not assign itself; --mode single, in-graph (--devices,\n"
      "                   --param-device), model-parallel (--devices: split by\n"
      "                   estimated cost), between-async, between-sync or\n"
      "                   allreduce\n"
      "  --init NODE      the forward graph's initializer (default: init)\n"
      "  --train-op NODE  the graph trains itself (a traced train step with its\n"
      "                   optimizer, tools/export_keras_graph.py --train-step):\n"
      "                   NODE runs one step; --mode single or between-async\n"
      "  --input NAME=FILE.npy  a placeholder's examples (first axis); inputs\n"
      "                   without one get seeded synthetic values. Step k of\n"
      "                   W workers trains on examples [k*B*W, (k+1)*B*W),\n"
      "                   worker w on the w-th slice of --batch B\n"
      "  --batch B        with --loss: examples per step and worker where the\n"
      "                   placeholders leave the batch open\n"
      "  --max-input-bytes N  refuse a --graph larger than N bytes (default 1 GiB)\n"
      "  --memory-limit N refuse, naming the node, a step whose tensors would\n"
      "                   hold more than N bytes (sizes take K, M, G or T)\n"
      "  --steps N        training steps (default 100)\n"
      "  --data D         synthetic (default; seeded, learnable) or digits\n"
      "                   (scikit-learn's 8x8 digits, exported by tools/setup.sh)\n"
      "  --data-seed S    seed of the synthetic data and the shuffling (default 1)\n"
      "  --logdir DIR     write TensorBoard event files there (loss, accuracy,\n"
      "                   examples_per_sec per step; between-graph: the chief)\n"
      "  --metrics-out FILE  one JSON line per step (step, wall_s, step_s,\n"
      "                   loss, accuracy, examples): what 'weft compare' reads\n"
      "  --log-every K    progress every K steps when stdout is not a terminal\n"
      "                   (default: about ten lines per run)\n"
      "  --cpu-devices N  CPU devices of the session (default: as many as the\n"
      "                   graph's device requests need, at least 1)\n"
      "  --target grpc://HOST:PORT  train on a cluster through that task's\n"
      "                   master; --devices and --param-device may then name\n"
      "                   tasks (/job:worker/task:0, /job:ps/task:0)\n"
      "  --mode between-async --cluster SPEC --job worker --task I (or\n"
      "                   TF_CONFIG): between-graph replication; this process\n"
      "                   serves worker task I and trains its own copy of the\n"
      "                   model on its shard of the data, variables on the ps\n"
      "                   tasks ('weft server --job ps'); worker 0 initialises\n"
      "                   them; --steps counts the shared global step\n"
      "  --mode between-sync ...: the same, with the gradients of every step\n"
      "                   aggregated on the ps (TensorFlow's\n"
      "                   SyncReplicasOptimizer) and applied once by the chief\n"
      "  --mode allreduce ...: no ps; every worker holds the whole model and\n"
      "                   the workers average their gradients each step with\n"
      "                   a ring all-reduce over the worker service; they\n"
      "                   start from the chief's variables (sent round the\n"
      "                   ring), which with --checkpoint-dir it restores\n"
      "  --mode hybrid ...: allreduce, each worker's layers split over its own\n"
      "                   --devices (default cpu:0,cpu:1) as model-parallel\n"
      "  --replicas-to-aggregate N  between-sync: the first N gradients of a\n"
      "                   step win (default: every worker's); the other\n"
      "                   workers are backups, so one of them may die\n"
      "  --step-timeout-s N  a step that takes longer fails, naming the tasks\n"
      "                   that do not answer (default 60)\n"
      "  --ps-strategy S  round-robin (default) or greedy-bytes: how variables\n"
      "                   spread over the ps tasks\n"
      "  --wait-for-chief-s N  how long a worker waits for the chief to\n"
      "                   initialise the variables (default 120)\n"
      "  --wait-for-tasks-s N  how long to wait for the ps tasks (default 120)\n"
      "  --no-local-socket  this task's server serves TCP alone (see weft\n"
      "                   server --help)\n"
      "  --checkpoint-dir DIR  the chief saves TensorFlow V2 checkpoints there\n"
      "                   (DIR/model-STEP, DIR/checkpoint) at the end and, with\n"
      "                   --checkpoint-every N, every N global steps; a new\n"
      "                   cluster resumes from the newest, and between-async\n"
      "                   workers wait for a ps that restarts and go on\n"
      "                   from it. The ps tasks need it under their\n"
      "                   --file-root (their SaveV2 writes the shards)\n"
      "  --no-check-numerics  train on when a step's loss is nan or inf\n"
      "                   (default: stop, naming the variables that hold\n"
      "                   non-finite values)\n",
      kSecurityFlagsUsage,
      "with --model, the model flags of 'weft graphgen':\n",
      kModelFlagsUsage);
}

struct Options {
  int64_t steps = 100;
  std::string data = "synthetic";
  uint64_t data_seed = 1;
  int64_t log_every = 0;
  int cpu_devices = 0;  // 0: CpuDevicesRequested(graph)
  int64_t memory_limit = 0;  // bytes; 0: no limit
  std::string target;  // host:port of a cluster's master; empty: local
  std::string logdir;  // TensorBoard events there; empty: none
  std::string metrics_out;  // MetricsLog there; empty: none
  std::shared_ptr<const Security> security = Security::None();
};

int Train(const tensorflow::GraphDef& graph, const std::string& source,
          const Options& o, StepFeeds& feeds) {
  bool has_accuracy = false;
  for (const tensorflow::NodeDef& n : graph.node()) has_accuracy |= n.name() == "accuracy";
  const int64_t batch = feeds.batch();
  const int cpus = o.cpu_devices > 0 ? o.cpu_devices : CpuDevicesRequested(graph);
  if (o.target.empty()) {
    if (absl::Status s = CheckCpuRequests(graph, cpus); !s.ok()) {
      return ReportError(s);
    }
  }
  SessionOptions session_options;
  session_options.memory_limit_bytes = o.memory_limit;
  (*session_options.config.mutable_device_count())["CPU"] = cpus;
  // As `weft run`: a node without a kernel on its requested device type
  // falls back to one that has it (CPU ids were checked above).
  session_options.config.set_allow_soft_placement(true);
  std::unique_ptr<Session> session =
      o.target.empty() ? NewLocalSession(session_options)
                       : NewGrpcSession(o.target, session_options, o.security);
  if (absl::Status s = session->Create(graph); !s.ok()) return ReportError(s);
  std::vector<Tensor> out;
  if (absl::Status s = session->Run({}, {}, {"init"}, &out); !s.ok()) {
    return ReportError(WithMemoryLimitFlag(WithContext(s, "running 'init'"), o.memory_limit));
  }
  const std::string where =
      o.target.empty()
          ? absl::StrCat(cpus, " CPU device", cpus == 1 ? "" : "s")
          : absl::StrCat("the cluster at grpc://", o.target);
  std::printf("training %s on %s, batch %lld, %lld steps, %s\n", source.c_str(),
              feeds.Describe().c_str(), static_cast<long long>(batch),
              static_cast<long long>(o.steps), where.c_str());
  // GPU requests fall back to the CPU where no GPU is usable: say which.
  if (RequestsGpu(graph)) std::printf("%s\n", GpuAvailability().c_str());
  std::vector<std::string> fetches = {"loss"};
  if (has_accuracy) fetches.push_back("accuracy");
  Progress progress(o.steps,
                    o.log_every > 0 ? o.log_every : std::max<int64_t>(1, o.steps / 10));
  std::vector<double> losses, accuracies;
  std::unique_ptr<EventWriter> events;
  if (!o.logdir.empty()) {
    absl::StatusOr<std::unique_ptr<EventWriter>> w = EventWriter::Create(o.logdir);
    if (!w.ok()) return ReportError(w.status());
    events = *std::move(w);
    std::printf("TensorBoard events: %s\n", events->path().c_str());
  }
  std::unique_ptr<MetricsLog> metrics;
  if (!o.metrics_out.empty()) {
    absl::StatusOr<std::unique_ptr<MetricsLog>> m = MetricsLog::Create(o.metrics_out);
    if (!m.ok()) return ReportError(m.status());
    metrics = *std::move(m);
  }
  // Throughput counts from the end of the first step, which also places,
  // partitions and prepares the graph (tens of milliseconds).
  const absl::Time start = absl::Now();
  absl::Time steady_start = start;
  auto examples_per_s = [&](int64_t step) {
    const int64_t timed_steps = step > 1 ? step - 1 : 1;
    const double secs = absl::ToDoubleSeconds(absl::Now() - steady_start);
    return secs > 0 ? timed_steps * batch / secs : 0.0;
  };
  for (int64_t step = 1; step <= o.steps; ++step) {
    absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> next = feeds.Next();
    if (!next.ok()) return ReportError(next.status());
    const absl::Time step_start = absl::Now();
    absl::Status s = session->Run(*next, fetches, {"train_op"}, &out);
    if (!s.ok()) {
      return ReportError(
          WithMemoryLimitFlag(WithContext(s, absl::StrCat("step ", step)), o.memory_limit));
    }
    absl::StatusOr<double> loss = ScalarMetric(out[0], "loss");
    if (!loss.ok()) return ReportError(loss.status());
    absl::StatusOr<double> accuracy =
        has_accuracy ? ScalarMetric(out[1], "accuracy") : 0.0;
    if (!accuracy.ok()) return ReportError(accuracy.status());
    losses.push_back(*loss);
    accuracies.push_back(*accuracy);
    progress.Step(step, losses.back(), accuracies.back(), has_accuracy,
                  examples_per_s(step));
    if (metrics != nullptr) {
      const absl::Time now = absl::Now();
      metrics->Write(step, absl::ToDoubleSeconds(now - start),
                     absl::ToDoubleSeconds(now - step_start), *loss,
                     has_accuracy, *accuracy, step * batch);
    }
    if (events != nullptr) {
      if (absl::Status s = WriteStepScalars(*events, step, *loss, has_accuracy,
                                            *accuracy, examples_per_s(step));
          !s.ok()) {
        return ReportError(s);
      }
    }
    if (step == 1) steady_start = absl::Now();
  }
  const double secs = absl::ToDoubleSeconds(absl::Now() - start);
  const double throughput = examples_per_s(o.steps);
  // Averages over the last steps: one batch's numbers are noisy.
  const size_t tail = std::min<size_t>(10, losses.size());
  double loss = 0, accuracy = 0;
  for (size_t i = losses.size() - tail; i < losses.size(); ++i) {
    loss += losses[i] / tail;
    accuracy += accuracies[i] / tail;
  }
  std::string summary = absl::StrFormat(
      "done: steps %d  final loss %.4f", o.steps, loss);
  if (has_accuracy) absl::StrAppendFormat(&summary, "  accuracy %.3f", accuracy);
  absl::StrAppendFormat(&summary,
                        " (means of the last %d steps)  %.0f examples/s "
                        "(after step 1)  wall time %.2fs\n",
                        tail, throughput, secs);
  std::fputs(summary.c_str(), stdout);
  session->Close().IgnoreError();
  return kExitOk;
}

// --mode between-async, between-sync, allreduce or hybrid: this process
// is one worker task (distributed/training/trainer.h); the flags become
// its options, its progress lines go to stdout and its log to stderr
// ("weft train: /job:worker/task:I: ...").
int TrainWorker(const CommandLine& cl, const std::string& usage,
                const ModelChoice& choice, const Options& o,
                const FeedOptions& feed) {
  TrainerOptions b;
  absl::StatusOr<ClusterAndTask> where = ClusterAndTaskFromFlags(cl);
  if (!where.ok()) return ReportUsage(where.status(), usage.c_str());
  b.cluster = std::move(where->cluster);
  b.task = std::move(where->task);
  b.mode = ParseReplicationMode(choice.mode).value_or(ReplicationMode::kBetweenAsync);
  b.model = choice;
  if (absl::Status s = ParsePsStrategy(cl.Get("ps-strategy", "round-robin"),
                                       &b.strategy);
      !s.ok()) {
    return ReportUsage(s, usage.c_str());
  }
  absl::StatusOr<int64_t> wait_chief = cl.GetPositiveInt("wait-for-chief-s", 120);
  absl::StatusOr<int64_t> wait_tasks = cl.GetPositiveInt("wait-for-tasks-s", 120);
  absl::StatusOr<int64_t> every = cl.GetPositiveInt("checkpoint-every", 0);
  absl::StatusOr<int64_t> step_timeout = cl.GetPositiveInt("step-timeout-s", 60, 1 << 20);
  absl::StatusOr<int64_t> to_aggregate =
      cl.GetPositiveInt("replicas-to-aggregate", 0, 1 << 20);
  absl::StatusOr<std::shared_ptr<const Security>> security = SecurityFromFlags(cl);
  for (const absl::Status& s :
       {wait_chief.status(), wait_tasks.status(), every.status(),
        step_timeout.status(), to_aggregate.status(), security.status()}) {
    if (!s.ok()) return ReportUsage(s, usage.c_str());
  }
  b.wait_for_chief = absl::Seconds(*wait_chief);
  b.wait_for_tasks = absl::Seconds(*wait_tasks);
  b.step_timeout = absl::Seconds(*step_timeout);
  b.replicas_to_aggregate = static_cast<int>(*to_aggregate);
  b.security = *security;
  b.local_socket = cl.Get("no-local-socket") != "true";
  if (cl.Has("checkpoint-every") && !cl.Has("checkpoint-dir")) {
    return ReportUsage(
        absl::InvalidArgumentError("--checkpoint-every goes with --checkpoint-dir"),
        usage.c_str());
  }
  b.checkpoint_dir = cl.Get("checkpoint-dir", "");
  b.checkpoint_every = *every;
  b.check_numerics = cl.Get("no-check-numerics") != "true";
  b.steps = o.steps;
  b.log_every = o.log_every;
  b.logdir = o.logdir;
  b.metrics_path = o.metrics_out;
  // --data or --input, this worker's shard of it.
  b.feeds = [feed, choice](const tensorflow::GraphDef& graph, int shards, int shard) {
    FeedOptions f = feed;
    f.shards = shards;
    f.shard = shard;
    return choice.forward != nullptr ? ModelFeeds(choice, f)
                                     : DatasetFeeds(graph, "the model", f);
  };
  const bool tty = isatty(fileno(stdout)) != 0;
  b.progress_every_step = tty;
  b.progress = [tty](absl::string_view line) {
    PrintProgressLine(std::string(line), tty);
  };
  b.log = [task = b.task.ToString()](absl::string_view line) {
    std::fprintf(stderr, "weft train: %s: %s\n", task.c_str(),
                 std::string(line).c_str());
    std::fflush(stderr);
  };
  if (absl::Status s = TrainBetweenGraph(b); !s.ok()) return ReportError(s);
  return kExitOk;
}

}  // namespace

int TrainCommand(int argc, char** argv) {
  const std::string usage = Usage();
  std::map<std::string, FlagKind> flags = {{"graph", kValue},
                                           {"steps", kValue},
                                           {"data", kValue},
                                           {"data-seed", kValue},
                                           {"log-every", kValue},
                                           {"cpu-devices", kValue},
                                           {"max-input-bytes", kValue},
                                           {"memory-limit", kValue},
                                           {"target", kValue},
                                           {"cluster", kValue},
                                           {"job", kValue},
                                           {"task", kValue},
                                           {"ps-strategy", kValue},
                                           {"wait-for-chief-s", kValue},
                                           {"wait-for-tasks-s", kValue},
                                           {"checkpoint-dir", kValue},
                                           {"checkpoint-every", kValue},
                                           {"replicas-to-aggregate", kValue},
                                           {"step-timeout-s", kValue},
                                           {"no-local-socket", kSwitch},
                                           {"no-check-numerics", kSwitch},
                                           {"logdir", kValue},
                                           {"metrics-out", kValue},
                                           {"loss", kValue},
                                           {"init", kValue},
                                           {"input", kRepeated},
                                           {"train-op", kValue},
                                           {"help", kSwitch}};
  AddModelFlags(&flags);
  AddSecurityFlags(&flags);
  CommandLine cl(flags);
  auto usage_error = [&](const std::string& message) {
    return ReportUsage(absl::InvalidArgumentError(message), usage.c_str());
  };
  if (std::optional<int> rc = StartCommand(argc, argv, usage.c_str(), {}, &cl)) {
    return *rc;
  }
  if (cl.Has("graph") == cl.Has("model")) {
    return usage_error("give exactly one of --graph and --model");
  }
  Options o;
  absl::StatusOr<int64_t> steps = cl.GetPositiveInt("steps", o.steps);
  absl::StatusOr<int64_t> log_every =
      cl.GetPositiveInt("log-every", o.log_every);
  absl::StatusOr<int64_t> cpu_devices =
      cl.GetPositiveInt("cpu-devices", o.cpu_devices, kMaxLocalCpuDevices);
  absl::StatusOr<int64_t> max_input =
      cl.GetByteSize("max-input-bytes", kDefaultMaxInputBytes);
  absl::StatusOr<int64_t> memory_limit = cl.GetByteSize("memory-limit", 0);
  for (const auto* flag :
       {&steps, &log_every, &cpu_devices, &max_input, &memory_limit}) {
    if (!flag->ok()) return ReportUsage(flag->status(), usage.c_str());
  }
  o.steps = *steps;
  o.log_every = *log_every;
  o.cpu_devices = static_cast<int>(*cpu_devices);
  o.memory_limit = *memory_limit;
  if (cl.Has("target")) {
    absl::StatusOr<std::string> target = GrpcTargetAddress(cl.Get("target"));
    if (!target.ok()) return ReportUsage(target.status(), usage.c_str());
    o.target = *std::move(target);
    absl::StatusOr<std::shared_ptr<const Security>> security = SecurityFromFlags(cl);
    if (!security.ok()) return ReportUsage(security.status(), usage.c_str());
    o.security = *security;
  }
  if (cl.Has("data-seed") && !absl::SimpleAtoi(cl.Get("data-seed"), &o.data_seed)) {
    return usage_error(absl::StrCat("--data-seed must be a non-negative integer, not '",
                                    cl.Get("data-seed"), "'"));
  }
  o.data = cl.Get("data", "synthetic");
  o.logdir = cl.Get("logdir", "");
  o.metrics_out = cl.Get("metrics-out", "");
  if (o.data != "synthetic" && o.data != "digits") {
    return usage_error(absl::StrCat("--data must be synthetic or digits, not '",
                                    o.data, "'"));
  }
  FeedOptions feed;
  feed.data = o.data;
  feed.seed = o.data_seed;
  for (const std::string& flag : cl.GetAll("input")) {
    if (absl::Status s = ParseInputFlag(flag, &feed.input_files); !s.ok()) {
      return ReportUsage(s, usage.c_str());
    }
  }
  if ((cl.Has("init") || cl.Has("input") || cl.Has("train-op")) && !cl.Has("loss")) {
    return usage_error("--init, --input and --train-op go with --graph FILE --loss TENSOR");
  }
  const std::string source = absl::StrCat("'", cl.Get("graph"), "'");
  if (cl.Has("graph") && !cl.Has("loss")) {
    for (const char* f : {"batch", "optimizer", "lr", "variables", "hidden",
                          "seed", "devices", "mode", "param-device"}) {
      if (cl.Has(f)) {
        return usage_error(absl::StrCat(
            "--", f, " goes with --model, or with --graph and --loss (a "
            "forward graph), not with a training graph from 'weft graphgen'"));
      }
    }
    absl::StatusOr<tensorflow::GraphDef> graph = ReadGraphDefFile(cl.Get("graph"), *max_input);
    if (!graph.ok()) return ReportError(graph.status());
    absl::StatusOr<std::unique_ptr<StepFeeds>> feeds = DatasetFeeds(*graph, source, feed);
    if (!feeds.ok()) return ReportError(feeds.status());
    return Train(*graph, source, o, **feeds);
  }
  absl::StatusOr<ModelChoice> choice;
  if (cl.Has("loss")) {
    if (cl.Has("data")) {
      return usage_error("--data feeds the built-in models: a --graph model "
                         "takes --input NAME=FILE.npy (or synthetic data)");
    }
    absl::StatusOr<tensorflow::GraphDef> graph = ReadGraphDefFile(cl.Get("graph"), *max_input);
    if (!graph.ok()) return ReportError(graph.status());
    choice = ParseImportedModelFlags(
        cl, std::make_shared<const tensorflow::GraphDef>(*std::move(graph)), source);
    absl::StatusOr<int64_t> batch = cl.GetPositiveInt("batch", 0);
    if (!batch.ok()) return ReportUsage(batch.status(), usage.c_str());
    feed.batch = *batch;
  } else {
    choice = ParseModelFlags(cl);
  }
  if (!choice.ok()) return ReportUsage(choice.status(), usage.c_str());
  const bool between = IsBetweenGraph(*choice);
  for (const char* f : {"cluster", "job", "task", "ps-strategy",
                        "wait-for-chief-s", "wait-for-tasks-s",
                        "checkpoint-dir", "checkpoint-every", "step-timeout-s",
                        "no-local-socket", "no-check-numerics"}) {
    if (cl.Has(f) && !between) {
      return usage_error(absl::StrCat(
          "--", f, " goes with --mode between-async, between-sync, "
          "allreduce or hybrid"));
    }
  }
  if (AveragesOverRing(*choice) && cl.Has("ps-strategy")) {
    return usage_error(absl::StrCat(
        "--mode ", choice->mode, " keeps no variables on ps tasks: "
        "--ps-strategy does not apply"));
  }
  if (cl.Has("replicas-to-aggregate") && choice->mode != "between-sync") {
    return usage_error("--replicas-to-aggregate goes with --mode between-sync");
  }
  if (between) {
    if (cl.Has("target")) {
      return usage_error(absl::StrCat(
          "--mode ", choice->mode, " serves its own task and trains through "
          "it: give --cluster, --job worker and --task (or TF_CONFIG), not "
          "--target"));
    }
    return TrainWorker(cl, usage, *choice, o, feed);
  }
  std::vector<std::string> devices = choice->devices;
  if (!choice->param_device.empty()) devices.push_back(choice->param_device);
  if (o.target.empty()) {
    if (absl::Status s = CheckLocalDevices(devices); !s.ok()) {
      return ReportUsage(s, usage.c_str());
    }
  }
  absl::StatusOr<tensorflow::GraphDef> graph = BuildModelGraph(*choice);
  if (!graph.ok()) return ReportError(graph.status());
  absl::StatusOr<std::unique_ptr<StepFeeds>> feeds =
      choice->forward != nullptr ? ModelFeeds(*choice, feed)
                                 : DatasetFeeds(*graph, DescribeModel(*choice), feed);
  if (!feeds.ok()) return ReportError(feeds.status());
  return Train(*graph, DescribeModel(*choice), o, **feeds);
}

}  // namespace weft
