#include "tools/train_between.h"

#include <cstdio>
#include <deque>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "distributed/rpc/grpc_server.h"
#include "distributed/rpc/grpc_session.h"
#include "graph/models/datasets.h"
#include "runtime/core/status.h"
#include "runtime/session.h"
#include "runtime/events/event_writer.h"
#include "tools/checkpoint_dir.h"
#include "tools/commands.h"
#include "tools/train_common.h"

namespace weft {
namespace {

constexpr char kReadyPrefix[] = "weft_ready/";

// One VarIsInitializedOp / IsVariableInitialized per variable, beside it;
// the names to fetch. Fetching them all tells whether the model is ready.
std::vector<std::string> AddReadinessChecks(tensorflow::GraphDef* graph) {
  std::vector<std::string> checks;
  const int n = graph->node_size();
  for (int i = 0; i < n; ++i) {
    const tensorflow::NodeDef& var = graph->node(i);
    const bool resource = var.op() == "VarHandleOp";
    if (!resource && var.op() != "VariableV2") continue;
    tensorflow::NodeDef check;
    check.set_name(absl::StrCat(kReadyPrefix, var.name()));
    check.set_op(resource ? "VarIsInitializedOp" : "IsVariableInitialized");
    check.add_input(var.name());
    check.set_device(var.device());
    if (!resource) {
      auto it = var.attr().find("dtype");
      if (it != var.attr().end()) (*check.mutable_attr())["dtype"] = it->second;
    }
    checks.push_back(check.name());
    *graph->add_node() = std::move(check);
  }
  return checks;
}

// Examples i with i mod `shards` == `index`.
Dataset Shard(const Dataset& all, int64_t shards, int64_t index) {
  Dataset d = all;
  d.name = absl::StrCat(all.name, " shard ", index, " of ", shards);
  d.images.clear();
  d.labels.clear();
  const int64_t f = all.features();
  for (int64_t i = index; i < all.size(); i += shards) {
    d.images.insert(d.images.end(), all.images.begin() + i * f,
                    all.images.begin() + (i + 1) * f);
    d.labels.push_back(all.labels[i]);
  }
  return d;
}

// The global step's value: its read node, whichever kind of variable.
std::string GlobalStepRead(const tensorflow::GraphDef& graph) {
  for (const auto& n : graph.node()) {
    if (n.name() == "global_step/Read" || n.name() == "global_step/read") {
      return n.name();
    }
  }
  return "";
}

class Worker {
 public:
  Worker(const ModelChoice& choice, const BetweenGraphOptions& o)
      : choice_(choice), o_(o), task_(o.where.task) {}

  absl::Status Run();

 private:
  void Log(const std::string& line) const {
    std::fprintf(stderr, "weft train: %s: %s\n", task_.ToString().c_str(),
                 line.c_str());
    std::fflush(stderr);
  }
  absl::StatusOr<int> CountReady(Session* session) const;
  absl::Status InitOrWait(Session* session);

