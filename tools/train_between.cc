#include "tools/train_between.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <thread>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "distributed/client_session.h"
#include "distributed/rpc/grpc_server.h"
#include "graph/builder/allreduce.h"
#include "graph/builder/sync_replicas.h"
#include "graph/models/datasets.h"
#include "runtime/checkpoint/file_util.h"
#include "runtime/core/device_name.h"
#include "runtime/core/status.h"
#include "runtime/session.h"
#include "runtime/events/event_writer.h"
#include "tools/checkpoint_dir.h"
#include "tools/cluster_probe.h"
#include "tools/commands.h"
#include "tools/train_common.h"
#include "tools/worker_progress.h"

namespace weft {
namespace {

// Why a step's loss was not finite: the model's variables that hold a
// non-finite value (read in one step), with their devices.
std::string NonFiniteVariables(Session* session,
                               const tensorflow::GraphDef& graph) {
  std::map<std::string, const tensorflow::NodeDef*> handles;
  std::vector<std::string> fetches, names, devices;
  for (const tensorflow::NodeDef& n : graph.node()) {
    if (n.op() == "VarHandleOp") handles[n.name()] = &n;
    if (n.op() == "VariableV2") {
      fetches.push_back(n.name());
      names.push_back(n.name());
      devices.push_back(n.device());
    }
  }
  for (const tensorflow::NodeDef& n : graph.node()) {
    if (n.op() != "ReadVariableOp" || n.input_size() < 1) continue;
    auto it = handles.find(std::string(absl::StripSuffix(n.input(0), ":0")));
    if (it == handles.end()) continue;
    fetches.push_back(n.name());
    names.push_back(it->first);
    devices.push_back(it->second->device());
    handles.erase(it);  // one read per variable
  }
  std::vector<Tensor> values;
  tensorflow::RunOptions run;
  run.set_timeout_in_ms(30000);
  absl::Status s = session->Run(run, {}, fetches, {}, &values, nullptr);
  if (!s.ok()) {
    return absl::StrCat("its variables could not be read (", s.message(), ")");
  }
  std::vector<std::string> bad;
  for (size_t i = 0; i < values.size(); ++i) {
    const Tensor& t = values[i];
    bool finite = true;
    if (t.dtype() == DT_FLOAT) {
      for (float v : t.flat<float>()) finite = finite && std::isfinite(v);
    } else if (t.dtype() == DT_DOUBLE) {
      for (double v : t.flat<double>()) finite = finite && std::isfinite(v);
    }
    if (!finite) bad.push_back(absl::StrCat(names[i], " on ", devices[i]));
  }
  if (bad.empty()) {
    return "every variable is finite: the batch or the model's arithmetic "
           "overflowed";
  }
  return absl::StrCat("variables holding non-finite values: ",
                      absl::StrJoin(bad, ", "));
}


constexpr char kReadyPrefix[] = "weft_ready/";
// The ps restarts one run of weft train waits out and resumes from.
constexpr int kMaxRecoveries = 10;
// Variables placed on the workers' job are local variables (the sync local
// step): each worker initialises its own, and checkpoints leave them out.
constexpr char kLocalJob[] = "/job:worker";

// One VarIsInitializedOp / IsVariableInitialized per variable, beside it;
// the names to fetch. Fetching them all tells whether the model is ready.
// Local variables (on a worker: the sync local step) are each worker's own
// to initialise and are left out.
std::vector<std::string> AddReadinessChecks(tensorflow::GraphDef* graph) {
  std::vector<std::string> checks;
  const int n = graph->node_size();
  for (int i = 0; i < n; ++i) {
    const tensorflow::NodeDef& var = graph->node(i);
    const bool resource = var.op() == "VarHandleOp";
    if (!resource && var.op() != "VariableV2") continue;
    if (absl::StartsWith(var.device(), kLocalJob)) continue;
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
  // The chief's note on the workers behind (worker_progress.h), from the
  // counters now and `*last` (the previous reading and its time; updated).
  absl::StatusOr<std::string> Behind(
      Session* session, std::pair<std::vector<int64_t>, absl::Time>* last) const;
  // allreduce: until every worker of the ring answers, logging those that
  // do not, for at most --wait-for-tasks-s.
  absl::Status WaitForRing() const;
  // allreduce: every worker initialises its copy, the chief restores the
  // newest checkpoint over its own, and all take the chief's values (the
  // ring's broadcast): the copies start equal, and the averaged updates
  // keep them so.
  absl::Status InitRing(Session* session) const;
  // Whether a failed step `s` is one this worker recovers from: async or
  // sync training with --checkpoint-dir, a task that stopped answering.
  bool CanRecover(const absl::Status& s) const {
    return (choice_.mode == "between-async" || choice_.mode == "between-sync") &&
           !o_.checkpoint_dir.empty() &&
           (absl::IsUnavailable(s) || absl::IsAborted(s));
  }
  // After `lost` (a failed step): until every ps task answers again, for
  // at most --wait-for-tasks-s, saying what it waits for.
  absl::Status WaitForPsAgain(const absl::Status& lost) const;
  // Until every one of `tasks` answers, for at most --wait-for-tasks-s,
  // logging what it waits for (`what`); the error says `remedy`.
  absl::Status WaitForAnswers(const std::vector<TaskId>& tasks,
                              const std::string& what,
                              const std::string& remedy) const;
  // A step that failed (`s`, from running `what`): when it ran out of time,
  // says which of the other tasks do not answer, and what to do.
  absl::Status Diagnose(absl::Status s, const std::string& what) const;
  // A worker other than the chief: an error naming the chief when its step
  // counter has not moved for --wait-for-chief-s (checked every 5 s).
  absl::Status WatchChief(Session* session);
  // A worker other than the chief, at the end: waits (--wait-for-chief-s)
  // for the chief's mark that the job is over, final checkpoint included.
  absl::Status WaitForChiefDone(Session* session);
  int64_t chief_steps_ = -1;
  absl::Time chief_moved_ = absl::InfinitePast();
  absl::Time next_chief_check_ = absl::InfinitePast();
  // The error of a step whose loss was `loss` (not finite).
  absl::Status NonFiniteLoss(Session* session, const tensorflow::GraphDef& graph,
                             double loss, int64_t global_step,
                             int64_t local_step) const {
    return absl::FailedPreconditionError(absl::StrCat(
        "task ", task_.ToString(), ": the loss is ", loss, " at global step ",
        global_step, " (this worker's step ", local_step, "); ",
        NonFiniteVariables(session, graph),
        ". Stopping rather than training on it (a client that wrote them, or "
        "an update that diverged: try a lower --lr; --no-check-numerics "
        "trains on)"));
  }
  tensorflow::RunOptions StepOptions() const {
    tensorflow::RunOptions r;
    r.set_timeout_in_ms(absl::ToInt64Milliseconds(o_.step_timeout));
    return r;
  }

  const ModelChoice& choice_;
  const BetweenGraphOptions& o_;
  const TaskId task_;
  std::vector<std::string> ready_checks_;
  std::optional<SaverNodes> saver_;
  std::optional<WorkerProgressNodes> progress_;  // not with allreduce
  ProgressHistory history_;  // sync: the counts over time
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
    // The progress counters first: the others wait for the model.
    std::vector<Tensor> none;
    WEFT_RETURN_IF_ERROR(WithContext(session->Run({}, {}, {progress_->init}, &none),
                                     "the chief running 'weft_progress/init'"));
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
    absl::SleepFor(absl::Milliseconds(50));
    WEFT_ASSIGN_OR_RETURN(ready, CountReady(session));
  }
  return absl::OkStatus();
}

absl::Status Worker::WatchChief(Session* session) {
  const absl::Time now = absl::Now();
  if (now < next_chief_check_) return absl::OkStatus();
  next_chief_check_ = now + absl::Seconds(5);
  std::vector<Tensor> out;
  WEFT_RETURN_IF_ERROR(Diagnose(
      session->Run(StepOptions(), {}, {progress_->reads[0]}, {}, &out, nullptr),
      "reading the chief's step counter"));
  const int64_t steps = out.at(0).flat<int64_t>()[0];
  if (steps != chief_steps_) {
    chief_steps_ = steps;
    chief_moved_ = now;
    return absl::OkStatus();
  }
  if (now - chief_moved_ < o_.wait_for_chief) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat(
      task_.ToString(), ": the chief (/job:worker/task:0 at ",
      o_.where.cluster.Address({"worker", 0}).value_or("?"),
      ") has made no step for ", absl::FormatDuration(o_.wait_for_chief),
      " (its counter on ", ps_tasks_, " stays at ", steps,
      "): it died or hangs, and without it the job cannot save its final "
      "checkpoint, so this worker stops rather than report a job done. "
      "Start the chief again (it joins the running job, or restores the "
      "newest checkpoint), or raise --wait-for-chief-s"));
}

absl::Status Worker::WaitForChiefDone(Session* session) {
  const absl::Time start = absl::Now();
  absl::Time next_log = start + absl::Seconds(5);
  for (;;) {
    std::vector<Tensor> out;
    WEFT_RETURN_IF_ERROR(Diagnose(
        session->Run(StepOptions(), {}, {progress_->read_chief_done}, {}, &out,
                     nullptr),
        "reading whether the chief has finished"));
    if (out.at(0).flat<int64_t>()[0] >= o_.steps) return absl::OkStatus();
    const absl::Time now = absl::Now();
    if (now - start >= o_.wait_for_chief) {
      return absl::DeadlineExceededError(absl::StrCat(
          task_.ToString(), ": the global step reached ", o_.steps,
          ", but the chief (/job:worker/task:0 at ",
          o_.where.cluster.Address({"worker", 0}).value_or("?"),
          ") did not mark the job finished within ",
          absl::FormatDuration(o_.wait_for_chief),
          o_.checkpoint_dir.empty() ? "" : " (nor, so, its final checkpoint)",
          ": it died or hangs. The job is not done: start the chief again "
          "(it restores the newest checkpoint and finishes), or raise "
          "--wait-for-chief-s"));
    }
    if (now >= next_log) {
      Log(absl::StrCat("waiting for the chief (/job:worker/task:0) to finish "
                       "the job (its last steps",
                       o_.checkpoint_dir.empty() ? "" : ", its final checkpoint",
                       ")"));
      next_log = now + absl::Seconds(5);
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

absl::StatusOr<std::string> Worker::Behind(
    Session* session, std::pair<std::vector<int64_t>, absl::Time>* last) const {
  std::vector<Tensor> out;
  WEFT_RETURN_IF_ERROR(Diagnose(
      session->Run(StepOptions(), {}, progress_->reads, {}, &out, nullptr),
      "reading the workers' step counters"));
  std::vector<int64_t> now;
  for (const Tensor& t : out) {
    if (t.dtype() != DT_INT64 || t.NumElements() != 1) {
      return absl::InternalError("a worker step counter is not an int64 scalar");
    }
    now.push_back(t.flat<int64_t>()[0]);
  }
  const absl::Time at = absl::Now();
  std::string note = BehindNote(now, last->first, absl::ToDoubleSeconds(at - last->second));
  *last = {std::move(now), at};
  return note;
}

absl::Status Worker::InitRing(Session* session) const {
  std::vector<Tensor> none;
  WEFT_RETURN_IF_ERROR(WithContext(session->Run({}, {}, {"init"}, &none),
                                   absl::StrCat(task_.ToString(), " running 'init'")));
  std::string from = "initialised";
  if (task_.index == 0 && saver_.has_value()) {
    WEFT_ASSIGN_OR_RETURN(std::optional<std::string> latest,
                          LatestCheckpoint(o_.checkpoint_dir));
    if (latest.has_value()) {
      WEFT_RETURN_IF_ERROR(RestoreCheckpoint(session, *saver_, *latest));
      from = absl::StrCat("restored from ", *latest);
    }
  }
  WEFT_RETURN_IF_ERROR(Diagnose(
      session->Run(StepOptions(), {}, {}, {kBroadcastNode}, &none, nullptr),
      "taking the chief's variables (the ring's broadcast)"));
  Log(task_.index == 0
          ? absl::StrCat("variables ", from, " and sent to every worker of the ring")
          : "variables set to the chief's (/job:worker/task:0)");
  return absl::OkStatus();
}

absl::Status Worker::WaitForAnswers(const std::vector<TaskId>& tasks,
                                    const std::string& what,
                                    const std::string& remedy) const {
  const absl::Time give_up = absl::Now() + o_.wait_for_tasks;
  absl::Time next_log = absl::Now() + absl::Seconds(2);
  for (;;) {
    const std::vector<std::string> silent =
        UnansweringTasks(o_.where.cluster, tasks, o_.security, absl::Seconds(2));
    if (silent.empty()) return absl::OkStatus();
    const absl::Time now = absl::Now();
    if (now >= give_up) {
      return absl::UnavailableError(absl::StrCat(
          task_.ToString(), " waited ", absl::FormatDuration(o_.wait_for_tasks),
          " for ", what, ": not answering: [", absl::StrJoin(silent, "] ["),
          "]. ", remedy, ", or raise --wait-for-tasks-s"));
    }
    if (now >= next_log) {
      Log(absl::StrCat("waiting for ", what, ": [", absl::StrJoin(silent, "] ["), "]"));
      next_log = now + absl::Seconds(5);
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

absl::Status Worker::WaitForPsAgain(const absl::Status& lost) const {
  std::vector<TaskId> ps;
  for (int i : o_.where.cluster.TaskIndices("ps")) ps.push_back(TaskId{"ps", i});
  Log(absl::StrCat("a step failed (", lost.message(), "); waiting up to ",
                   absl::FormatDuration(o_.wait_for_tasks), " for ", ps_tasks_,
                   " to answer, then resuming from the newest checkpoint in ",
                   o_.checkpoint_dir));
  return WaitForAnswers(ps, "the ps tasks to come back",
                        absl::StrCat("Restart them (the job resumes from ",
                                     o_.checkpoint_dir, ")"));
}

absl::Status Worker::WaitForRing() const {
  std::vector<TaskId> peers;
  for (int i : o_.where.cluster.TaskIndices("worker")) {
    if (i != task_.index) peers.push_back(TaskId{"worker", i});
  }
  return WaitForAnswers(peers, "the other workers of the all-reduce ring",
                        "Start them");
}

absl::Status Worker::Diagnose(absl::Status s, const std::string& what) const {
  if (s.code() != absl::StatusCode::kDeadlineExceeded) {
    return WithContext(s, absl::StrCat(task_.ToString(), " ", what));
  }
  const absl::Time failed = absl::Now();
  const ClusterSpec& cluster = o_.where.cluster;
  std::vector<TaskId> others;
  for (const char* job : {"ps", "worker"}) {
    for (int i : cluster.TaskIndices(job)) {
      if (!(TaskId{job, i} == task_)) others.push_back(TaskId{job, i});
    }
  }
  const std::vector<std::string> silent =
      UnansweringTasks(cluster, others, o_.security, absl::Seconds(3));
  const std::string resume =
      o_.checkpoint_dir.empty()
          ? std::string()
          : absl::StrCat("; the job resumes from the newest checkpoint in ",
                         o_.checkpoint_dir);
  if (!silent.empty()) {
    return absl::UnavailableError(absl::StrCat(
        task_.ToString(), " ", what, " did not finish within ",
        absl::FormatDuration(o_.step_timeout),
        (choice_.mode == "between-sync"
             ? " (a synchronous step waits for every worker's gradients "
               "it aggregates)"
         : AveragesOverRing(choice_)
             ? " (an all-reduce step waits for every worker)"
             : ""),
        ": not answering: [", absl::StrJoin(silent, "] ["),
        "]. A task that does not answer has died or is cut off: restart it",
        resume, choice_.mode == "between-sync"
                    ? ", or train with backup workers (--replicas-to-aggregate "
                      "below the number of workers)"
                    : ""));
  }
  // Every task answers now; the counts from before the failure still say
  // whose gradients the step waited for (a worker paused and resumed).
  std::vector<std::string> stalled;
  for (const ProgressHistory::Stalled& w :
       history_.StalledAt(failed, o_.step_timeout / 2)) {
    const TaskId id{"worker", w.task};
    absl::StatusOr<std::string> address = cluster.Address(id);
    stalled.push_back(absl::StrCat(
        id.ToString(), " (", address.ok() ? *address : "no address", "): ",
        w.steps, " steps of gradients in, the most ", w.most,
        ", none in the ", absl::FormatDuration(absl::Trunc(w.quiet, absl::Milliseconds(100))),
        " before the step failed"));
  }
  if (!stalled.empty()) {
    return absl::DeadlineExceededError(absl::StrCat(
        task_.ToString(), " ", what, " did not finish within ",
        absl::FormatDuration(o_.step_timeout),
        " (a synchronous step waits for every worker's gradients it "
        "aggregates): it waited for [", absl::StrJoin(stalled, "] ["),
        "]. That task answers again now: it was paused, overloaded or cut off "
        "for a while; check it (its log, its host's load), train with backup "
        "workers (--replicas-to-aggregate below the number of workers), or "
        "raise --step-timeout-s",
        resume));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      task_.ToString(), " ", what, " did not finish within ",
      absl::FormatDuration(o_.step_timeout),
      ", though every task of the cluster answers: a worker may be slow or "
      "stuck; raise --step-timeout-s if steps take that long"));
}

absl::Status Worker::Run() {
  const ClusterSpec& cluster = o_.where.cluster;
  const bool sync = choice_.mode == "between-sync";
  // allreduce and hybrid: no ps, gradients averaged over a ring of the
  // workers; hybrid also splits each copy's layers over this task's devices.
  const bool ring = AveragesOverRing(choice_);
  const bool hybrid = choice_.mode == "hybrid";
  if (task_.job != "worker") {
    return absl::InvalidArgumentError(absl::StrCat(
        "weft train --mode ", choice_.mode, " runs a worker task, not ",
        task_.ToString(), "; start ps tasks with 'weft server --job ps'"));
  }
  const std::vector<int> ps = cluster.TaskIndices("ps");
  if (ps.empty() && !ring) {
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
  const std::string worker_device = absl::StrCat("/job:worker/task:", task_.index);
  if (ring) {
    ps_tasks_ = worker_device;  // where "the variables" are, for the logs
    if (!ps.empty()) {
      Log(absl::StrCat("--mode ", choice_.mode, " does not use the ps tasks of the "
                       "cluster (", absl::StrJoin(ps_names, ", "), ")"));
    }
  }

  // This worker's copy of the model, placed for the cluster.
  ModelChoice choice = choice_;
  choice.total_replicas = workers;
  if (sync && choice.replicas_to_aggregate > workers) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--replicas-to-aggregate ", choice.replicas_to_aggregate,
        " is more than the ", workers, " workers of the cluster"));
  }
  const int to_aggregate =
      choice.replicas_to_aggregate > 0 ? choice.replicas_to_aggregate : workers;
  if (ring) {
    // The ring: every worker task, in index order.
    const std::vector<int> all = cluster.TaskIndices("worker");
    for (size_t k = 0; k < all.size(); ++k) {
      choice.group_tasks.push_back(
          absl::StrCat("/job:worker/replica:0/task:", all[k]));
      if (all[k] == task_.index) choice.rank = static_cast<int>(k);
    }
  }
  int cpus = 1;  // of this task's server
  if (hybrid) {
    for (std::string& d : choice.options.layer_devices) {
      const DeviceSpec spec = ParseDeviceSpec(d).value_or(DeviceSpec());
      if (spec.type == "CPU" && spec.id) cpus = std::max(cpus, *spec.id + 1);
      d = worker_device + d;  // "/job:worker/task:I/device:CPU:1"
    }
  }
  WEFT_ASSIGN_OR_RETURN(tensorflow::GraphDef graph, BuildModelGraph(choice));
  if (ring) {
    for (tensorflow::NodeDef& n : *graph.mutable_node()) {
      // The whole model on this worker (hybrid: its layers where they are).
      if (n.device().empty()) n.set_device(worker_device);
    }
    if (!o_.checkpoint_dir.empty()) {
      WEFT_ASSIGN_OR_RETURN(saver_, AddSaver(&graph));  // this copy, whole
    }
    AllReduceOptions group;
    group.group_tasks = choice.group_tasks;
    group.rank = choice.rank;
    WEFT_RETURN_IF_ERROR(AddBroadcastFromRankZero(group, &graph));
  } else {
    ReplicaDeviceSetterOptions setter;
    setter.ps_tasks = static_cast<int>(ps.size());
    setter.worker_device = worker_device;
    setter.strategy = o_.strategy;
    WEFT_RETURN_IF_ERROR(ApplyReplicaDeviceSetter(setter, &graph));
    if (!o_.checkpoint_dir.empty()) {
      WEFT_ASSIGN_OR_RETURN(saver_, AddSaver(&graph, kLocalJob));
    }
    ready_checks_ = AddReadinessChecks(&graph);
    const std::vector<int> tasks = cluster.TaskIndices("worker");
    // Sync: a worker's count moves once its gradients are in (the
    // control inputs of the token dequeue), so a step that times out can
    // tell whose gradients it waited for.
    std::vector<std::string> after;
    if (sync) {
      for (const tensorflow::NodeDef& n : graph.node()) {
        if (n.name() != "sync_token_q_Dequeue") continue;
        for (const std::string& in : n.input()) {
          if (absl::StartsWith(in, "^")) after.push_back(in);
        }
      }
      if (after.empty()) {
        return absl::InternalError("the sync graph has no 'sync_token_q_Dequeue' "
                                   "waiting for the gradients");
      }
    }
    progress_ = AddWorkerProgress(&graph, *std::max_element(tasks.begin(), tasks.end()) + 1,
                                  absl::StrCat("/job:ps/task:", ps.front()), after);
  }
  const std::string global_step = GlobalStepRead(graph);
  if (global_step.empty()) {
    return absl::InternalError("the model graph has no global_step read");
  }
  FeedOptions feed = o_.feeds;
  feed.shards = workers;
  feed.shard = task_.index;
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<StepFeeds> feeds,
                        choice_.forward != nullptr ? ModelFeeds(choice_, feed)
                                                   : DatasetFeeds(graph, "the model", feed));
  struct {
    int64_t batch;
    bool has_accuracy = false;
  } info = {feeds->batch()};
  for (const tensorflow::NodeDef& n : graph.node()) {
    info.has_accuracy |= n.name() == "accuracy";
  }

  // This task's server, as `weft server` would run it.
  ServerOptions server_options;
  server_options.cluster = cluster;
  server_options.task = task_;
  server_options.security = o_.security;
  server_options.local_socket = o_.local_socket;
  server_options.wait_for_tasks = o_.wait_for_tasks;
  server_options.num_cpus = cpus;
  if (!o_.checkpoint_dir.empty()) {
    // The chief's task merges the shards there (and, all-reduce, writes
    // them): the job's own directory is the one place its graphs may write.
    WEFT_RETURN_IF_ERROR(
        WithContext(CreateDirectories(o_.checkpoint_dir), "--checkpoint-dir"));
    server_options.file_roots.push_back(o_.checkpoint_dir);
  }
  server_options.log = [this](absl::string_view line) { Log(std::string(line)); };
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<GrpcServer> server,
                        GrpcServer::Start(server_options));
  Log(absl::StrCat("serving on ", server->address(), "; variables on ",
                   ps_tasks_));

  SessionOptions session_options;
  if (!ring) session_options.config.add_device_filters("/job:ps");
  session_options.config.add_device_filters(server->task_name());
  session_options.config.set_allow_soft_placement(true);
  std::unique_ptr<Session> session;
  // A session on this task's master, in-process (no loopback RPC per
  // step), its variables ready (initialised, restored, or the chief's): at
  // the start, and again after a ps restart.
  auto connect = [&]() -> absl::Status {
    if (session != nullptr) session->Close().IgnoreError();
    session = NewClientSession(server->master(), session_options);
    WEFT_RETURN_IF_ERROR(session->Create(graph));
    if (ring) {
      WEFT_RETURN_IF_ERROR(WaitForRing());
      return InitRing(session.get());
    }
    return InitOrWait(session.get());
  };
  WEFT_RETURN_IF_ERROR(connect());
  // Sync: the chief sets the accumulators' step and its own local step,
  // and queues the first tokens; every other worker sets its local step
  // (sync_replicas.h). At the start, and again after a ps restart.
  auto sync_init = [&]() -> absl::Status {
    if (!sync) return absl::OkStatus();
    std::vector<Tensor> none;
    const char* init = task_.index == 0 ? kSyncChiefInit : kSyncLocalStepInit;
    WEFT_RETURN_IF_ERROR(
        Diagnose(session->Run(StepOptions(), {}, {}, {init}, &none, nullptr),
                 absl::StrCat("running '", init, "'")));
    if (task_.index == 0) {
      WEFT_RETURN_IF_ERROR(Diagnose(
          session->Run(StepOptions(), {}, {}, {kSyncInitTokens}, &none, nullptr),
          absl::StrCat("running '", kSyncInitTokens, "'")));
    }
    return absl::OkStatus();
  };
  WEFT_RETURN_IF_ERROR(sync_init());

  std::printf(
      "training %s between-graph (%s) as %s of %d workers on %s, batch %lld, "
      "until global step %lld\n",
      DescribeModel(choice_).c_str(),
      sync        ? absl::StrCat("sync, ", to_aggregate, " of ", workers,
                                 " gradients per step").c_str()
      : ring ? absl::StrCat(choice_.mode, ": gradients averaged over a ring "
                                 "of ", workers, " workers").c_str()
                  : "async",
      task_.ToString().c_str(), workers,
      feeds->Describe().c_str(), static_cast<long long>(info.batch),
      static_cast<long long>(o_.steps));
  std::fflush(stdout);
  // Sync: the token this worker dequeued is the global step after the
  // update its gradients went into.
  std::vector<std::string> fetches = {
      "loss", sync ? std::string("sync_token_q_Dequeue:0") : global_step};
  if (info.has_accuracy) fetches.push_back("accuracy");
  Progress progress(o_.steps, o_.log_every > 0
                                  ? o_.log_every
                                  : std::max<int64_t>(1, o_.steps / 10));
  std::unique_ptr<EventWriter> events;
  if (!o_.logdir.empty() && task_.index == 0) {
    WEFT_ASSIGN_OR_RETURN(events, EventWriter::Create(o_.logdir));
    Log(absl::StrCat("TensorBoard events: ", events->path()));
  }
  std::unique_ptr<MetricsLog> metrics;
  if (!o_.metrics_out.empty()) {
    WEFT_ASSIGN_OR_RETURN(metrics, MetricsLog::Create(o_.metrics_out));
  }
  const absl::Time start = absl::Now();
  int64_t local_steps = 0, step = 0, saved_at = -1, next_save = -1;
  const bool saves = saver_.has_value() && task_.index == 0;
  auto save = [&]() -> absl::Status {
    WEFT_ASSIGN_OR_RETURN(std::string prefix,
                          SaveCheckpoint(session.get(), *saver_, o_.checkpoint_dir,
                                         step, "global_step"));
    Log(absl::StrCat("saved ", prefix, " (", saver_->num_shards, " shard",
                     saver_->num_shards == 1 ? "" : "s", ")"));
    saved_at = step;
    return absl::OkStatus();
  };
  // Sync, on the chief: the update loop (TensorFlow's chief queue runner),
  // until the global step reaches the end.
  absl::Mutex sync_mu;
  absl::Status sync_status;
  std::thread updater;
  // Sync, on every worker: the workers' counts, read about once a second
  // into history_, for naming whom a timed-out step waited for.
  std::atomic<bool> stop_watch{false};
  std::thread watcher;
  // Started at the start, and again after a ps restart (stopped first).
  auto start_updater = [&] {
    if (sync && progress_.has_value()) {
      stop_watch = false;
      watcher = std::thread([&] {
        tensorflow::RunOptions run;
        run.set_timeout_in_ms(2000);
        const absl::Duration every =
            std::min(absl::Seconds(1), o_.step_timeout / 4);
        std::vector<Tensor> got;
        while (!stop_watch) {
          const absl::Time next = absl::Now() + every;
          if (session->Run(run, {}, progress_->reads, {}, &got, nullptr).ok()) {
            std::vector<int64_t> counts;
            for (const Tensor& t : got) {
              if (t.dtype() != DT_INT64 || t.NumElements() != 1) break;
              counts.push_back(t.flat<int64_t>()[0]);
            }
            if (counts.size() == progress_->reads.size()) {
              history_.Record(std::move(counts), absl::Now());
            }
          }
          while (!stop_watch && absl::Now() < next) {
            absl::SleepFor(absl::Milliseconds(50));
          }
        }
      });
    }
    if (!sync || task_.index != 0) return;
    {
      absl::MutexLock lock(&sync_mu);
      sync_status = absl::OkStatus();
    }
    updater = std::thread([&] {
      std::vector<Tensor> got;
      for (;;) {
        absl::Status s = session->Run(StepOptions(), {},
                                      {"sync_op_tokens/global_step:0"},
                                      {kSyncOp}, &got, nullptr);
        if (s.ok() && (got.size() != 1 || got[0].dtype() != DT_INT64)) {
          s = absl::InternalError("sync_op's global step is not an int64");
        }
        if (!s.ok()) {
          s = Diagnose(s, "applying the aggregated gradients (sync_op)");
          absl::MutexLock lock(&sync_mu);
          sync_status = s;
          return;
        }
        if (got[0].flat<int64_t>()[0] >= o_.steps) return;
      }
    });
  };
  start_updater();
  // Joined on every way out (an early error return included).
  absl::Cleanup join_updater = [&] {
    stop_watch = true;
    if (watcher.joinable()) watcher.join();
    if (updater.joinable()) updater.join();
  };
  auto stop_updater = [&]() -> absl::Status {
    stop_watch = true;
    if (watcher.joinable()) watcher.join();  // its reads have a deadline
    if (!updater.joinable()) return absl::OkStatus();
    updater.join();  // its step has a deadline too
    absl::MutexLock lock(&sync_mu);
    return sync_status;
  };
  // Every worker counts its steps on the ps; the chief's progress lines
  // name the workers that fall behind (at most one reading a second).
  std::vector<std::string> targets = {"train_op"};
  if (progress_.has_value()) targets.push_back(progress_->bump[task_.index]);
  std::pair<std::vector<int64_t>, absl::Time> counts;
  std::string behind;
  absl::Time next_behind = absl::InfinitePast();
  int recoveries = 0;
  double loss = 0, accuracy = 0;
  std::deque<std::pair<double, double>> last;  // the last 10 steps' numbers
  std::vector<Tensor> out;
  while (step < o_.steps) {
    WEFT_ASSIGN_OR_RETURN(auto step_feeds, feeds->Next());
    const absl::Time step_start = absl::Now();
    // hybrid: the first step says which devices of this task ran it.
    const bool report_devices = hybrid && local_steps == 0;
    tensorflow::RunOptions run = StepOptions();
    run.set_output_partition_graphs(report_devices);
    tensorflow::RunMetadata metadata;
    absl::Status s = session->Run(
        run, step_feeds, fetches, targets,
        &out, report_devices ? &metadata : nullptr);
    if (s.ok() && report_devices) {
      std::map<std::string, int> nodes;
      for (const tensorflow::GraphDef& g : metadata.partition_graphs()) {
        for (const tensorflow::NodeDef& n : g.node()) ++nodes[n.device()];
      }
      std::vector<std::string> parts;
      for (const auto& [device, count] : nodes) {
        parts.push_back(absl::StrCat(device, " (", count, " nodes)"));
      }
      Log(absl::StrCat("a step runs on ", absl::StrJoin(parts, ", ")));
    }
    if (!s.ok() && recoveries < kMaxRecoveries && CanRecover(s)) {
      // With checkpoints: a ps that went away and comes back (empty) is
      // waited for, and the chief restores the newest checkpoint there.
      // Sync: the chief's update loop failed with it; it starts again, and
      // the accumulators, local steps and tokens are set up anew.
      ++recoveries;
      absl::Status updater_status = stop_updater();
      if (!updater_status.ok() && !CanRecover(updater_status)) {
        return updater_status;
      }
      WEFT_RETURN_IF_ERROR(WaitForPsAgain(s));
      WEFT_RETURN_IF_ERROR(connect());
      WEFT_RETURN_IF_ERROR(sync_init());
      start_updater();
      std::vector<Tensor> now;
      WEFT_RETURN_IF_ERROR(Diagnose(
          session->Run(StepOptions(), {}, {global_step}, {}, &now, nullptr),
          "reading the global step after reconnecting"));
      step = now.at(0).flat<int64_t>()[0];
      next_save = -1;
      Log(absl::StrCat("training again from global step ", step));
      continue;
    }
    if (!s.ok()) {
      s = Diagnose(s, absl::StrCat("local step ", local_steps + 1));
      absl::Status updater_status = stop_updater();
      // The update loop's error explains more when it failed first.
      return updater_status.ok() ? s : updater_status;
    }
    ++local_steps;
    WEFT_ASSIGN_OR_RETURN(loss, ScalarMetric(out[0], "loss"));
    if (o_.check_numerics && !std::isfinite(loss)) {
      absl::Status s = NonFiniteLoss(session.get(), graph, loss,
                                     out[1].NumElements() == 1 && out[1].dtype() == DT_INT64
                                         ? out[1].flat<int64_t>()[0]
                                         : step,
                                     local_steps);
      absl::Status updater_status = stop_updater();
      return updater_status.ok() ? s : updater_status;
    }
    if (out[1].dtype() != DT_INT64 || out[1].NumElements() != 1) {
      return absl::InternalError("global_step is not an int64 scalar");
    }
    // Async: the value read in this step, before or after this step's
    // increment. Sync: the step after this one's update.
    step = std::max(step, out[1].flat<int64_t>()[0] + (sync ? 0 : 1));
    if (info.has_accuracy) {
      WEFT_ASSIGN_OR_RETURN(accuracy, ScalarMetric(out[2], "accuracy"));
    }
    last.emplace_back(loss, accuracy);
    if (last.size() > 10) last.pop_front();
    const double secs = absl::ToDoubleSeconds(absl::Now() - start);
    const double rate = secs > 0 ? local_steps * info.batch / secs : 0.0;
    const int64_t shown = std::min(step, o_.steps);
    if (task_.index == 0 && progress_.has_value() && progress.Prints(shown) &&
        absl::Now() >= next_behind) {
      WEFT_ASSIGN_OR_RETURN(behind, Behind(session.get(), &counts));
      next_behind = absl::Now() + absl::Seconds(1);  // a terminal: every step
    }
    progress.Step(shown, loss, accuracy, info.has_accuracy, rate, behind);
    if (metrics != nullptr) {
      const absl::Time now = absl::Now();
      metrics->Write(step, absl::ToDoubleSeconds(now - start),
                     absl::ToDoubleSeconds(now - step_start), loss,
                     info.has_accuracy, accuracy, local_steps * info.batch);
    }
    if (events != nullptr) {
      WEFT_RETURN_IF_ERROR(WriteStepScalars(*events, step, loss, info.has_accuracy,
                                            accuracy, rate));
    }
    if (task_.index != 0 && progress_.has_value()) {
      absl::Status chief = WatchChief(session.get());
      if (!chief.ok()) {
        absl::Status updater_status = stop_updater();
        return updater_status.ok() ? chief : updater_status;
      }
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
  WEFT_RETURN_IF_ERROR(stop_updater());
  if (sync && task_.index == 0) {
    // Tokens for the workers still waiting on one (a backup whose
    // gradient came too late), so that they see the end.
    std::vector<Tensor> none;
    WEFT_RETURN_IF_ERROR(Diagnose(
        session->Run(StepOptions(), {}, {}, {kSyncEndTokens}, &none, nullptr),
        absl::StrCat("running '", kSyncEndTokens, "'")));
  }
  if (saves && saved_at != step) WEFT_RETURN_IF_ERROR(save());
  if (progress_.has_value()) {
    // No worker reports a job done that its chief has not finished.
    if (task_.index == 0) {
      std::vector<Tensor> none;
      WEFT_RETURN_IF_ERROR(Diagnose(
          session->Run(StepOptions(),
                       {{progress_->chief_done_step, Tensor::Scalar<int64_t>(o_.steps)}},
                       {}, {progress_->chief_done}, &none, nullptr),
          "marking the job finished"));
    } else {
      WEFT_RETURN_IF_ERROR(WaitForChiefDone(session.get()));
    }
  }
  const double secs = absl::ToDoubleSeconds(absl::Now() - start);
  loss = accuracy = 0;
  for (const auto& [l, a] : last) {
    loss += l / last.size();
    accuracy += a / last.size();
  }
  // Sync: a backup worker may compute more than one gradient per global
  // step (the tokens of a dead or slow worker), or fewer.
  std::printf(
      "done: %s %s %lld %s the %lld global steps; final loss %.4f%s (means "
      "of its last %zu steps)  %.0f examples/s on this worker  wall time "
      "%.2fs\n",
      task_.ToString().c_str(), sync ? "computed" : "ran",
      static_cast<long long>(local_steps),
      sync ? "gradients for" : "of", static_cast<long long>(o_.steps), loss,
      info.has_accuracy ? absl::StrFormat("  accuracy %.3f", accuracy).c_str()
                        : "",
      last.size(), secs > 0 ? local_steps * info.batch / secs : 0.0, secs);
  std::fflush(stdout);
  session->Close().IgnoreError();
  session.reset();
  if (ring && !server->WaitForCollectivesClaimed(o_.step_timeout)) {
    Log("the next worker of the ring did not collect this worker's last "
        "all-reduce chunks; it will report the step as failed");
  }
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
