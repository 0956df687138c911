// The chief and the other workers of a between-graph job (trainer.h):
// who initialises (or restores) the variables and who waits for that, the
// ring's start from the chief's values, the chief's note on the workers
// behind, and the other workers' watch on the chief (that it moves, that
// it marks the job finished). Internal to distributed/training; each call
// runs steps on `session` and blocks for at most its deadline.
#ifndef WEFT_DISTRIBUTED_TRAINING_CHIEF_H_
#define WEFT_DISTRIBUTED_TRAINING_CHIEF_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "distributed/training/worker_context.h"
#include "distributed/training/worker_graph.h"
#include "runtime/session.h"

namespace weft {

// Between-graph: the chief initialises the variables (its step counters
// first), or restores the newest checkpoint, unless they are initialised
// already (it joins the running job); every other worker waits for that,
// logging every 5 s, for at most wait_for_chief.
absl::Status InitOrWait(const WorkerContext& w, const WorkerGraph& g,
                        Session* session);

// allreduce: every worker initialises its copy, the chief restores the
// newest checkpoint over its own, and all take the chief's values (the
// ring's broadcast): the copies start equal, and the averaged updates keep
// them so.
absl::Status InitRing(const WorkerContext& w, const WorkerGraph& g,
                      Session* session);

// The chief's note on the workers behind (worker_progress.h), from the
// counters now and `*last` (the previous reading and its time; updated).
absl::StatusOr<std::string> Behind(
    const WorkerContext& w, const WorkerGraph& g, Session* session,
    std::pair<std::vector<int64_t>, absl::Time>* last);

// A worker other than the chief, watching it. Used from one thread.
class ChiefWatch {
 public:
  ChiefWatch(const WorkerContext& w, const WorkerGraph& g) : w_(w), g_(g) {}

  // An error naming the chief when its step counter has not moved for
  // wait_for_chief (read at most every 5 s).
  absl::Status Check(Session* session);

  // At the end: waits (wait_for_chief) for the chief's mark that the job
  // is over, final checkpoint included.
  absl::Status WaitForDone(Session* session) const;

 private:
  const WorkerContext& w_;
  const WorkerGraph& g_;
  int64_t chief_steps_ = -1;
  absl::Time chief_moved_ = absl::InfinitePast();
  absl::Time next_check_ = absl::InfinitePast();
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TRAINING_CHIEF_H_
