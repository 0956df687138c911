// weft compare's output once the runs are done: the target loss the runs
// are measured against, the table it prints, DIR/report.json and the
// pictures (DIR/loss_vs_time.png, DIR/throughput_vs_workers.png, drawn by
// the embedded compare_plots.py with python3 and matplotlib).
//
// RunsTable, ReportJson, Bytes and TargetLoss are pure; Machine reads
// /proc/cpuinfo, ProjectRuns the count of cores; WriteReport and DrawPlots write files. Thread-compatible.
#ifndef WEFT_TOOLS_COMPARE_REPORT_H_
#define WEFT_TOOLS_COMPARE_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "tools/compare/projection_report.h"
#include "tools/compare/runner.h"

namespace weft {

// What the report says of the comparison as a whole.
struct ReportSetting {
  std::string model, data;  // --model (or --graph's file), --data
  int64_t batch = 0, steps = 0;
  std::string machine;       // Machine()
  std::string network_note;  // CompareRunner::network_note()
  std::string link_rate;     // as given ("": unshaped)
  std::string out;           // the output directory
  double target_loss = 0;
  bool target_given = false;  // else the highest final loss
};

// The loss every run is measured against: `given`, else the highest
// final loss of the runs that succeeded (0 when none did).
double TargetLoss(std::optional<double> given, const std::vector<RunResult>& runs);

// The table weft compare prints after its runs (from its blank line to the
// closing note on what a step and the numbers are).
std::string RunsTable(const std::vector<RunResult>& runs, const ReportSetting& s);

// report.json: the setting, and per run its numbers (or its error) and
// loss curve. `projection` is --project's object (projection_report.h);
// null without --project, and then every figure is measured.
nlohmann::json ReportJson(const std::vector<RunResult>& runs, const ReportSetting& s,
                          const nlohmann::json& projection);

// --project's report (projection_report.h) on the runs that succeeded,
// measured with global batch `batch` on this machine's cores and a
// loopback shaped to `link_bytes_per_s` (0: unshaped); each projected
// worker takes the batch the most workers of a distributed run took.
// `request`'s per_worker_batch is set so.
ProjectionReport ProjectRuns(const std::vector<RunResult>& runs, int64_t batch,
                             double link_bytes_per_s, ProjectionRequest request);

// `report` as text to `path`. FAILED_PRECONDITION "cannot write PATH"; the
// file may be left partly written then.
absl::Status WriteReport(const nlohmann::json& report, const std::string& path);

// Runs the plotting script on `report_path`, the pictures and plots.log
// going to `out_dir`; false when python3 with matplotlib did not (see
// out_dir/plots.log). Unblocks every signal of the calling thread first
// (system() waits for SIGCHLD). Leaves no script behind.
bool DrawPlots(const std::string& report_path, const std::string& out_dir);

// "AMD EPYC 7B13, 2 cores": this machine's CPU model and online cores.
std::string Machine();

// "512 B", "1.5 KiB", "2.00 MiB"; "?" for a negative count.
std::string Bytes(double b);

}  // namespace weft

#endif  // WEFT_TOOLS_COMPARE_REPORT_H_
