// How a between-graph worker (trainer.h) tells a dead task from a slow
// step, and waits for tasks to come back: the errors of failed steps
// name the tasks that do not answer; after a ps task restarts, the worker
// waits for it and resumes (ps recovery); an all-reduce worker waits for
// its ring. Internal to distributed/training; every call probes the
// cluster over RPC (cluster_probe.h) and blocks for at most its deadline.
#ifndef WEFT_DISTRIBUTED_TRAINING_TASK_HEALTH_H_
#define WEFT_DISTRIBUTED_TRAINING_TASK_HEALTH_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "distributed/cluster_spec.h"
#include "distributed/training/worker_context.h"

namespace weft {

// The ps restarts one run waits out and resumes from.
inline constexpr int kMaxRecoveries = 10;

// Whether a failed step `s` is one the worker recovers from: between-graph
// training with a checkpoint dir, a task that stopped answering.
bool CanRecover(const WorkerContext& w, const absl::Status& s);

// A step that failed (`s`, from running `what`): when it ran out of time,
// says which of the other tasks do not answer (or, sync, whose gradients
// it waited for), and what to do; otherwise `s` naming the task and `what`.
absl::Status Diagnose(const WorkerContext& w, absl::Status s,
                      const std::string& what);

// Until every one of `tasks` answers, for at most wait_for_tasks, logging
// what it waits for (`what`); the error says `remedy`.
absl::Status WaitForAnswers(const WorkerContext& w,
                            const std::vector<TaskId>& tasks,
                            const std::string& what, const std::string& remedy);

// After `lost` (a failed step): until every ps task answers again.
absl::Status WaitForPsAgain(const WorkerContext& w, const absl::Status& lost);

// allreduce: until every other worker of the ring answers.
absl::Status WaitForRing(const WorkerContext& w);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TRAINING_TASK_HEALTH_H_
