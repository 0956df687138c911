#include "tools/train_common.h"

#include <cerrno>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/core/status.h"
#include "runtime/events/event_writer.h"

namespace weft {

absl::StatusOr<GraphInfo> InspectGraph(const tensorflow::GraphDef& graph,
                                       const std::string& source) {
  GraphInfo info;
  std::map<std::string, const tensorflow::NodeDef*> nodes;
  for (const auto& n : graph.node()) nodes[n.name()] = &n;
  for (const char* name : {"images", "labels", "loss", "train_op", "init"}) {
    if (!nodes.count(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, " has no node '", name,
          "'; weft train needs the node names 'weft graphgen' writes"));
    }
  }
  info.has_accuracy = nodes.count("accuracy") > 0;
  const tensorflow::NodeDef& images = *nodes["images"];
  auto it = images.attr().find("shape");
  if (images.op() != "Placeholder" || it == images.attr().end() ||
      it->second.shape().dim_size() != 2 ||
      it->second.shape().dim(0).size() < 1 ||
      it->second.shape().dim(1).size() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": node 'images' must be a Placeholder of static shape "
                "[batch, features]"));
  }
  info.batch = it->second.shape().dim(0).size();
  info.features = it->second.shape().dim(1).size();
  return info;
}

absl::StatusOr<double> ScalarMetric(const Tensor& value, const char* node) {
  if (value.dtype() != DT_FLOAT || value.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node '", node, "' is ", DataTypeString(value.dtype()), " ",
        value.shape().DebugString(),
        "; weft train reports it and needs one float32 value (a scalar)"));
  }
  return value.flat<float>()[0];
}

absl::StatusOr<Dataset> LoadData(const std::string& which, int64_t features,
                                 uint64_t seed) {
  if (which == "digits") {
    WEFT_ASSIGN_OR_RETURN(Dataset d, LoadDigits(DefaultDigitsPath()));
    if (d.features() != features) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the digits have ", d.features(), " features, the graph's 'images' ",
          features));
    }
    return d;
  }
  SyntheticOptions o;
  o.seed = seed;
  if (features != o.rows * o.cols) {
    o.rows = features;
    o.cols = 1;
  }
  return MakeSyntheticDataset(o);
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

}  // namespace weft
