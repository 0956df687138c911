// The between-graph trainer's driver: checks the options, builds this
// worker's graph (worker_graph.h), serves the task, opens the session and
// readies the variables (chief.h), and runs the steps until the global
// step reaches the end, recovering from ps restarts (task_health.h).
#include "distributed/training/trainer.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "distributed/client_session.h"
#include "distributed/rpc/grpc_server.h"
#include "distributed/training/checkpoint_dir.h"
#include "distributed/training/chief.h"
#include "distributed/training/numerics.h"
#include "distributed/training/step_metrics.h"
#include "distributed/training/sync_loops.h"
#include "distributed/training/task_health.h"
#include "distributed/training/worker_context.h"
#include "distributed/training/worker_graph.h"
#include "graph/builder/sync_replicas.h"
#include "runtime/checkpoint/file_util.h"
#include "runtime/core/status.h"
#include "runtime/events/event_writer.h"

namespace weft {

absl::string_view ReplicationModeName(ReplicationMode mode) {
  switch (mode) {
    case ReplicationMode::kBetweenAsync: return "between-async";
    case ReplicationMode::kBetweenSync: return "between-sync";
    case ReplicationMode::kAllReduce: return "allreduce";
    case ReplicationMode::kHybrid: return "hybrid";
  }
  return "between-async";
}

std::optional<ReplicationMode> ParseReplicationMode(absl::string_view name) {
  for (ReplicationMode m :
       {ReplicationMode::kBetweenAsync, ReplicationMode::kBetweenSync,
        ReplicationMode::kAllReduce, ReplicationMode::kHybrid}) {
    if (name == ReplicationModeName(m)) return m;
  }
  return std::nullopt;
}

absl::Status ValidateTrainerOptions(const TrainerOptions& o) {
  const bool ring = o.mode == ReplicationMode::kAllReduce ||
                    o.mode == ReplicationMode::kHybrid;
  if (o.task.job != "worker") {
    return absl::InvalidArgumentError(absl::StrCat(
        "weft train --mode ", ReplicationModeName(o.mode),
        " runs a worker task, not ", o.task.ToString(),
        "; start ps tasks with 'weft server --job ps'"));
  }
  const std::vector<int> workers = o.cluster.TaskIndices("worker");
  if (std::find(workers.begin(), workers.end(), o.task.index) == workers.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        o.task.ToString(), " is not a task of the cluster ", o.cluster.ToString(),
        ": its worker job has tasks ", absl::StrJoin(workers, ", ")));
  }
  if (o.cluster.TaskIndices("ps").empty() && !ring) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the cluster ", o.cluster.ToString(),
        " has no ps job; between-graph replication keeps the variables there"));
  }
  if (o.mode == ReplicationMode::kBetweenSync &&
      o.replicas_to_aggregate > static_cast<int>(workers.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--replicas-to-aggregate ", o.replicas_to_aggregate,
        " is more than the ", workers.size(), " workers of the cluster"));
  }
  if (o.steps < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the global steps must be 1 or more, not ", o.steps));
  }
  if (!o.feeds) {
    return absl::InvalidArgumentError("the trainer needs its step feeds");
  }
  return absl::OkStatus();
}

namespace {

// "/job:ps/task:0 (127.0.0.1:2222), ...".
std::string PsTasks(const ClusterSpec& cluster) {
  std::vector<std::string> names;
  for (int i : cluster.TaskIndices("ps")) {
    absl::StatusOr<std::string> address = cluster.Address(TaskId{"ps", i});
    names.push_back(absl::StrCat("/job:ps/task:", i, " (",
                                 address.ok() ? *address : "?", ")"));
  }
  return absl::StrJoin(names, ", ");
}

// One worker's run, from its serving to its last step.
class Worker {
 public:
  explicit Worker(const TrainerOptions& o) : w_(o) {}
  absl::Status Run();

