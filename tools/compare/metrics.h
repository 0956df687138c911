// weft compare's numbers for one run, from the lines its trainers wrote
// with --metrics-out (one JSON object per step: step, wall_s, step_s,
// loss, accuracy when the model has one, examples).
//
// The first trainer of a run is its chief: the single process, the
// in-graph client, or worker 0 of a between-graph or allreduce run. Its
// lines give the step times and, in the async mode, the loss; throughput
// is summed over every trainer. With between-sync, allreduce and hybrid
// every worker's step k runs on the same weights, so the global batch's
// loss (and accuracy) at step k is the mean of the workers' on their equal
// slices.
//
// Bytes per step come from the loopback's transmit counter (network.h):
// sampled at launch (once the servers listen), once the chief is past its
// first step, and when the trainers are done.
//
// Pure functions apart from ReadMetrics, which reads one file; all are
// thread-compatible and keep nothing.
#ifndef WEFT_TOOLS_COMPARE_METRICS_H_
#define WEFT_TOOLS_COMPARE_METRICS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace weft {

// One --metrics-out line.
struct Metric {
  int64_t step = 0;
  double wall_s = 0, step_s = 0, loss = 0, accuracy = 0;
  int64_t examples = 0;  // examples this trainer has trained on so far
  bool has_accuracy = false;
};

// Every whole line of the file at `path`, in order. A line that is not a
// JSON object (the one being written, cut) is skipped; a missing or
// unreadable file reads as no lines. Absent fields read as 0.
std::vector<Metric> ReadMetrics(const std::string& path);

// The value at fraction p (0..1) of v, nearest rank; 0 for an empty v.
double Percentile(std::vector<double> v, double p);

// The loopback's transmitted bytes at the points the runner samples it;
// -1 where it was not sampled (or could not be read).
struct LoopbackSamples {
  int64_t at_launch = -1;  // before any trainer started
  int64_t at_first = -1;   // once the chief was past its first step
  int64_t examples_at_first = 0;  // every trainer's examples then, summed
  int64_t at_end = -1;     // once every trainer had ended
};

// What a run measured.
struct RunNumbers {
  double examples_per_s = 0;  // summed over the trainers
  double step_p50_ms = 0, step_p99_ms = 0;  // the chief's, first step left out
  double bytes_per_step = -1;  // per global batch; -1: not measured
  double final_loss = 0, final_accuracy = 0;  // means over the last 10 steps
  bool has_accuracy = false;
  std::vector<std::pair<double, double>> curve;  // (wall s, loss over 10 steps)
  std::vector<std::pair<double, int64_t>> curve_steps;  // (wall s, global batches)
  // Set by MarkTarget; -1: the target was not reached.
  double time_to_target = -1;
  int64_t steps_to_target = -1;
};

// The numbers of a run of `mode` (single, model-parallel, in-graph,
// between-async, between-sync, allreduce, hybrid) with `workers` workers,
// each step a global batch of `global_batch` examples, from `trainers`'
// metric lines (the chief's first). Bytes per step are those between the
// sample at the chief's first step and the end (at launch when the run
// ended before that sample), over the global batches trained meanwhile;
// 0 for the one-process modes, -1 when the samples do not allow it.
// FAILED_PRECONDITION when the chief has fewer than 2 lines.
absl::StatusOr<RunNumbers> ComputeRunNumbers(
    const std::string& mode, int workers, int64_t global_batch,
    const std::vector<std::vector<Metric>>& trainers,
    const LoopbackSamples& bytes);

// Sets n's time and steps to the first point of its curve at or below
// `target` (-1 when none is).
void MarkTarget(double target, RunNumbers* n);

}  // namespace weft

#endif  // WEFT_TOOLS_COMPARE_METRICS_H_
