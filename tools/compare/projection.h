// weft compare --project: the throughput each replication mode would reach
// at worker counts past one machine, from a latency-bandwidth cost model
// fitted to the runs weft compare measured here.
//
// The model, per mode m, for one step of W workers each taking b examples:
//
//   T(W) = s * (c * b + a_m + d_m * n_m(W)) + h_m(W) * lambda + X_m(W) / L
//
//   c    seconds of compute per example in one worker process: fitted from
//        the `single` run (1 / its examples per second);
//   a_m  the mode's fixed software cost per step (RPC handling, the
//        optimizer's update): fitted from the mode's runs;
//   d_m  what that cost grows by per unit of n_m(W): W for the modes with
//        ps tasks (a ps serves every worker's pulls and pushes, the
//        in-graph client drives every tower), W - 1 for a ring (allreduce,
//        hybrid: 2 (W-1) hops, each handled in software). Fitted by least
//        squares where the mode was measured at two worker counts or more;
//        from one worker count it cannot be told from a_m and is ASSUMED 0;
//   s    how much slower everything runs for sharing the measuring
//        machine: max(1, tasks / cores), counting the workers, the ps tasks
//        and the in-graph client; 1 when projected (a machine per task);
//   h_m  messages one after another on the step's critical path: a ring's
//        2 (W-1) hops; a ps worker's pull and push, each a request and a
//        reply (4); the in-graph client's call to its towers on top (6);
//        sync's accumulator and token round trips on top (8);
//   lambda  a message's one-way latency on the link: STATED
//        (--project-latency). The measuring loopback adds none that a_m
//        and d_m do not already hold, so measured runs take 0;
//   X_m  bytes over the busiest link, per direction, per step: with P ps
//        tasks every worker pushes G bytes of gradients and pulls G of
//        parameters, X = W G / P; round a ring every member sends
//        2 G (W-1) / W. G is fitted from the bytes the runs' private
//        loopback carried (2 W G, resp. 2 G (W-1), per step). While
//        measuring, every task of a run shares that one loopback, so X is
//        all of those bytes;
//   L    the link's bytes per second: --link-rate when measuring (unshaped
//        loopback: no network term); STATED for the projection
//        (--project-link).
//
// A term neither measured nor stated is not invented: Project refuses,
// naming the flag or the measurement that would supply it. The report
// (ProjectionReport) says, term by term, which were fitted (and from which
// runs) and which assumed or stated.
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
  double global_batch = 0;      // examples per step of every run
  double cores = 1;             // of the measuring machine
  double link_bytes_per_s = 0;  // 0: unshaped loopback
};

// The link the projection assumes, as the user stated it.
struct ProjectedLink {
  double bytes_per_s = 0;  // L; must be > 0
  double latency_s = -1;   // lambda, one way per message; < 0: not stated
};

struct ModeFit {
  std::string mode;
  double fixed_s = 0;          // a_m
  double per_worker_s = 0;     // d_m, per unit of n_m(W)
  double model_bytes = 0;      // G
  bool growth_fitted = false;  // d_m fitted (two worker counts or more)
  bool bytes_measured = false; // G from measured bytes (else unknown)
  std::vector<int> worker_counts;  // of the runs fitted, ascending, distinct
  int runs = 0;                    // how many runs were fitted
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
  double examples_per_s = 0, step_s = 0;
  double network_s = 0;  // X_m(W) / L
  double latency_s = 0;  // h_m(W) * lambda
};

// Messages one after another on a step's critical path, h_m(W).
int CriticalPathMessages(const std::string& mode, int workers);

// The fit, and its check against `runs`. FAILED_PRECONDITION without a
// successful `single` run (c), naming it.
absl::StatusOr<CostModel> FitCostModel(const std::vector<MeasuredRun>& runs,
                                       const MeasuredSetting& setting);
std::vector<ModelCheck> CheckCostModel(const std::vector<MeasuredRun>& runs,
                                       const MeasuredSetting& setting);

// Every fitted mode at each of `workers`, each worker taking
// `per_worker_batch` examples per step, one machine per task on `link`;
// with the largest ps count measured for the mode. INVALID_ARGUMENT when
// the link's rate or latency is not stated (naming --project-link or
// --project-latency), FAILED_PRECONDITION when a mode's bytes per step
// were not measured (naming the mode).
absl::StatusOr<std::vector<Projection>> Project(const CostModel& model,
                                                const std::vector<MeasuredRun>& runs,
                                                const std::vector<int>& workers,
                                                double per_worker_batch,
                                                const ProjectedLink& link);

// "1gbit", "100mbit", "10gbit", "500kbit" (tc's units, bits; also "bps"
// for bytes): bytes per second. INVALID_ARGUMENT naming the text.
absl::StatusOr<double> ParseLinkRate(const std::string& rate);

// "50us", "0.2ms", "1ms", "0": seconds. INVALID_ARGUMENT naming the text.
absl::StatusOr<double> ParseLatency(const std::string& latency);

}  // namespace weft

#endif  // WEFT_TOOLS_COMPARE_PROJECTION_H_