  const ModelChoice& choice_;
  const BetweenGraphOptions& o_;
  const TaskId task_;
  std::vector<std::string> ready_checks_;
  std::optional<SaverNodes> saver_;
  std::string ps_tasks_;  // "/job:ps/task:0 (127.0.0.1:2222), ..."
};

absl::StatusOr<int> Worker::CountReady(Session* session) const {
  std::vector<Tensor> out;
  WEFT_RETURN_IF_ERROR(session->Run({}, ready_checks_, {}, &out));
  int ready = 0;
  for (const Tensor& t : out) ready += t.flat<bool>()[0] ? 1 : 0;
  return ready;
}

absl::Status Worker::InitOrWait(Session* session) {
  const int total = static_cast<int>(ready_checks_.size());
  WEFT_ASSIGN_OR_RETURN(int ready, CountReady(session));
  if (task_.index == 0) {
    if (ready == total) {
      Log(absl::StrCat("the ", total, " variables on ", ps_tasks_,
                       " are initialised already: joining the running job"));
      return absl::OkStatus();
    }
    if (saver_.has_value()) {
      WEFT_ASSIGN_OR_RETURN(std::optional<std::string> latest,
                            LatestCheckpoint(o_.checkpoint_dir));
      if (latest.has_value()) {
        WEFT_RETURN_IF_ERROR(RestoreCheckpoint(session, *saver_, *latest));
        Log(absl::StrCat("restored ", total, " variables on ", ps_tasks_,
                         " from ", *latest));
        return absl::OkStatus();
      }
    }
    std::vector<Tensor> out;
    WEFT_RETURN_IF_ERROR(WithContext(session->Run({}, {}, {"init"}, &out),
                                     "the chief running 'init'"));
    Log(absl::StrCat("initialised ", total, " variables on ", ps_tasks_));
    return absl::OkStatus();
  }
  const absl::Time give_up = absl::Now() + o_.wait_for_chief;
  absl::Time next_log = absl::Now();
  while (ready < total) {
    const absl::Time now = absl::Now();
    if (now >= give_up) {
      return absl::DeadlineExceededError(absl::StrCat(
          task_.ToString(), " waited ", absl::FormatDuration(o_.wait_for_chief),
          " for the chief (/job:worker/task:0) to initialise the variables on ",
          ps_tasks_, " (", ready, " of ", total,
          " are): start the chief, or raise --wait-for-chief-s"));
    }
    if (now >= next_log) {
      Log(absl::StrCat("waiting for the chief (/job:worker/task:0) to "
                       "initialise the variables on ", ps_tasks_, ": ", ready,
                       " of ", total, " ready"));
      next_log = now + absl::Seconds(5);
    }
    absl::SleepFor(absl::Milliseconds(200));
    WEFT_ASSIGN_OR_RETURN(ready, CountReady(session));
  }
  return absl::OkStatus();
}

absl::Status Worker::Run() {
  const ClusterSpec& cluster = o_.where.cluster;
  if (task_.job != "worker") {
    return absl::InvalidArgumentError(absl::StrCat(
        "weft train --mode between-async runs a worker task, not ",
        task_.ToString(), "; start ps tasks with 'weft server --job ps'"));
  }
  const std::vector<int> ps = cluster.TaskIndices("ps");
  if (ps.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the cluster ", cluster.ToString(),
        " has no ps job; between-graph replication keeps the variables there"));
  }
  const int workers = static_cast<int>(cluster.TaskIndices("worker").size());
  std::vector<std::string> ps_names;
  for (int i : ps) {
    absl::StatusOr<std::string> address = cluster.Address(TaskId{"ps", i});
    ps_names.push_back(absl::StrCat("/job:ps/task:", i, " (",
                                    address.ok() ? *address : "?", ")"));
  }
  ps_tasks_ = absl::StrJoin(ps_names, ", ");

  // This worker's copy of the model, placed for the cluster.
  WEFT_ASSIGN_OR_RETURN(tensorflow::GraphDef graph, BuildModelGraph(choice_));
  ReplicaDeviceSetterOptions setter;
  setter.ps_tasks = static_cast<int>(ps.size());
  setter.worker_device = absl::StrCat("/job:worker/task:", task_.index);
  setter.strategy = o_.strategy;
  WEFT_RETURN_IF_ERROR(ApplyReplicaDeviceSetter(setter, &graph));
  if (!o_.checkpoint_dir.empty()) {
    WEFT_ASSIGN_OR_RETURN(saver_, AddSaver(&graph));
  }
  ready_checks_ = AddReadinessChecks(&graph);
  const std::string global_step = GlobalStepRead(graph);
  if (global_step.empty()) {
    return absl::InternalError("the model graph has no global_step read");
  }
  WEFT_ASSIGN_OR_RETURN(GraphInfo info, InspectGraph(graph, "the model"));
  WEFT_ASSIGN_OR_RETURN(Dataset all, LoadData(o_.data, info.features, o_.data_seed));
  const Dataset data = Shard(all, workers, task_.index);
  if (data.size() < info.batch) {
    return absl::InvalidArgumentError(absl::StrCat(
        "worker shard ", task_.index, " has ", data.size(),
        " examples, fewer than --batch ", info.batch));
  }

