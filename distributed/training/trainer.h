// The between-graph trainer: one worker task of a cluster training its own
// copy of a model, as TensorFlow 1.x jobs ran between-graph replication,
// and its all-reduce variants. `weft train --mode between-async|
// between-sync|allreduce|hybrid` is flag parsing over it
// (tools/train_command.cc).
//
// What a call does. It serves this task (MasterService and WorkerService,
// as `weft server` does), builds its own copy of the model, places it with
// the replica device setter (variables over the ps tasks, the rest on this
// task), and trains through its own master on its own shard of the data
// (example i belongs to worker i mod W). Every worker applies its
// gradients to the ps variables on its own (kBetweenAsync, Hogwild-style,
// TensorFlow's default), or, with kBetweenSync, into per-variable
// accumulators on the ps from which the chief applies the mean of
// replicas_to_aggregate gradients once per step (graph/builder/
// sync_replicas.h; the chief runs the update loop in a thread of its own).
// With kAllReduce there is no ps: every variable lives on this worker;
// each worker waits until every worker of the ring answers, initialises
// its copy, and takes the chief's (which the chief restored from
// checkpoint_dir where there is one) through the ring's broadcast; then it
// averages its gradients with the others' each step (graph/builder/
// allreduce.h); before its server stops it lets its successor collect the
// last chunks it sent. kHybrid is kAllReduce with each copy's layers split
// over this task's devices (model.options.layer_devices). Every step has a
// deadline (step_timeout); a step that misses it fails with the tasks that
// do not answer named (a dead worker, a dead chief), never a silent wait.
// With backup workers (more workers than gradients aggregated) a dead
// worker does not stop the job.
//
// The chief (worker task 0) initialises the variables unless they already
// are (a restarted chief joins the running job); every other worker waits
// until they are, logging every few seconds what it waits for, and gives
// up after wait_for_chief naming the chief and the ps tasks. Training stops
// when the shared global step reaches `steps`: the workers' steps together
// make up `steps`. With checkpoint_dir the chief restores the newest
// checkpoint there rather than initialising (a restarted cluster goes on
// from the saved global step) and saves every checkpoint_every global
// steps and at the end (checkpoint_dir.h). Between-graph with
// checkpoint_dir, a ps task that stops answering is waited for
// (wait_for_tasks) rather than ending the run: once it answers again,
// every worker opens a new session and the chief restores the newest
// checkpoint onto it (at most 10 times a run). No worker reports success
// for a job its chief did not finish: the others watch the chief's step
// counter on the ps (worker_progress.h) and stop, naming the chief, when it
// has not moved for wait_for_chief; at the end they wait (as long) for the
// chief's mark that the last step and the final checkpoint are done. A
// step whose loss is not finite stops the worker, naming the variables
// that hold nan or inf (unless !check_numerics).
//
// Ownership and threads. TrainBetweenGraph blocks until the job is over or
// this worker fails; it owns everything it starts (the task's server, the
// session, the sync update and watch threads) and stops all of it before
// it returns, on success and on error. It calls the sinks and
// options.feeds from its own thread only, except `log`, which the task's
// server may also call from its threads (so it must be thread-safe). The
// options are read, never kept: they may go once the call returns.
//
// What a failed call leaves behind. The error (an absl::Status) names this
// task, the task or address at fault and what to do next, as the messages
// of `weft train` do. The variables on the ps tasks keep whatever the job
// had trained; checkpoint_dir keeps every checkpoint the chief completed
// (never a partial one), from which a restarted job resumes; the metrics
// file holds the steps finished so far.
#ifndef WEFT_DISTRIBUTED_TRAINING_TRAINER_H_
#define WEFT_DISTRIBUTED_TRAINING_TRAINER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "distributed/cluster_spec.h"
#include "distributed/rpc/grpc_security.h"
#include "distributed/training/step_feeds.h"
#include "distributed/training/training_model.h"
#include "graph/builder/device_setter.h"
#include "proto/graph.pb.h"

