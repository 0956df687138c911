#include "tools/compare/projection.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace weft {
namespace {

// The modes whose workers average gradients round a ring (no ps).
bool Ring(const std::string& mode) { return mode == "allreduce" || mode == "hybrid"; }

bool Distributed(const MeasuredRun& r) {
  return r.mode != "single" && r.mode != "model-parallel";
}

// Bytes over the busiest link per direction per step, for model bytes g.
double BusiestLinkBytes(const std::string& mode, int workers, int ps, double g) {
  if (Ring(mode)) return 2 * g * (workers - 1) / std::max(workers, 1);
  return g * workers / std::max(ps, 1);
}

// All the bytes of one step, every task's, per byte of the model G: each
// worker pushes G and pulls G through the ps (2 W), or the ring's members
// send 2 G (W-1)/W each (2 (W-1)).
double StepBytesPerModelByte(const std::string& mode, int workers) {
  return Ring(mode) ? 2.0 * (workers - 1) : 2.0 * workers;
}

// G from a run's loopback bytes per step; < 0 when the run cannot tell.
double ModelBytesOf(const MeasuredRun& r) {
  const double per = StepBytesPerModelByte(r.mode, r.workers);
  if (r.bytes_per_step <= 0 || per <= 0) return -1;
  return r.bytes_per_step / per;
}

// What the mode's per-step cost grows with: the workers a ps task serves,
// or half the ring's hops (2 (W-1); none for one worker).
double Growth(const std::string& mode, int workers) {
  return Ring(mode) ? workers - 1 : workers;
}

// Tasks sharing the measuring machine's cores, relative to the cores.
double Slowdown(const MeasuredRun& r, double cores) {
  const int tasks = r.workers + r.ps + (r.mode == "in-graph" ? 1 : 0);
  return std::max(1.0, tasks / std::max(cores, 1.0));
}

// Seconds a step spends on the busiest link of `link` bytes per second (0:
// an unshaped loopback, no network term): a machine per task.
double NetworkTime(const std::string& mode, int workers, int ps, double g, double link) {
  return link > 0 ? BusiestLinkBytes(mode, workers, ps, g) / link : 0;
}

// The same while measuring: every task of a run shares the one shaped
// loopback, so all the step's bytes cross it.
double MeasuredNetworkTime(const std::string& mode, int workers, double g, double link) {
  return link > 0 ? StepBytesPerModelByte(mode, workers) * g / link : 0;
}

// a_m, d_m and G over `runs` (all of one mode, measured under `s`).
ModeFit FitMode(const std::string& mode, const std::vector<const MeasuredRun*>& runs,
                double c, const MeasuredSetting& s) {
  ModeFit fit;
  fit.mode = mode;
  double g = 0;
  int with_bytes = 0;
  for (const MeasuredRun* r : runs) {
    const double x = ModelBytesOf(*r);
    if (x >= 0) {
      g += x;
      ++with_bytes;
    }
  }
  fit.model_bytes = with_bytes > 0 ? g / with_bytes : 0;
  fit.bytes_measured = with_bytes > 0;
  std::set<int> counts;
  for (const MeasuredRun* r : runs) counts.insert(r->workers);
  fit.worker_counts.assign(counts.begin(), counts.end());
  fit.runs = static_cast<int>(runs.size());
  fit.growth_fitted = counts.size() >= 2;
  // What is left of each run's step for a_m + d_m n(W): least squares.
  std::vector<std::pair<double, double>> points;  // (growth, residual)
  for (const MeasuredRun* r : runs) {
    const double measured = s.global_batch / r->examples_per_s;
    const double network =
        MeasuredNetworkTime(mode, r->workers, fit.model_bytes, s.link_bytes_per_s);
    const double left = (measured - network) / Slowdown(*r, s.cores) -
                        c * s.global_batch / r->workers;
    points.emplace_back(Growth(mode, r->workers), left);
  }
  if (points.empty()) return fit;
  double mw = 0, mr = 0;
  for (const auto& [w, r] : points) {
    mw += w / points.size();
    mr += r / points.size();
  }
  double sww = 0, swr = 0;
  for (const auto& [w, r] : points) {
    sww += (w - mw) * (w - mw);
    swr += (w - mw) * (r - mr);
  }
  fit.per_worker_s = sww > 0 ? std::max(0.0, swr / sww) : 0;
  fit.fixed_s = std::max(0.0, mr - fit.per_worker_s * mw);
  return fit;
}

// The step time of `r` by the model, under the measuring setting.
double PredictedStep(const MeasuredRun& r, const ModeFit& fit, double c,
                     const MeasuredSetting& s) {
  return Slowdown(r, s.cores) * (fit.fixed_s + fit.per_worker_s * Growth(r.mode, r.workers) +
                                 c * s.global_batch / r.workers) +
         MeasuredNetworkTime(r.mode, r.workers, fit.model_bytes, s.link_bytes_per_s);
}

// A ring of one worker averages with nobody: it has none of a ring's
// per-step costs, so the model (and its fit) leaves it out.
bool Modelled(const MeasuredRun& r) { return !Ring(r.mode) || r.workers >= 2; }

// The measured runs of `mode` the model covers, but `except`.
std::vector<const MeasuredRun*> RunsOf(const std::vector<MeasuredRun>& runs,
                                       const std::string& mode,
                                       const MeasuredRun* except = nullptr) {
  std::vector<const MeasuredRun*> out;
  for (const MeasuredRun& r : runs) {
    if (r.mode == mode && &r != except && r.examples_per_s > 0 && Modelled(r)) {
      out.push_back(&r);
    }
  }
  return out;
}

absl::StatusOr<double> ComputePerExample(const std::vector<MeasuredRun>& runs) {
  for (const MeasuredRun& r : runs) {
    if (r.mode == "single" && r.examples_per_s > 0) return 1.0 / r.examples_per_s;
  }
  return absl::FailedPreconditionError(
      "--project needs the compute time per example from a successful "
      "'single' run: keep single in --modes");
}

}  // namespace