  // This task's server, as `weft server` would run it.
  ServerOptions server_options;
  server_options.cluster = cluster;
  server_options.task = task_;
  server_options.security = o_.security;
  server_options.wait_for_tasks = o_.wait_for_tasks;
  server_options.log = [this](absl::string_view line) { Log(std::string(line)); };
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<GrpcServer> server,
                        GrpcServer::Start(server_options));
  Log(absl::StrCat("serving on ", server->address(), "; variables on ",
                   ps_tasks_));

  SessionOptions session_options;
  session_options.config.add_device_filters("/job:ps");
  session_options.config.add_device_filters(server->task_name());
  session_options.config.set_allow_soft_placement(true);
  std::unique_ptr<Session> session =
      NewGrpcSession(server->address(), session_options, o_.security);
  WEFT_RETURN_IF_ERROR(session->Create(graph));
  WEFT_RETURN_IF_ERROR(InitOrWait(session.get()));

  std::printf(
      "training %s between-graph (async) as %s of %d workers on %s (%lld "
      "examples), batch %lld, until global step %lld\n",
      DescribeModel(choice_).c_str(), task_.ToString().c_str(), workers,
      data.name.c_str(), static_cast<long long>(data.size()),
      static_cast<long long>(info.batch), static_cast<long long>(o_.steps));
  std::fflush(stdout);
  BatchIterator batches(&data, info.batch, o_.data_seed + task_.index);
  std::vector<std::string> fetches = {"loss", global_step};
  if (info.has_accuracy) fetches.push_back("accuracy");
  Progress progress(o_.steps, o_.log_every > 0
                                  ? o_.log_every
                                  : std::max<int64_t>(1, o_.steps / 10));
  std::unique_ptr<EventWriter> events;
  if (!o_.logdir.empty() && task_.index == 0) {
    WEFT_ASSIGN_OR_RETURN(events, EventWriter::Create(o_.logdir));
    Log(absl::StrCat("TensorBoard events: ", events->path()));
  }
  const absl::Time start = absl::Now();
  int64_t local_steps = 0, step = 0, saved_at = -1, next_save = -1;
  const bool saves = saver_.has_value() && task_.index == 0;
  auto save = [&]() -> absl::Status {
    WEFT_ASSIGN_OR_RETURN(std::string prefix,
                          SaveCheckpoint(session.get(), *saver_, o_.checkpoint_dir, step));
    Log(absl::StrCat("saved ", prefix, " (", saver_->num_shards, " shard",
                     saver_->num_shards == 1 ? "" : "s", ")"));
    saved_at = step;
    return absl::OkStatus();
  };
  double loss = 0, accuracy = 0;
  std::deque<std::pair<double, double>> last;  // the last 10 steps' numbers
  std::vector<Tensor> out;
  while (step < o_.steps) {
    WEFT_ASSIGN_OR_RETURN(Batch b, batches.Next());
    WEFT_RETURN_IF_ERROR(WithContext(
        session->Run({{"images", b.images}, {"labels", b.labels}}, fetches,
                     {"train_op"}, &out),
        absl::StrCat(task_.ToString(), " local step ", local_steps + 1)));
    ++local_steps;
    WEFT_ASSIGN_OR_RETURN(loss, ScalarMetric(out[0], "loss"));
    if (out[1].dtype() != DT_INT64 || out[1].NumElements() != 1) {
      return absl::InternalError("global_step is not an int64 scalar");
    }
    // The value read in this step, before or after this step's increment.
    step = std::max(step, out[1].flat<int64_t>()[0] + 1);
    if (info.has_accuracy) {
      WEFT_ASSIGN_OR_RETURN(accuracy, ScalarMetric(out[2], "accuracy"));
    }
    last.emplace_back(loss, accuracy);
    if (last.size() > 10) last.pop_front();
    const double secs = absl::ToDoubleSeconds(absl::Now() - start);
    const double rate = secs > 0 ? local_steps * info.batch / secs : 0.0;
    progress.Step(std::min(step, o_.steps), loss, accuracy, info.has_accuracy, rate);
    if (events != nullptr) {
      WEFT_RETURN_IF_ERROR(WriteStepScalars(*events, step, loss, info.has_accuracy,
                                            accuracy, rate));
    }
    if (saves && o_.checkpoint_every > 0) {
      // The first multiple of checkpoint_every past where this run began.
      if (next_save < 0) next_save = (step / o_.checkpoint_every + 1) * o_.checkpoint_every;
      if (step >= next_save && step < o_.steps) {
        WEFT_RETURN_IF_ERROR(save());
        next_save = (step / o_.checkpoint_every + 1) * o_.checkpoint_every;
      }
    }
  }
  if (saves && saved_at != step) WEFT_RETURN_IF_ERROR(save());
  const double secs = absl::ToDoubleSeconds(absl::Now() - start);
  loss = accuracy = 0;
  for (const auto& [l, a] : last) {
    loss += l / last.size();
    accuracy += a / last.size();
  }
  std::printf(
      "done: %s ran %lld of the %lld global steps; final loss %.4f%s (means "
      "of its last %zu steps)  %.0f examples/s on this worker  wall time "
      "%.2fs\n",
      task_.ToString().c_str(), static_cast<long long>(local_steps),
      static_cast<long long>(o_.steps), loss,
      info.has_accuracy ? absl::StrFormat("  accuracy %.3f", accuracy).c_str()
                        : "",
      last.size(), secs > 0 ? local_steps * info.batch / secs : 0.0, secs);
  std::fflush(stdout);
  session->Close().IgnoreError();
  session.reset();
  server->Shutdown();
  return absl::OkStatus();
}

}  // namespace

int TrainBetweenGraph(const ModelChoice& choice,
                      const BetweenGraphOptions& options) {
  Worker worker(choice, options);
  absl::Status s = worker.Run();
  if (!s.ok()) return ReportError(s);
  return kExitOk;
}

}  // namespace weft
