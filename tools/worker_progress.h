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
// the ps, in a partition the step has anyway, so no tensor crosses for it.
// The other workers watch the chief's counter, and at the end wait for
// its `chief_done` mark, so that a dead chief is named rather than the job
// reported done.
#ifndef WEFT_TOOLS_WORKER_PROGRESS_H_
#define WEFT_TOOLS_WORKER_PROGRESS_H_

#include <cstdint>
#include <string>
#include <vector>

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
WorkerProgressNodes AddWorkerProgress(tensorflow::GraphDef* graph, int workers,
                                      const std::string& device);

// The chief's note on the others, from two readings of the counters taken
// `seconds` apart (`before` empty on the first): the workers that made no
// step in between ("stalled"), and those at under 80% of the most steps
// any worker made (and 5 or more behind it). Empty when none is behind.
std::string BehindNote(const std::vector<int64_t>& now,
                       const std::vector<int64_t>& before, double seconds);

}  // namespace weft

#endif  // WEFT_TOOLS_WORKER_PROGRESS_H_
