// What `weft train`'s local, cluster and between-graph modes share: the
// graph's training nodes, its metrics, the data, the progress line.
#ifndef WEFT_TOOLS_TRAIN_COMMON_H_
#define WEFT_TOOLS_TRAIN_COMMON_H_

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/models/datasets.h"
#include "proto/graph.pb.h"
#include "runtime/core/tensor.h"

namespace weft {

struct GraphInfo {
  int64_t batch = 0, features = 0;
  bool has_accuracy = false;
};

// The placeholder shapes and the nodes training needs, or INVALID_ARGUMENT
// naming what is missing.
absl::StatusOr<GraphInfo> InspectGraph(const tensorflow::GraphDef& graph,
                                       const std::string& source);

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
// finished step even if the process is killed.
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

// --data: "synthetic" (seeded) or "digits", checked against the graph's
// feature count.
absl::StatusOr<Dataset> LoadData(const std::string& which, int64_t features,
                                 uint64_t seed);

// The progress line: rewritten in place on a terminal, one line per
// `every` steps otherwise.
class Progress {
 public:
  Progress(int64_t steps, int64_t every)
      : steps_(steps), every_(every), tty_(isatty(fileno(stdout)) != 0) {}

  // Whether Step(step, ...) prints a line (on a terminal: every step).
  bool Prints(int64_t step) const {
    return tty_ || step % every_ == 0 || step == steps_ || step == 1;
  }

  // `note` ends the line (the chief's "behind: ..."), when not empty.
  void Step(int64_t step, double loss, double accuracy, bool has_accuracy,
            double examples_per_s, const std::string& note = "") {
    std::string line = absl::StrFormat("step %*d/%d  loss %.4f", width(), step,
                                       steps_, loss);
    if (has_accuracy) absl::StrAppendFormat(&line, "  accuracy %.3f", accuracy);
    absl::StrAppendFormat(&line, "  %.0f examples/s", examples_per_s);
    if (!note.empty()) absl::StrAppend(&line, "  ", note);
    if (tty_) {
      std::printf("\r%s\033[K", line.c_str());
      if (step == steps_) std::printf("\n");
    } else if (Prints(step)) {
      std::printf("%s\n", line.c_str());
    }
    std::fflush(stdout);
  }

 private:
  int width() const { return static_cast<int>(absl::StrCat(steps_).size()); }
  int64_t steps_, every_;
  bool tty_;
};


}  // namespace weft

#endif  // WEFT_TOOLS_TRAIN_COMMON_H_
