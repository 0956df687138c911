#include "tools/compare/metrics.h"

#include <algorithm>
#include <fstream>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace weft {

std::vector<Metric> ReadMetrics(const std::string& path) {
  std::vector<Metric> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    // A line being written may be cut; json::parse without exceptions.
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    Metric m;
    m.step = j.value("step", int64_t{0});
    m.wall_s = j.value("wall_s", 0.0);
    m.step_s = j.value("step_s", 0.0);
    m.loss = j.value("loss", 0.0);
    m.has_accuracy = j.contains("accuracy");
    m.accuracy = j.value("accuracy", 0.0);
    m.examples = j.value("examples", int64_t{0});
    out.push_back(m);
  }
  return out;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1,
                            static_cast<size_t>(p * (v.size() - 1) + 0.5));
  return v[i];
}

absl::StatusOr<RunNumbers> ComputeRunNumbers(
    const std::string& mode, int workers, int64_t global_batch,
    const std::vector<std::vector<Metric>>& trainers,
    const LoopbackSamples& bytes) {
  // A worker of an async run may find the job done after a step or none;
  // the chief may not.
  if (trainers.empty() || trainers.front().size() < 2) {
    return absl::FailedPreconditionError(
        "the chief wrote fewer than 2 steps of metrics");
  }
  RunNumbers r;
  int64_t examples1 = 0;
  for (const auto& v : trainers) {
    if (v.empty()) continue;
    const double span = v.back().wall_s - v.front().wall_s;
    if (span > 0) r.examples_per_s += (v.back().examples - v.front().examples) / span;
    examples1 += v.back().examples;
  }
  const std::vector<Metric>& chief = trainers.front();
  // The loss of a step is the global batch's: with sync and allreduce every
  // worker's step k runs on the same weights, and the mean of their losses
  // on equal slices is the whole batch's (async workers' steps are their
  // own, so each worker's line is a loss of its own).
  std::vector<Metric> global = chief;
  if (mode == "between-sync" || mode == "allreduce" || mode == "hybrid") {
    size_t n = global.size();
    for (const auto& v : trainers) n = std::min(n, v.size());
    global.resize(std::max<size_t>(n, 1));
    for (size_t i = 0; i < n; ++i) {
      double loss = 0, accuracy = 0;
      for (const auto& v : trainers) {
        loss += v[i].loss / trainers.size();
        accuracy += v[i].accuracy / trainers.size();
      }
      global[i].loss = loss;
      global[i].accuracy = accuracy;
    }
  }
  std::vector<double> step_ms;
  for (size_t i = 1; i < chief.size(); ++i) step_ms.push_back(chief[i].step_s * 1e3);
  r.step_p50_ms = Percentile(step_ms, 0.5);
  r.step_p99_ms = Percentile(step_ms, 0.99);
  // A run that ended between two samples (a few fast ring steps) is
  // counted whole: its start-up traffic (the variables' first broadcast or
  // pull) is included, small against its steps'.
  int64_t bytes0 = bytes.at_first, examples0 = bytes.examples_at_first;
  if (bytes0 < 0 && bytes.at_launch >= 0) {
    bytes0 = bytes.at_launch;
    examples0 = 0;
  }
  const double batches = static_cast<double>(examples1 - examples0) / global_batch;
  if (mode == "single" || mode == "model-parallel") {
    r.bytes_per_step = 0;  // one process: nothing crosses a network
  } else if (bytes0 >= 0 && bytes.at_end >= bytes0 && batches > 0) {
    r.bytes_per_step = (bytes.at_end - bytes0) / batches;
  }
  const size_t tail = std::min<size_t>(10, global.size());
  for (size_t i = global.size() - tail; i < global.size(); ++i) {
    r.final_loss += global[i].loss / tail;
    r.final_accuracy += global[i].accuracy / tail;
  }
  r.has_accuracy = chief.back().has_accuracy;
  // The loss curve, smoothed over 10 steps; its position in global
  // batches from the chief's global step (async: one per worker update of
  // B/W).
  double sum = 0;
  for (size_t i = 0; i < global.size(); ++i) {
    sum += global[i].loss;
    if (i >= 10) sum -= global[i - 10].loss;
    const double mean = sum / std::min<size_t>(i + 1, 10);
    r.curve.emplace_back(global[i].wall_s, mean);
    r.curve_steps.emplace_back(
        global[i].wall_s,
        mode == "between-async" ? global[i].step / workers : global[i].step);
  }
  return r;
}

void MarkTarget(double target, RunNumbers* n) {
  n->time_to_target = -1;
  n->steps_to_target = -1;
  for (size_t i = 0; i < n->curve.size(); ++i) {
    if (n->curve[i].second <= target) {
      n->time_to_target = n->curve[i].first;
      n->steps_to_target = n->curve_steps[i].second;
      return;
    }
  }
}

}  // namespace weft