 private:
  void Print(const std::string& line) const {
    if (w_.o.progress) w_.o.progress(line);
  }
  absl::Status StartServer();
  // A session on this task's master, in-process (no loopback RPC per
  // step), its variables ready (initialised, restored, or the chief's): at
  // the start, and again after a ps restart.
  absl::Status Connect();
  // Sync: the chief sets the accumulators' step and its own local step,
  // and queues the first tokens; every other worker sets its local step
  // (sync_replicas.h). At the start, and again after a ps restart.
  absl::Status SyncInit();
  absl::Status RunTarget(const std::string& target, const std::string& what,
                         std::vector<std::pair<std::string, Tensor>> feeds = {});
  // hybrid: "a step runs on ..." from the first step's partitions.
  void LogDevices(const tensorflow::RunMetadata& metadata) const;
  // After a failed step `s` that CanRecover: waits for the ps, reconnects
  // and reads the global step into step_.
  absl::Status Recover(const absl::Status& s);
  absl::Status Save();
  // The steps, until the global step reaches the end.
  absl::Status Train();
  // The chief's end: the last tokens, the final checkpoint, its mark; the
  // others wait for that mark.
  absl::Status Finish();
  // The error `s` of the steps, or the sync update loop's if that failed.
  absl::Status StopWith(absl::Status s) {
    absl::Status updater = sync_->Stop();
    return updater.ok() ? s : updater;
  }

