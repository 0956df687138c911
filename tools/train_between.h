// weft train --mode between-async|between-sync|allreduce: between-graph
// replication as TensorFlow 1.x jobs ran it, and its all-reduce variant. This process is one worker task of the cluster: it serves
// that task (MasterService and WorkerService, as `weft server` does), builds
// its own copy of the model, places it with the replica device setter
// (variables over the ps tasks, the rest on this task), and trains through
// its own master on its own shard of the data (example i belongs to worker
// i mod W). Every worker applies its gradients to the ps variables on its
// own (asynchronous, Hogwild-style, TensorFlow's default), or, with
// between-sync, into per-variable accumulators on the ps from which the
// chief applies the mean of --replicas-to-aggregate gradients once per step
// (graph/builder/sync_replicas.h; the chief runs the update loop in a
// thread of its own). With allreduce there is no ps: every variable lives
// on this worker; each worker waits until every worker of the ring
// answers, initialises its copy, and takes the chief's (which the chief
// restored from --checkpoint-dir where there is one) through the ring's
// broadcast; then it averages its gradients with the others' each step
// (graph/builder/allreduce.h);
// before its server stops it lets its successor collect the last chunks
// it sent. Every step has a deadline (--step-timeout-s); a step
// that misses it fails with the tasks that do not answer named (a dead
// worker, a dead chief), never a silent wait. With backup workers (more
// workers than gradients aggregated) a dead worker does not stop the job.
//
// The chief (worker task 0) initialises the variables unless they already
// are (a restarted chief joins the running job); every other worker waits
// until they are, logging every few seconds what it waits for, and gives up
// after --wait-for-chief-s naming the chief and the ps tasks. Training
// stops when the shared global step reaches --steps: the workers' steps
// together make up --steps. With --checkpoint-dir the chief restores the
// newest checkpoint there rather than initialising (a restarted cluster
// goes on from the saved global step) and saves every --checkpoint-every
// global steps and at the end. Async with --checkpoint-dir, a ps task that
// stops answering is waited for (--wait-for-tasks-s) rather than ending
// the run: once it answers again, every worker opens a new session and the
// chief restores the newest checkpoint onto it (at most 10 times a run).
// No worker reports success for a job its chief did not finish: the
// others watch the chief's step counter on the ps and stop, naming the
// chief, when it has not moved for --wait-for-chief-s; at the end they wait
// (as long) for the chief's mark that the last step and the final
// checkpoint are done. A step whose loss is not finite stops the worker,
// naming the variables that hold nan or inf (unless !check_numerics).
#ifndef WEFT_TOOLS_TRAIN_BETWEEN_H_
#define WEFT_TOOLS_TRAIN_BETWEEN_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "distributed/rpc/grpc_security.h"
#include "graph/builder/device_setter.h"
#include "tools/cluster_flags.h"
#include "tools/model_flags.h"
#include "tools/step_feeds.h"

namespace weft {

struct BetweenGraphOptions {
  ClusterAndTask where;  // a task of the "worker" job
  PsStrategy strategy = PsStrategy::kRoundRobin;
  int64_t steps = 100;   // global steps, all workers together
  FeedOptions feeds;  // --data or --input; shards and shard are set here
  int64_t log_every = 0;  // 0: about ten lines per run
  absl::Duration wait_for_chief = absl::Minutes(2);
  absl::Duration wait_for_tasks = absl::Minutes(2);
  absl::Duration step_timeout = absl::Seconds(60);
  std::shared_ptr<const Security> security = Security::None();
  // The task's server also listens on its local socket
  // (distributed/rpc/local_socket.h); off: its peers reach it over TCP.
  bool local_socket = true;
  // The chief saves there (tools/checkpoint_dir.h) every checkpoint_every
  // global steps (0: only at the end) and restores the newest checkpoint
  // instead of initialising when the variables are not initialised yet.
  std::string checkpoint_dir;
  std::string logdir;  // the chief writes TensorBoard events there
  std::string metrics_out;  // this worker's MetricsLog (train_common.h)
  int64_t checkpoint_every = 0;
  // Stop at the first step whose loss is not finite, naming the variables
  // that hold non-finite values (TensorFlow's NanTensorHook): a rogue
  // client or a diverging update would otherwise train on nan for good.
  bool check_numerics = true;
};

// Runs this worker until the global step reaches options.steps; the exit
// code of the command (errors are printed, naming the task at fault).
int TrainBetweenGraph(const ModelChoice& choice,
                      const BetweenGraphOptions& options);

}  // namespace weft

#endif  // WEFT_TOOLS_TRAIN_BETWEEN_H_
