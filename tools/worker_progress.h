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