int CriticalPathMessages(const std::string& mode, int workers) {
  if (Ring(mode)) return 2 * std::max(workers - 1, 0);
  if (mode == "in-graph") return 6;
  if (mode == "between-sync") return 8;
  return 4;
}

absl::StatusOr<CostModel> FitCostModel(const std::vector<MeasuredRun>& runs,
                                       const MeasuredSetting& setting) {
  CostModel model;
  absl::StatusOr<double> c = ComputePerExample(runs);
  if (!c.ok()) return c.status();
  model.compute_s_per_example = *c;
  for (const MeasuredRun& r : runs) {
    if (!Distributed(r) || r.examples_per_s <= 0 || !Modelled(r)) continue;
    if (std::any_of(model.modes.begin(), model.modes.end(),
                    [&](const ModeFit& f) { return f.mode == r.mode; })) {
      continue;
    }
    model.modes.push_back(FitMode(r.mode, RunsOf(runs, r.mode), *c, setting));
  }
  return model;
}

std::vector<ModelCheck> CheckCostModel(const std::vector<MeasuredRun>& runs,
                                       const MeasuredSetting& setting) {
  std::vector<ModelCheck> out;
  absl::StatusOr<double> c = ComputePerExample(runs);
  if (!c.ok()) return out;
  for (const MeasuredRun& r : runs) {
    if (!Distributed(r) || r.examples_per_s <= 0) continue;
    std::vector<const MeasuredRun*> others = RunsOf(runs, r.mode, &r);
    // Leave one out where the others span two worker counts (a_m and d_m).
    bool spans = false;
    for (const MeasuredRun* o : others) spans |= o->workers != others[0]->workers;
    ModelCheck check;
    check.mode = r.mode;
    check.workers = r.workers;
    check.ps = r.ps;
    check.measured = r.examples_per_s;
    check.modelled = Modelled(r);
    if (!check.modelled) {
      out.push_back(check);  // nothing predicted
      continue;
    }
    check.in_sample = !spans;
    const ModeFit fit = FitMode(r.mode, spans ? others : RunsOf(runs, r.mode), *c, setting);
    const double t = PredictedStep(r, fit, *c, setting);
    check.predicted = t > 0 ? setting.global_batch / t : 0;
    out.push_back(check);
  }
  return out;
}

