#include "tools/compare/report.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/compare/compare_plots_py.h"

namespace weft {

double TargetLoss(std::optional<double> given, const std::vector<RunResult>& runs) {
  if (given) return *given;
  double target = 0;
  for (const RunResult& r : runs) {
    if (r.ok) target = std::max(target, r.numbers.final_loss);
  }
  return target;
}

std::string RunsTable(const std::vector<RunResult>& runs, const ReportSetting& s) {
  std::string t = absl::StrFormat(
      "\n%-14s %7s %3s %11s %8s %8s %11s %8s %7s %14s\n", "mode", "workers", "ps",
      "examples/s", "p50 ms", "p99 ms", "bytes/step", "loss", "acc", "to target");
  for (const RunResult& r : runs) {
    if (!r.ok) {
      absl::StrAppendFormat(&t, "%-14s %7d %3d  failed (see %s)\n", r.spec.mode,
                            r.spec.workers, r.spec.ps, r.log_dir);
      continue;
    }
    const RunNumbers& n = r.numbers;
    absl::StrAppendFormat(
        &t, "%-14s %7d %3d %11.0f %8.2f %8.2f %11s %8.4f %7s %14s\n", r.spec.mode,
        r.spec.workers, r.spec.ps, n.examples_per_s, n.step_p50_ms, n.step_p99_ms,
        Bytes(n.bytes_per_step), n.final_loss,
        n.has_accuracy ? absl::StrFormat("%.3f", n.final_accuracy) : "-",
        n.time_to_target >= 0
            ? absl::StrFormat("%.1fs/%lld", n.time_to_target,
                              static_cast<long long>(n.steps_to_target))
            : "not reached");
  }
  absl::StrAppendFormat(
      &t,
      "(a step is one global batch of %lld examples; loss and accuracy are "
      "means over the last 10 steps of the global batch's (sync, allreduce: "
      "the mean of the workers') or, async, the chief's; target loss "
      "%.4f%s; network: %s; "
      "%s)\n",
      static_cast<long long>(s.batch), s.target_loss,
      s.target_given ? "" : " (the highest final loss)", s.network_note, s.machine);
  return t;
}

nlohmann::json ReportJson(const std::vector<RunResult>& runs, const ReportSetting& s,
                          const nlohmann::json& projection) {
  nlohmann::json report;
  report["model"] = s.model;
  report["batch"] = s.batch;
  report["steps"] = s.steps;
  report["data"] = s.data;
  report["machine"] = s.machine;
  report["network"] = s.network_note;
  report["link_rate"] = s.link_rate;
  report["target_loss"] = s.target_loss;
  report["tensorboard"] = s.out + "/tensorboard";
  // The runs' figures are measured; those under "projection" (with
  // --project) come from the cost model and say so.
  report["measured"] = projection.is_null();
  if (!projection.is_null()) report["projection"] = projection;
  report["runs"] = nlohmann::json::array();
  for (const RunResult& r : runs) {
    nlohmann::json j;
    j["mode"] = r.spec.mode;
    j["workers"] = r.spec.workers;
    j["ps"] = r.spec.ps;
    j["ok"] = r.ok;
    j["measured"] = true;
    j["logs"] = r.log_dir;
    if (!r.ok) {
      j["error"] = r.error;
    } else {
      const RunNumbers& n = r.numbers;
      j["examples_per_s"] = n.examples_per_s;
      j["step_p50_ms"] = n.step_p50_ms;
      j["step_p99_ms"] = n.step_p99_ms;
      if (n.bytes_per_step >= 0) j["bytes_per_step"] = n.bytes_per_step;
      j["final_loss"] = n.final_loss;
      if (n.has_accuracy) j["final_accuracy"] = n.final_accuracy;
      if (n.time_to_target >= 0) {
        j["time_to_target_s"] = n.time_to_target;
        j["steps_to_target"] = n.steps_to_target;
      }
      nlohmann::json curve = nlohmann::json::array();
      for (const auto& [t, l] : n.curve) curve.push_back({t, l});
      j["curve"] = curve;
    }
    report["runs"].push_back(j);
  }
  return report;
}

ProjectionReport ProjectRuns(const std::vector<RunResult>& runs, int64_t batch,
                             double link_bytes_per_s, ProjectionRequest request) {
  std::vector<MeasuredRun> measured;
  int most_workers = 1;
  for (const RunResult& r : runs) {
    if (!r.ok) continue;
    measured.push_back({r.spec.mode, r.spec.workers, r.spec.ps,
                        r.numbers.examples_per_s, r.numbers.bytes_per_step});
    if (r.spec.mode != "single" && r.spec.mode != "model-parallel") {
      most_workers = std::max(most_workers, r.spec.workers);
    }
  }
  MeasuredSetting setting;
  setting.global_batch = static_cast<double>(batch);
  setting.cores = static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN));
  setting.link_bytes_per_s = link_bytes_per_s;
  request.per_worker_batch = static_cast<double>(batch) / most_workers;
  return BuildProjectionReport(measured, setting, request);
}

absl::Status WriteReport(const nlohmann::json& report, const std::string& path) {
  std::ofstream out(path);
  // As tools/json_text.h writes JSON (invalid UTF-8 replaced), which this
  // layer, below the CLI, does not include.
  out << report.dump(2, ' ', /*ensure_ascii=*/false,
                     nlohmann::json::error_handler_t::replace)
      << "\n";
  if (!out) return absl::FailedPreconditionError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

bool DrawPlots(const std::string& report_path, const std::string& out_dir) {
  const std::string script = out_dir + "/.compare_plots.py";
  std::ofstream(script) << kComparePlotsPy;
  const std::string cmd = absl::StrCat("python3 '", script, "' '", report_path,
                                       "' '", out_dir, "' 2>'", out_dir,
                                       "/plots.log'");
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, nullptr);  // system() waits for SIGCHLD
  const bool ok = std::system(cmd.c_str()) == 0;
  std::remove(script.c_str());
  return ok;
}

std::string Machine() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  return absl::StrCat(model, ", ", sysconf(_SC_NPROCESSORS_ONLN), " cores");
}

std::string Bytes(double b) {
  if (b < 0) return "?";
  if (b < 1024) return absl::StrFormat("%.0f B", b);
  if (b < 1024 * 1024) return absl::StrFormat("%.1f KiB", b / 1024);
  return absl::StrFormat("%.2f MiB", b / (1024 * 1024));
}

}  // namespace weft