namespace weft {

enum class ReplicationMode {
  kBetweenAsync,  // variables on the ps, every worker updates them alone
  kBetweenSync,   // variables on the ps, gradients aggregated per step
  kAllReduce,     // no ps: every worker a whole copy, gradients averaged
  kHybrid,        // kAllReduce, each copy's layers over this task's devices
};

// "between-async", "between-sync", "allreduce", "hybrid" (--mode).
absl::string_view ReplicationModeName(ReplicationMode mode);
// The mode of a --mode name; nullopt for any other (single, in-graph, ...).
std::optional<ReplicationMode> ParseReplicationMode(absl::string_view name);

// Makes this worker's step feeds once its graph is built: `shards` workers
// train, this one on shard `shard` (example i belongs to worker i mod
// shards).
using StepFeedsFactory =
    std::function<absl::StatusOr<std::unique_ptr<StepFeeds>>(
        const tensorflow::GraphDef& graph, int shards, int shard)>;

// One line of output, without its newline.
using LineSink = std::function<void(absl::string_view line)>;

struct TrainerOptions {
  // The cluster and this process's task: a task of its "worker" job. Task
  // 0 of the worker job is the chief.
  ClusterSpec cluster;
  TaskId task;
  ReplicationMode mode = ReplicationMode::kBetweenAsync;
  // What to train. Its `mode`, `total_replicas`, `replicas_to_aggregate`,
  // `group_tasks` and `rank` are the trainer's to set (from `mode`, the
  // cluster and replicas_to_aggregate below); the rest is the caller's.
  TrainingModel model;
  // kBetweenSync: gradients aggregated per step, at most the number of
  // workers (0: every worker's). Fewer: the others are backups.
  int replicas_to_aggregate = 0;
  // How the variables spread over the ps tasks.
  PsStrategy strategy = PsStrategy::kRoundRobin;
  int64_t steps = 100;  // global steps, all workers together
  // This worker's data (required).
  StepFeedsFactory feeds;
  // A progress line every log_every global steps (0: about ten per run),
  // or every step with progress_every_step (a terminal rewrites its line).
  int64_t log_every = 0;
  bool progress_every_step = false;
  // How long another worker waits for the chief (to initialise, to move,
  // to finish); how long anyone waits for tasks that do not answer (the
  // ps after a failure, the ring at the start); a step's deadline.
  absl::Duration wait_for_chief = absl::Minutes(2);
  absl::Duration wait_for_tasks = absl::Minutes(2);
  absl::Duration step_timeout = absl::Seconds(60);
  std::shared_ptr<const Security> security = Security::None();
  // The task's server also listens on its local socket
  // (distributed/rpc/local_socket.h); off: its peers reach it over TCP.
  bool local_socket = true;
  // The chief saves there (checkpoint_dir.h) every checkpoint_every global
  // steps (0: only at the end) and restores the newest checkpoint instead
  // of initialising when the variables are not initialised yet. Empty:
  // no checkpoints (and no waiting for a ps that restarts).
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  std::string logdir;        // the chief writes TensorBoard events there
  std::string metrics_path;  // this worker's MetricsLog (step_metrics.h)
  // Stop at the first step whose loss is not finite, naming the variables
  // that hold non-finite values (TensorFlow's NanTensorHook): a rogue
  // client or a diverging update would otherwise train on nan for good.
  bool check_numerics = true;
  // The progress lines: "training ...", "step ...", "done: ...". Null:
  // dropped.
  LineSink progress;
  // What the worker does and waits for ("waiting for the chief ...",
  // "saved ...", the server's own lines); `weft train` prefixes them with
  // its task. Called from several threads. Null: dropped.
  LineSink log;
};

// INVALID_ARGUMENT naming what is wrong with `options` before anything
// starts: a task outside the worker job or not in the cluster, no ps job
// for a between-graph mode, more replicas to aggregate than workers, no
// feeds, no steps.
absl::Status ValidateTrainerOptions(const TrainerOptions& options);

// Runs this worker until the global step reaches options.steps (see
// above). OK: this worker's share is done and the chief has marked the job
// finished.
absl::Status TrainBetweenGraph(const TrainerOptions& options);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TRAINING_TRAINER_H_