absl::StatusOr<std::vector<Projection>> Project(const CostModel& model,
                                                const std::vector<MeasuredRun>& runs,
                                                const std::vector<int>& workers,
                                                double per_worker_batch,
                                                const ProjectedLink& link) {
  if (!(link.bytes_per_s > 0)) {
    return absl::InvalidArgumentError(
        "--project needs the projected link's rate, which nothing measured "
        "here can tell: state it with --project-link (e.g. 10gbit)");
  }
  if (link.latency_s < 0) {
    return absl::InvalidArgumentError(
        "--project needs the projected link's one-way latency per message, "
        "which a loopback cannot measure: state it with --project-latency "
        "(e.g. 50us within a rack, 0 to leave latency out)");
  }
  std::vector<Projection> out;
  for (const ModeFit& fit : model.modes) {
    if (!fit.bytes_measured) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot project ", fit.mode, ": its runs' bytes per step were not "
          "measured (weft compare counts them on a private network namespace "
          "per run, which needs CAP_NET_ADMIN here), so the network term has "
          "no model size; run as root or leave out --project"));
    }
    int ps = 0;
    for (const MeasuredRun* r : RunsOf(runs, fit.mode)) ps = std::max(ps, r->ps);
    for (int w : workers) {
      Projection p;
      p.mode = fit.mode;
      p.workers = w;
      p.ps = ps;
      p.network_s = NetworkTime(fit.mode, w, ps, fit.model_bytes, link.bytes_per_s);
      p.latency_s = CriticalPathMessages(fit.mode, w) * link.latency_s;
      p.step_s = fit.fixed_s + fit.per_worker_s * Growth(fit.mode, w) +
                 model.compute_s_per_example * per_worker_batch + p.network_s +
                 p.latency_s;
      p.examples_per_s = p.step_s > 0 ? w * per_worker_batch / p.step_s : 0;
      out.push_back(p);
    }
  }
  return out;
}

absl::StatusOr<double> ParseLinkRate(const std::string& rate) {
  size_t i = 0;
  while (i < rate.size() && (std::isdigit(static_cast<unsigned char>(rate[i])) ||
                             rate[i] == '.')) {
    ++i;
  }
  double value = 0;
  const std::string unit = rate.substr(i);
  struct Unit {
    const char* name;
    double bytes;
  };
  static constexpr Unit kUnits[] = {
      {"bit", 1.0 / 8}, {"kbit", 1e3 / 8}, {"mbit", 1e6 / 8}, {"gbit", 1e9 / 8},
      {"bps", 1},       {"kbps", 1e3},     {"mbps", 1e6},     {"gbps", 1e9}};
  if (absl::SimpleAtod(rate.substr(0, i), &value) && value > 0) {
    for (const Unit& u : kUnits) {
      if (unit == u.name) return value * u.bytes;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "'", rate, "' is not a link rate such as 1gbit, 100mbit or 10gbit (tc's "
      "units: bit, kbit, mbit, gbit; bps... for bytes)"));
}

absl::StatusOr<double> ParseLatency(const std::string& latency) {
  absl::Duration d;
  if (absl::ParseDuration(latency, &d) && d >= absl::ZeroDuration() &&
      d < absl::Seconds(10)) {
    return absl::ToDoubleSeconds(d);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "'", latency, "' is not a latency such as 50us, 0.2ms or 0 (under 10s)"));
}

}  // namespace weft
