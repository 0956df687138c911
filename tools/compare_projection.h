// weft compare --project: the throughput each replication mode would reach
// at worker counts past one machine, from a cost model fitted to the runs
// weft compare measured here.
//
// The model, per mode m, for one step of W workers each taking b examples:
//
//   T(W) = s * (a_m + d_m * n_m(W) + c * b) + X_m(W) / L
//
//   c    seconds of compute per example in one worker process: measured
//        by the `single` run (1 / its examples per second);
//   a_m, d_m  the mode's fixed cost per step and its growth with n_m(W):
//        W for the modes with ps tasks (the ps serves every worker's pushes
//        and pulls, the in-graph client drives every tower), W - 1 for
//        allreduce and hybrid (the ring's 2 (W-1) hops); fitted by least squares to
//        the mode's measured runs (d_m = 0 from one worker count, and never
//        below 0);
//   s    how much slower everything runs for sharing the machine: on the
//        measuring machine max(1, tasks / cores), counting the workers, the
//        ps tasks and the in-graph client; projected 1 (a machine per task);
//   X_m  bytes over the busiest link, per direction, per step: with ps
//        tasks (in-graph, between-async, between-sync) every worker pushes
//        G bytes of gradients and pulls G of parameters through the P ps
//        tasks, X = W G / P; round a ring (allreduce, hybrid) every worker
//        sends 2 G (W-1)/W
//        (the ring); G is fitted from the bytes the runs' loopback carried
//        (2 W G, resp. 2 G (W-1), per step);
//   L    the link's bytes per second: --link-rate when measuring (unshaped
//        loopback: no network term), the stated --project-link projected.
//
// A ring of one worker (allreduce or hybrid with W = 1) averages with
// nobody and has none of a ring's costs: the model leaves it out of the
// fit, and the check does not predict it.
//
// Compute and transfers are added, not overlapped, and links and CPUs are
// the only shared resources: a simple model, stated in the report. The
// check predicts every measured run of a mode from the mode's other runs
// (leave one out) where those span two worker counts or more, and from all
// of them (marked in-sample) otherwise.
//
// Pure functions; thread-compatible.
#ifndef WEFT_TOOLS_COMPARE_PROJECTION_H_
#define WEFT_TOOLS_COMPARE_PROJECTION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace weft {

struct MeasuredRun {
  std::string mode;  // single, model-parallel, in-graph, between-async, ...
  int workers = 1, ps = 0;
  double examples_per_s = 0;
  double bytes_per_step = -1;  // per global batch; -1: not measured
};

struct MeasuredSetting {
  double global_batch = 0;    // examples per step of every run
  double cores = 1;           // of the measuring machine
  double link_bytes_per_s = 0;  // 0: unshaped loopback
};

struct ModeFit {
  std::string mode;
  double fixed_s = 0;          // a_m
  double per_worker_s = 0;     // d_m, per unit of n_m(W)
  double model_bytes = 0;      // G
};

struct CostModel {
  double compute_s_per_example = 0;  // c
  std::vector<ModeFit> modes;        // the distributed modes measured
};

// A measured run predicted by the model.
struct ModelCheck {
  std::string mode;
  int workers = 1, ps = 0;
  double measured = 0, predicted = 0;  // examples per second
  bool in_sample = false;  // the run was among those fitted
  bool modelled = true;    // false: a ring of one worker, not predicted
};

struct Projection {
  std::string mode;
  int workers = 1, ps = 0;
  double examples_per_s = 0, step_s = 0, network_s = 0;
};

// The fit, and its check against `runs`. FAILED_PRECONDITION without a
// successful `single` run (c), naming it.
absl::StatusOr<CostModel> FitCostModel(const std::vector<MeasuredRun>& runs,
                                       const MeasuredSetting& setting);
std::vector<ModelCheck> CheckCostModel(const std::vector<MeasuredRun>& runs,
                                       const MeasuredSetting& setting);

// Every fitted mode at each of `workers`, each worker taking
// `per_worker_batch` examples per step, one machine per task on links of
// `link_bytes_per_s`; with the largest ps count measured for the mode.
std::vector<Projection> Project(const CostModel& model,
                                const std::vector<MeasuredRun>& runs,
                                const std::vector<int>& workers,
                                double per_worker_batch, double link_bytes_per_s);

// "1gbit", "100mbit", "10gbit", "500kbit" (tc's units, bits; also "bps"
// for bytes): bytes per second. INVALID_ARGUMENT naming the text.
absl::StatusOr<double> ParseLinkRate(const std::string& rate);

}  // namespace weft

#endif  // WEFT_TOOLS_COMPARE_PROJECTION_H_
