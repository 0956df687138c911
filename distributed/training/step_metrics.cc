#include "distributed/training/step_metrics.h"

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/events/event_writer.h"

namespace weft {

absl::StatusOr<double> ScalarMetric(const Tensor& value, const char* node) {
  if (value.dtype() != DT_FLOAT || value.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", node, "' is ", DataTypeString(value.dtype()), " ",
        value.shape().DebugString(),
        "; weft train reports it and needs one float32 value (a scalar)"));
  }
  return value.flat<float>()[0];
}

absl::Status WriteStepScalars(EventWriter& events, int64_t step, double loss,
                              bool has_accuracy, double accuracy,
                              double examples_per_s) {
  std::vector<std::pair<std::string, double>> scalars = {
      {"loss", loss}, {"examples_per_sec", examples_per_s}};
  if (has_accuracy) scalars.emplace_back("accuracy", accuracy);
  return events.WriteScalars(step, scalars);
}

absl::StatusOr<std::unique_ptr<MetricsLog>> MetricsLog::Create(
    const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--metrics-out: cannot write '", path, "': ", std::strerror(errno)));
  }
  return std::unique_ptr<MetricsLog>(new MetricsLog(f));
}

MetricsLog::~MetricsLog() { std::fclose(f_); }

void MetricsLog::Write(int64_t step, double wall_s, double step_s, double loss,
                       bool has_accuracy, double accuracy, int64_t examples) {
  std::string line = absl::StrFormat(
      "{\"step\": %d, \"wall_s\": %.6f, \"step_s\": %.6f, \"loss\": %.9g",
      step, wall_s, step_s, loss);
  if (has_accuracy) absl::StrAppendFormat(&line, ", \"accuracy\": %.6g", accuracy);
  absl::StrAppendFormat(&line, ", \"examples\": %d}\n", examples);
  std::fputs(line.c_str(), f_);
  std::fflush(f_);
}

std::string StepProgress::Line(int64_t step, double loss, double accuracy,
                               bool has_accuracy, double examples_per_s,
                               const std::string& note) const {
  const int width = static_cast<int>(absl::StrCat(steps_).size());
  std::string line =
      absl::StrFormat("step %*d/%d  loss %.4f", width, step, steps_, loss);
  if (has_accuracy) absl::StrAppendFormat(&line, "  accuracy %.3f", accuracy);
  absl::StrAppendFormat(&line, "  %.0f examples/s", examples_per_s);
  if (!note.empty()) absl::StrAppend(&line, "  ", note);
  return line;
}

}  // namespace weft
