// What the pieces of one between-graph worker (trainer.h) share: its
// options, its task, and what it learned of the cluster. Internal to
// distributed/training.
//
// Thread safety: everything but `history` is set before training starts
// and read-only afterwards; `history` is thread-safe.
#ifndef WEFT_DISTRIBUTED_TRAINING_WORKER_CONTEXT_H_
#define WEFT_DISTRIBUTED_TRAINING_WORKER_CONTEXT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "distributed/training/trainer.h"
#include "distributed/training/worker_progress.h"
#include "proto/config.pb.h"

namespace weft {

struct WorkerContext {
  explicit WorkerContext(const TrainerOptions& options)
      : o(options),
        task(options.task),
        sync(options.mode == ReplicationMode::kBetweenSync),
        ring(options.mode == ReplicationMode::kAllReduce ||
             options.mode == ReplicationMode::kHybrid),
        mode(ReplicationModeName(options.mode)) {}

  void Log(absl::string_view line) const {
    if (o.log) o.log(line);
  }
  bool chief() const { return task.index == 0; }
  // A step's options: its deadline.
  tensorflow::RunOptions StepOptions() const {
    tensorflow::RunOptions r;
    r.set_timeout_in_ms(absl::ToInt64Milliseconds(o.step_timeout));
    return r;
  }

  const TrainerOptions& o;
  const TaskId task;
  const bool sync;  // kBetweenSync
  const bool ring;  // kAllReduce or kHybrid: no ps
  const std::string mode;  // its --mode name
  // Where the variables are, for the logs: "/job:ps/task:0 (127.0.0.1:2222),
  // ..." (a ring: this worker).
  std::string ps_tasks;
  ProgressHistory history;  // sync: the workers' counts over time
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TRAINING_WORKER_CONTEXT_H_
