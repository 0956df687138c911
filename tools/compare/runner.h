// One weft compare run: a replication mode's local cluster and trainers,
// started as child `weft` processes (local_processes.h), watched until
// they end, and the run's numbers (metrics.h) from their --metrics-out
// lines. Per mode:
//   single         weft train (one process, one device)
//   model-parallel weft train --mode model-parallel over cpu:0,cpu:1
//   in-graph       weft server per task + one weft train --target client
//                  with a tower per worker task, variables on /job:ps/task:0
//   between-async  weft server per ps task + weft train --mode
//   between-sync   between-async|between-sync per worker
//   allreduce      weft train --mode allreduce per worker (no ps)
//   hybrid         weft train --mode hybrid per worker: allreduce, each
//                  worker's layers over 2 CPU devices of its own
// Every task serves TCP alone (--no-local-socket), so that its bytes cross
// the loopback, where they are counted and shaped: each run enters a
// network of its own first (network.h). A distributed run's tasks and
// trainers share an auth token of their own, written to its log directory.
//
// Not thread-safe, and the process must be single-threaded (the network
// namespace); one Run at a time. The children get SIGTERM if this process
// dies.
#ifndef WEFT_TOOLS_COMPARE_RUNNER_H_
#define WEFT_TOOLS_COMPARE_RUNNER_H_

#include <signal.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/compare/metrics.h"

namespace weft {

// One run of the comparison.
struct RunSpec {
  std::string mode;  // as listed above
  int workers = 1;
  int ps = 0;
};

// The model every trainer trains, as weft train's flags take it; empty
// strings are left out (weft train's defaults).
struct TrainerModel {
  std::string model, data;  // --model mlp|cnn|transformer --data D
  // Or the user's graph (absolute paths): --graph, --loss, --init,
  // --train-op, and --input NAME=FILE ("NAME=FILE" each, FILE absolute).
  std::string graph, loss, init, train_op;
  std::vector<std::string> inputs;
  std::string optimizer, lr, hidden, seed;
};

// weft train's flags for `model`, each trainer taking `batch` examples:
// "--batch B", then --model/--data or --graph/--loss (with --init,
// --train-op and an --input per input when set), then --optimizer, --lr,
// --hidden and --seed where set.
std::vector<std::string> TrainerArgs(const TrainerModel& model, int64_t batch);

// The runs of a comparison, in order: each of `modes` once for single and
// model-parallel; per count of `workers` for in-graph (1 ps), allreduce
// and hybrid (no ps); per count of `workers` and of `ps` for the
// between-graph modes.
std::vector<RunSpec> PlanRuns(const std::vector<std::string>& modes,
                              const std::vector<int>& workers,
                              const std::vector<int>& ps);

struct RunOptions {
  TrainerModel model;
  std::string out;  // each run's logs go to out/MODE-Ww-Pps, its chief's
                    // TensorBoard events to out/tensorboard/MODE-Ww-Pps
  int64_t steps = 200;  // global batches each run trains on
  int64_t batch = 64;   // the global batch; W workers take batch/W each
  std::string link_rate;  // tc rate to shape each run's loopback ("": not)
  absl::Duration run_timeout = absl::Seconds(600);
};

struct RunResult {
  RunSpec spec;
  bool ok = false;
  std::string error;    // when !ok: what failed, with the log's tail
  std::string log_dir;  // the run's logs and metrics files
  RunNumbers numbers;   // when ok
};

class CompareRunner {
 public:
  // `blocked`: the stop signals the calling thread has blocked
  // (BlockStopSignals in local_processes.h); Run waits for them between
  // its checks. `options` and `blocked` must outlive the runner.
  CompareRunner(const RunOptions& options, const sigset_t& blocked)
      : options_(options), blocked_(blocked) {}

  // Runs `spec` to the end and stops its processes. A run that failed (a
  // task ended, a trainer failed, it passed the run timeout) is a
  // RunResult with ok false and the error. CANCELLED when SIGINT or
  // SIGTERM arrived: the run's processes are stopped, and the caller
  // should stop too.
  absl::StatusOr<RunResult> Run(const RunSpec& spec);

  // The network of the last run (network.h's note).
  const std::string& network_note() const { return network_note_; }

 private:
  const RunOptions& options_;
  const sigset_t& blocked_;
  std::string network_note_;
};

}  // namespace weft

#endif  // WEFT_TOOLS_COMPARE_RUNNER_H_
