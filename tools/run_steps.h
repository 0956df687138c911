// What `weft run` and `weft submit` share: feeds parsed from --feed, the
// --init and step loop over a Session (local or on a cluster), and the
// printing of fetches and timings.
#ifndef WEFT_TOOLS_RUN_STEPS_H_
#define WEFT_TOOLS_RUN_STEPS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "proto/graph.pb.h"
#include "runtime/core/tensor.h"
#include "runtime/session.h"

namespace weft {

// --feed T=VALUE specs as tensors; a JSON value takes the dtype the graph
// gives T. INVALID_ARGUMENT naming the feed.
absl::Status ParseFeeds(const tensorflow::GraphDef& graph,
                        const std::vector<std::string>& specs,
                        int64_t max_file_bytes,
                        std::vector<std::pair<std::string, Tensor>>* feeds);

struct StepLoop {
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  std::vector<std::string> inits;  // run once each, in order, before the steps
  int64_t steps = 1;
  bool json = false;
  bool timing = false;     // step-time statistics on stderr
  bool op_timing = false;  // kernel time per op type on stderr
  // A "step k of N" line on stderr, at most once a second, once the run has
  // taken longer than two seconds.
  bool progress = false;
  int64_t timeout_ms = 0;  // RunOptions.timeout_in_ms of each step
  int64_t memory_limit_bytes = 0;  // named in RESOURCE_EXHAUSTED errors
};

// Runs the inits and the steps, prints the last step's fetches (and the
// timings asked for); the command's exit code.
int RunStepLoop(Session* session, const StepLoop& loop);

}  // namespace weft

#endif  // WEFT_TOOLS_RUN_STEPS_H_