  WorkerContext w_;
  WorkerGraph g_;
  std::unique_ptr<StepFeeds> feeds_;
  std::unique_ptr<GrpcServer> server_;
  SessionOptions session_options_;
  std::unique_ptr<Session> session_;
  std::optional<SyncLoops> sync_;
  std::optional<ChiefWatch> watch_;
  int64_t local_steps_ = 0, step_ = 0, saved_at_ = -1;
  std::deque<std::pair<double, double>> last_;  // the last 10 steps' numbers
};

absl::Status Worker::StartServer() {
  ServerOptions server_options;
  server_options.cluster = w_.o.cluster;
  server_options.task = w_.task;
  server_options.security = w_.o.security;
  server_options.local_socket = w_.o.local_socket;
  server_options.wait_for_tasks = w_.o.wait_for_tasks;
  server_options.num_cpus = g_.cpus;
  if (!w_.o.checkpoint_dir.empty()) {
    // The chief's task merges the shards there (and, all-reduce, writes
    // them): the job's own directory is the one place its graphs may write.
    WEFT_RETURN_IF_ERROR(
        WithContext(CreateDirectories(w_.o.checkpoint_dir), "--checkpoint-dir"));
    server_options.file_roots.push_back(w_.o.checkpoint_dir);
  }
  server_options.log = [this](absl::string_view line) { w_.Log(line); };
  WEFT_ASSIGN_OR_RETURN(server_, GrpcServer::Start(server_options));
  w_.Log(absl::StrCat("serving on ", server_->address(), "; variables on ",
                      w_.ps_tasks));
  if (!w_.ring) session_options_.config.add_device_filters("/job:ps");
  session_options_.config.add_device_filters(server_->task_name());
  session_options_.config.set_allow_soft_placement(true);
  return absl::OkStatus();
}

absl::Status Worker::Connect() {
  if (session_ != nullptr) session_->Close().IgnoreError();
  session_ = NewClientSession(server_->master(), session_options_);
  WEFT_RETURN_IF_ERROR(session_->Create(g_.graph));
  if (w_.ring) {
    WEFT_RETURN_IF_ERROR(WaitForRing(w_));
    return InitRing(w_, g_, session_.get());
  }
  return InitOrWait(w_, g_, session_.get());
}

absl::Status Worker::RunTarget(const std::string& target, const std::string& what,
                               std::vector<std::pair<std::string, Tensor>> feeds) {
  std::vector<Tensor> none;
  return Diagnose(
      w_, session_->Run(w_.StepOptions(), feeds, {}, {target}, &none, nullptr), what);
}

absl::Status Worker::SyncInit() {
  if (!w_.sync) return absl::OkStatus();
  const char* init = w_.chief() ? kSyncChiefInit : kSyncLocalStepInit;
  WEFT_RETURN_IF_ERROR(RunTarget(init, absl::StrCat("running '", init, "'")));
  if (!w_.chief()) return absl::OkStatus();
  return RunTarget(kSyncInitTokens, absl::StrCat("running '", kSyncInitTokens, "'"));
}

void Worker::LogDevices(const tensorflow::RunMetadata& metadata) const {
  std::map<std::string, int> nodes;
  for (const tensorflow::GraphDef& g : metadata.partition_graphs()) {
    for (const tensorflow::NodeDef& n : g.node()) ++nodes[n.device()];
  }
  std::vector<std::string> parts;
  for (const auto& [device, count] : nodes) {
    parts.push_back(absl::StrCat(device, " (", count, " nodes)"));
  }
  w_.Log(absl::StrCat("a step runs on ", absl::StrJoin(parts, ", ")));
}

absl::Status Worker::Recover(const absl::Status& s) {
  // With checkpoints: a ps that went away and comes back (empty) is
  // waited for, and the chief restores the newest checkpoint there.
  // Sync: the chief's update loop failed with it; it starts again, and
  // the accumulators, local steps and tokens are set up anew.
  absl::Status updater_status = sync_->Stop();
  if (!updater_status.ok() && !CanRecover(w_, updater_status)) {
    return updater_status;
  }
  WEFT_RETURN_IF_ERROR(WaitForPsAgain(w_, s));
  WEFT_RETURN_IF_ERROR(Connect());
  WEFT_RETURN_IF_ERROR(SyncInit());
  sync_->Start(session_.get());
  std::vector<Tensor> now;
  WEFT_RETURN_IF_ERROR(Diagnose(
      w_, session_->Run(w_.StepOptions(), {}, {g_.global_step}, {}, &now, nullptr),
      "reading the global step after reconnecting"));
  step_ = now.at(0).flat<int64_t>()[0];
  w_.Log(absl::StrCat("training again from global step ", step_));
  return absl::OkStatus();
}

absl::Status Worker::Save() {
  WEFT_ASSIGN_OR_RETURN(std::string prefix,
                        SaveCheckpoint(session_.get(), *g_.saver, w_.o.checkpoint_dir,
                                       step_, "global_step"));
  w_.Log(absl::StrCat("saved ", prefix, " (", g_.saver->num_shards, " shard",
                      g_.saver->num_shards == 1 ? "" : "s", ")"));
  saved_at_ = step_;
  return absl::OkStatus();
}

absl::Status Worker::Train() {
  const TrainerOptions& o = w_.o;
  // Sync: the token this worker dequeued is the global step after the
  // update its gradients went into.
  std::vector<std::string> fetches = {
      "loss", w_.sync ? std::string("sync_token_q_Dequeue:0") : g_.global_step};
  if (g_.has_accuracy) fetches.push_back("accuracy");
  const StepProgress progress(
      o.steps, o.log_every > 0 ? o.log_every : std::max<int64_t>(1, o.steps / 10),
      o.progress_every_step);
  std::unique_ptr<EventWriter> events;
  if (!o.logdir.empty() && w_.chief()) {
    WEFT_ASSIGN_OR_RETURN(events, EventWriter::Create(o.logdir));
    w_.Log(absl::StrCat("TensorBoard events: ", events->path()));
  }
  std::unique_ptr<MetricsLog> metrics;
  if (!o.metrics_path.empty()) {
    WEFT_ASSIGN_OR_RETURN(metrics, MetricsLog::Create(o.metrics_path));
  }
  const int64_t batch = feeds_->batch();
  const absl::Time start = absl::Now();
  int64_t next_save = -1;
  const bool saves = g_.saver.has_value() && w_.chief();
  // Every worker counts its steps on the ps; the chief's progress lines
  // name the workers that fall behind (at most one reading a second).
  std::vector<std::string> targets = {"train_op"};
  if (g_.progress.has_value()) targets.push_back(g_.progress->bump[w_.task.index]);
  std::pair<std::vector<int64_t>, absl::Time> counts;
  std::string behind;
  absl::Time next_behind = absl::InfinitePast();
  int recoveries = 0;
  double loss = 0, accuracy = 0;
  std::vector<Tensor> out;
  while (step_ < o.steps) {
    WEFT_ASSIGN_OR_RETURN(auto step_feeds, feeds_->Next());
    const absl::Time step_start = absl::Now();
    // hybrid: the first step says which devices of this task ran it.
    const bool report_devices =
        o.mode == ReplicationMode::kHybrid && local_steps_ == 0;
    tensorflow::RunOptions run = w_.StepOptions();
    run.set_output_partition_graphs(report_devices);
    tensorflow::RunMetadata metadata;
    absl::Status s = session_->Run(run, step_feeds, fetches, targets, &out,
                                   report_devices ? &metadata : nullptr);
    if (s.ok() && report_devices) LogDevices(metadata);
    if (!s.ok() && recoveries < kMaxRecoveries && CanRecover(w_, s)) {
      ++recoveries;
      WEFT_RETURN_IF_ERROR(Recover(s));
      next_save = -1;
      continue;
    }
    if (!s.ok()) {
      // The update loop's error explains more when it failed first.
      return StopWith(Diagnose(w_, s, absl::StrCat("local step ", local_steps_ + 1)));
    }
    ++local_steps_;
    WEFT_ASSIGN_OR_RETURN(loss, ScalarMetric(out[0], "loss"));
    const bool step_ok = out[1].dtype() == DT_INT64 && out[1].NumElements() == 1;
    if (o.check_numerics && !std::isfinite(loss)) {
      return StopWith(NonFiniteLoss(
          w_.task, loss, step_ok ? out[1].flat<int64_t>()[0] : step_, local_steps_,
          NonFiniteVariables(session_.get(), g_.graph)));
    }
    if (!step_ok) return absl::InternalError("global_step is not an int64 scalar");
    // Async: the value read in this step, before or after this step's
    // increment. Sync: the step after this one's update.
    step_ = std::max(step_, out[1].flat<int64_t>()[0] + (w_.sync ? 0 : 1));
    if (g_.has_accuracy) {
      WEFT_ASSIGN_OR_RETURN(accuracy, ScalarMetric(out[2], "accuracy"));
    }
    last_.emplace_back(loss, accuracy);
    if (last_.size() > 10) last_.pop_front();
    const double secs = absl::ToDoubleSeconds(absl::Now() - start);
    const double rate = secs > 0 ? local_steps_ * batch / secs : 0.0;
    const int64_t shown = std::min(step_, o.steps);
    if (w_.chief() && g_.progress.has_value() && progress.Prints(shown) &&
        absl::Now() >= next_behind) {
      WEFT_ASSIGN_OR_RETURN(behind, Behind(w_, g_, session_.get(), &counts));
      next_behind = absl::Now() + absl::Seconds(1);  // a terminal: every step
    }
    if (progress.Prints(shown)) {
      Print(progress.Line(shown, loss, accuracy, g_.has_accuracy, rate, behind));
    }
    if (metrics != nullptr) {
      const absl::Time now = absl::Now();
      metrics->Write(step_, absl::ToDoubleSeconds(now - start),
                     absl::ToDoubleSeconds(now - step_start), loss,
                     g_.has_accuracy, accuracy, local_steps_ * batch);
    }
    if (events != nullptr) {
      WEFT_RETURN_IF_ERROR(WriteStepScalars(*events, step_, loss, g_.has_accuracy,
                                            accuracy, rate));
    }
    if (watch_.has_value()) {
      absl::Status chief = watch_->Check(session_.get());
      if (!chief.ok()) return StopWith(chief);
    }
    if (saves && o.checkpoint_every > 0) {
      // The first multiple of checkpoint_every past where this run began.
      if (next_save < 0) next_save = (step_ / o.checkpoint_every + 1) * o.checkpoint_every;
      if (step_ >= next_save && step_ < o.steps) {
        WEFT_RETURN_IF_ERROR(Save());
        next_save = (step_ / o.checkpoint_every + 1) * o.checkpoint_every;
      }
    }
  }
  return sync_->Stop();
}

absl::Status Worker::Finish() {
  if (w_.sync && w_.chief()) {
    // Tokens for the workers still waiting on one (a backup whose
    // gradient came too late), so that they see the end.
    WEFT_RETURN_IF_ERROR(
        RunTarget(kSyncEndTokens, absl::StrCat("running '", kSyncEndTokens, "'")));
  }
  if (g_.saver.has_value() && w_.chief() && saved_at_ != step_) {
    WEFT_RETURN_IF_ERROR(Save());
  }
  if (!g_.progress.has_value()) return absl::OkStatus();
  // No worker reports a job done that its chief has not finished.
  if (!w_.chief()) return watch_->WaitForDone(session_.get());
  return RunTarget(g_.progress->chief_done, "marking the job finished",
                   {{g_.progress->chief_done_step, Tensor::Scalar<int64_t>(w_.o.steps)}});
}

absl::Status Worker::Run() {
  const TrainerOptions& o = w_.o;
  WEFT_RETURN_IF_ERROR(ValidateTrainerOptions(o));
  w_.ps_tasks = PsTasks(o.cluster);
  if (w_.ring) {
    const std::string ps = w_.ps_tasks;
    w_.ps_tasks = absl::StrCat("/job:worker/task:", w_.task.index);
    if (!ps.empty()) {
      w_.Log(absl::StrCat("--mode ", w_.mode, " does not use the ps tasks of the "
                          "cluster (", ps, ")"));
    }
  }
  // This worker's copy of the model, placed for the cluster.
  WEFT_ASSIGN_OR_RETURN(g_, BuildWorkerGraph(w_));
  WEFT_ASSIGN_OR_RETURN(feeds_, o.feeds(g_.graph, g_.workers, w_.task.index));
  // This task's server, as `weft server` would run it.
  WEFT_RETURN_IF_ERROR(StartServer());
  WEFT_RETURN_IF_ERROR(Connect());
  WEFT_RETURN_IF_ERROR(SyncInit());
  Print(absl::StrFormat(
      "training %s between-graph (%s) as %s of %d workers on %s, batch %d, "
      "until global step %d",
      DescribeModel(g_.model),
      w_.sync   ? absl::StrCat("sync, ", g_.to_aggregate, " of ", g_.workers,
                               " gradients per step")
      : w_.ring ? absl::StrCat(w_.mode, ": gradients averaged over a ring of ",
                               g_.workers, " workers")
                : "async",
      w_.task.ToString(), g_.workers, feeds_->Describe(), feeds_->batch(), o.steps));
  sync_.emplace(w_, g_);
  if (!w_.chief() && g_.progress.has_value()) watch_.emplace(w_, g_);
  const absl::Time start = absl::Now();
  sync_->Start(session_.get());
  WEFT_RETURN_IF_ERROR(Train());
  WEFT_RETURN_IF_ERROR(Finish());
  const double secs = absl::ToDoubleSeconds(absl::Now() - start);
  double loss = 0, accuracy = 0;
  for (const auto& [l, a] : last_) {
    loss += l / last_.size();
    accuracy += a / last_.size();
  }
  // Sync: a backup worker may compute more than one gradient per global
  // step (the tokens of a dead or slow worker), or fewer.
  Print(absl::StrFormat(
      "done: %s %s %d %s the %d global steps; final loss %.4f%s (means "
      "of its last %d steps)  %.0f examples/s on this worker  wall time "
      "%.2fs",
      w_.task.ToString(), w_.sync ? "computed" : "ran", local_steps_,
      w_.sync ? "gradients for" : "of", o.steps, loss,
      g_.has_accuracy ? absl::StrFormat("  accuracy %.3f", accuracy) : "",
      last_.size(), secs > 0 ? local_steps_ * feeds_->batch() / secs : 0.0, secs));
  session_->Close().IgnoreError();
  session_.reset();
  if (w_.ring && !server_->WaitForCollectivesClaimed(o.step_timeout)) {
    w_.Log("the next worker of the ring did not collect this worker's last "
           "all-reduce chunks; it will report the step as failed");
  }
  server_->Shutdown();
  return absl::OkStatus();
}

}  // namespace

absl::Status TrainBetweenGraph(const TrainerOptions& options) {
  Worker worker(options);
  return worker.Run();
}

}  // namespace weft
