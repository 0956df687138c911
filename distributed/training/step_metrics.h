// What every `weft train` mode reports of a step: its loss and accuracy
// as numbers, the progress line, TensorBoard scalars and the --metrics-out
// JSON lines. Shared by the local trainer (tools/train_command.cc) and the
// between-graph one (trainer.h).
#ifndef WEFT_DISTRIBUTED_TRAINING_STEP_METRICS_H_
#define WEFT_DISTRIBUTED_TRAINING_STEP_METRICS_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/core/tensor.h"

namespace weft {

// A fetched metric as a number. The graph is the user's, so its 'loss' may
// be of any type and shape: anything but one float is INVALID_ARGUMENT
// naming the node.
absl::StatusOr<double> ScalarMetric(const Tensor& value, const char* node);

class EventWriter;  // runtime/events/event_writer.h

// One step's numbers as TensorBoard scalars: loss, examples_per_sec, and
// accuracy when the graph has it (the tags every weft train mode writes).
absl::Status WriteStepScalars(EventWriter& events, int64_t step, double loss,
                              bool has_accuracy, double accuracy,
                              double examples_per_s);

// --metrics-out FILE: one JSON object per line and step, for `weft compare`
// and other programs: {"step": global step after it, "wall_s": seconds
// since training began, "step_s": the step's own seconds, "loss",
// "accuracy" (when the graph has one), "examples": examples this process
// trained on so far}. Lines are flushed as written, so a reader sees every
// finished step even if the process is killed. One writer thread.
class MetricsLog {
 public:
  // INVALID_ARGUMENT naming the path when it cannot be written.
  static absl::StatusOr<std::unique_ptr<MetricsLog>> Create(
      const std::string& path);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  void Write(int64_t step, double wall_s, double step_s, double loss,
             bool has_accuracy, double accuracy, int64_t examples);

 private:
  explicit MetricsLog(std::FILE* f) : f_(f) {}
  std::FILE* f_;
};

// Which steps get a progress line, and its text: one line per `every`
// steps (and the first and the last), or every step when `every_step` (a
// terminal, where the line is rewritten in place).
class StepProgress {
 public:
  StepProgress(int64_t steps, int64_t every, bool every_step)
      : steps_(steps), every_(every), every_step_(every_step) {}

  int64_t steps() const { return steps_; }
  bool every_step() const { return every_step_; }

  // Whether `step` gets a line.
  bool Prints(int64_t step) const {
    return every_step_ || step % every_ == 0 || step == steps_ || step == 1;
  }

  // "step  40/100  loss 0.1234  accuracy 0.950  812 examples/s", `note`
  // (the chief's "behind: ...") at the end when not empty.
  std::string Line(int64_t step, double loss, double accuracy,
                   bool has_accuracy, double examples_per_s,
                   const std::string& note = "") const;

 private:
  int64_t steps_, every_;
  bool every_step_;
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TRAINING_STEP_METRICS_H_
