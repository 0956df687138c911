// What `weft train`'s local and between-graph modes share in the CLI: the
// graph's training nodes, the data, the progress line on stdout
// (distributed/training/step_metrics.h has the metrics).
#ifndef WEFT_TOOLS_TRAIN_COMMON_H_
#define WEFT_TOOLS_TRAIN_COMMON_H_

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "distributed/training/step_metrics.h"
#include "graph/models/datasets.h"
#include "proto/graph.pb.h"

namespace weft {

struct GraphInfo {
  int64_t batch = 0, features = 0;
  bool has_accuracy = false;
};

// The placeholder shapes and the nodes training needs, or INVALID_ARGUMENT
// naming what is missing.
absl::StatusOr<GraphInfo> InspectGraph(const tensorflow::GraphDef& graph,
                                       const std::string& source);

// --data: "synthetic" (seeded) or "digits", checked against the graph's
// feature count.
absl::StatusOr<Dataset> LoadData(const std::string& which, int64_t features,
                                 uint64_t seed);

// The progress line (StepProgress): rewritten in place on a terminal, one
// line per `every` steps otherwise.
class Progress {
 public:
  Progress(int64_t steps, int64_t every)
      : lines_(steps, every, isatty(fileno(stdout)) != 0) {}

  // Whether Step(step, ...) prints a line (on a terminal: every step).
  bool Prints(int64_t step) const { return lines_.Prints(step); }

  void Step(int64_t step, double loss, double accuracy, bool has_accuracy,
            double examples_per_s) {
    const std::string line =
        lines_.Line(step, loss, accuracy, has_accuracy, examples_per_s);
    if (lines_.every_step()) {
      std::printf("\r%s\033[K", line.c_str());
      if (step == lines_.steps()) std::printf("\n");
    } else if (Prints(step)) {
      std::printf("%s\n", line.c_str());
    }
    std::fflush(stdout);
  }

 private:
  StepProgress lines_;
};

// Prints a line of weft train's between-graph output (trainer.h's progress
// sink) on stdout, flushed. A progress line ("step ...") on a terminal
// (`rewrite`) replaces the one before it in place; the next other line
// starts on a line of its own.
void PrintProgressLine(const std::string& line, bool rewrite);

}  // namespace weft

#endif  // WEFT_TOOLS_TRAIN_COMMON_H_
