// Which workers of a between-graph job are behind: a step counter per
// worker task on the first ps task, bumped by the worker's own train step
// and read by the chief for its progress line.
//
// The counters are resource variables (int64 scalars, "weft_progress/
// worker_I") added after the readiness checks and the saver, so workers do
// not wait for them and checkpoints leave them out. The chief runs `init`
// before it initialises or restores the model, which orders it before any
// other worker's first step (they wait for the model). Every step of
// worker I runs `bump[I]` beside the train op: one AssignAddVariableOp on
// the ps, in a partition the step has anyway, so no tensor crosses for it
// (in sync training it waits for the worker's gradients to be in the
// accumulators: control edges only).
// The other workers watch the chief's counter, and at the end wait for
// its `chief_done` mark, so that a dead chief is named rather than the job
// reported done.
#ifndef WEFT_DISTRIBUTED_TRAINING_WORKER_PROGRESS_H_
#define WEFT_DISTRIBUTED_TRAINING_WORKER_PROGRESS_H_

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/graph.pb.h"

namespace weft {

struct WorkerProgressNodes {
  std::string init;                // sets every counter to 0
  std::vector<std::string> bump;   // per worker task index: adds 1
  std::vector<std::string> reads;  // per worker task index: the count
  // The chief runs `chief_done`, feeding the job's last global step to
  // `chief_done_step`, once the job is over (that step reached, the final
  // checkpoint written); `read_chief_done` reads that step back (0 before).
  std::string chief_done;
  std::string chief_done_step;
  std::string read_chief_done;
};

// Adds the counters of `workers` worker tasks to `graph`, on `device`.
// Each bump waits for `after` (control inputs, "^name"): synchronous
// training passes the ops that put a worker's gradients into the
// accumulators, so a count says whose gradients are in, not who started.
WorkerProgressNodes AddWorkerProgress(tensorflow::GraphDef* graph, int workers,
                                      const std::string& device,
                                      const std::vector<std::string>& after = {});

// Readings of the counters over time. A synchronous worker records one
// about every second while it trains, so that a step that timed out can
// name the workers whose counts had stopped before it failed, also when
// they have answered again since (a process paused and resumed, a host
// that stalled): a probe after the failure cannot tell those apart from
// healthy ones. Keeps the last 1024 readings. Thread-safe.
class ProgressHistory {
 public:
  struct Stalled {
    int task;              // worker task index
    int64_t steps;         // its count
    int64_t most;          // the highest count of any worker
    absl::Duration quiet;  // how long its count had not changed (at least)
  };

  void Record(std::vector<int64_t> counts, absl::Time at);

  // From the last reading at or before `at`: the workers below the highest
  // count whose own count had not changed for `quiet` or longer by `at`.
  // Empty without such a reading.
  std::vector<Stalled> StalledAt(absl::Time at, absl::Duration quiet) const;

 private:
  mutable absl::Mutex mu_;
  std::deque<std::pair<absl::Time, std::vector<int64_t>>> readings_
      ABSL_GUARDED_BY(mu_);  // oldest first
};

// The chief's note on the others, from two readings of the counters taken
// `seconds` apart (`before` empty on the first): the workers that made no
// step in between ("stalled"), and those at under 80% of the most steps
// any worker made (and 5 or more behind it). Empty when none is behind.
std::string BehindNote(const std::vector<int64_t>& now,
                       const std::vector<int64_t>& before, double seconds);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TRAINING_WORKER_PROGRESS_H_
