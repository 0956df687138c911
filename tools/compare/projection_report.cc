#include "tools/compare/projection_report.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace weft {
namespace {

std::string Ms(double s) { return absl::StrFormat("%.3g ms", s * 1e3); }

std::string MiB(double bytes) {
  return absl::StrFormat("%.3g MiB", bytes / (1024.0 * 1024.0));
}

// Where a mode's fitted terms came from, e.g. "3 runs (2, 3, 4 workers)".
std::string FittedFrom(const ModeFit& fit) {
  return absl::StrCat(fit.runs, fit.runs == 1 ? " run (" : " runs (",
                      absl::StrJoin(fit.worker_counts, ", "),
                      fit.worker_counts.size() == 1 && fit.worker_counts[0] == 1
                          ? " worker)"
                          : " workers)");
}

// The unit n_m(W) counts for the mode's growth term.
const char* GrowthUnit(const std::string& mode) {
  return mode == "allreduce" || mode == "hybrid" ? "per ring hop pair (W-1)"
                                                 : "per worker served (W)";
}

nlohmann::json Term(const std::string& name, double value, const std::string& source) {
  return {{"term", name}, {"value", value}, {"source", source}};
}

}  // namespace

ProjectionReport BuildProjectionReport(const std::vector<MeasuredRun>& runs,
                                       const MeasuredSetting& setting,
                                       const ProjectionRequest& request) {
  ProjectionReport report;
  auto refuse = [&](const absl::Status& status) {
    report.text = absl::StrCat("\nno projection: ", status.message(), "\n");
    report.json = {{"error", std::string(status.message())}, {"measured", false}};
    return report;
  };
  absl::StatusOr<CostModel> model = FitCostModel(runs, setting);
  if (!model.ok()) return refuse(model.status());
  absl::StatusOr<std::vector<Projection>> rows =
      Project(*model, runs, request.workers, request.per_worker_batch, request.link);
  if (!rows.ok()) return refuse(rows.status());

  std::string& t = report.text;
  nlohmann::json& j = report.json;
  j["measured"] = false;
  j["link"] = request.link_text;
  j["latency"] = request.latency_text;
  j["per_worker_batch"] = request.per_worker_batch;

  // Every term, with where it came from.
  absl::StrAppend(&t, "\ncost model (tools/compare/projection.h): step = s * (c * b + "
                      "a + d * n(W)) + h(W) * latency + busiest-link bytes / rate\n");
  nlohmann::json terms = nlohmann::json::array();
  const std::string c_source = "fitted: 1 / the single run's examples per second";
  absl::StrAppendFormat(&t, "  c        %-12s %s\n", Ms(model->compute_s_per_example),
                        c_source + " (per example)");
  terms.push_back(Term("compute_s_per_example", model->compute_s_per_example, c_source));
  const std::string rate_source =
      absl::StrCat("stated: --project-link ", request.link_text);
  const std::string latency_source =
      absl::StrCat("stated: --project-latency ", request.latency_text);
  absl::StrAppendFormat(&t, "  rate     %-12s %s\n", request.link_text, rate_source);
  absl::StrAppendFormat(&t, "  latency  %-12s %s (one way, per message)\n",
                        request.latency_text, latency_source);
  terms.push_back(Term("link_bytes_per_s", request.link.bytes_per_s, rate_source));
  terms.push_back(Term("latency_s", request.link.latency_s, latency_source));
  j["terms"] = terms;
  j["model"] = {{"compute_s_per_example", model->compute_s_per_example},
                {"modes", nlohmann::json::array()}};
  for (const ModeFit& m : model->modes) {
    const std::string from = FittedFrom(m);
    const std::string growth_source =
        m.growth_fitted
            ? absl::StrCat("fitted from ", from)
            : absl::StrCat("ASSUMED 0: one worker count measured (", from,
                           "); measure two or more (--workers 2,4) to fit it");
    const std::string bytes_source =
        absl::StrCat("fitted from the bytes ", from, " carried");
    absl::StrAppendFormat(&t, "  %s: a %s (fitted from %s); d %s %s (%s); G %s (%s); "
                          "h(W) = %s\n",
                          m.mode, Ms(m.fixed_s), from, Ms(m.per_worker_s),
                          GrowthUnit(m.mode), growth_source, MiB(m.model_bytes),
                          bytes_source,
                          m.mode == "allreduce" || m.mode == "hybrid"
                              ? std::string("2 (W-1) hops")
                              : absl::StrCat(CriticalPathMessages(m.mode, 2),
                                             " messages"));
    j["model"]["modes"].push_back(
        {{"mode", m.mode},
         {"fixed_s", m.fixed_s},
         {"per_worker_s", m.per_worker_s},
         {"model_bytes", m.model_bytes},
         {"terms",
          {Term("fixed_s", m.fixed_s, absl::StrCat("fitted from ", from)),
           Term("per_worker_s", m.per_worker_s, growth_source),
           Term("model_bytes", m.model_bytes, bytes_source)}},
         {"growth_fitted", m.growth_fitted}});
  }

  absl::StrAppendFormat(
      &t,
      "projected (cost model, NOT measured): one machine per task like this one, "
      "%s links with %s latency, %g examples per worker per step\n%-14s %7s %3s "
      "%11s %9s %11s %11s\n",
      request.link_text, request.latency_text, request.per_worker_batch, "mode",
      "workers", "ps", "examples/s", "step ms", "network ms", "latency ms");
  j["runs"] = nlohmann::json::array();
  for (const Projection& p : *rows) {
    absl::StrAppendFormat(&t, "%-14s %7d %3d %11.0f %9.2f %11.2f %11.2f\n", p.mode,
                          p.workers, p.ps, p.examples_per_s, p.step_s * 1e3,
                          p.network_s * 1e3, p.latency_s * 1e3);
    j["runs"].push_back({{"mode", p.mode}, {"workers", p.workers}, {"ps", p.ps},
                         {"examples_per_s", p.examples_per_s}, {"step_s", p.step_s},
                         {"network_s", p.network_s}, {"latency_s", p.latency_s},
                         {"measured", false}});
  }

  absl::StrAppend(&t, "model check, each measured run predicted from the other runs "
                      "of its mode:\n");
  j["check"] = nlohmann::json::array();
  for (const ModelCheck& c : CheckCostModel(runs, setting)) {
    if (!c.modelled) {
      absl::StrAppendFormat(&t, "  %-14s %2d workers %d ps: measured %.0f examples/s, "
                            "not modelled (a ring of one worker averages with "
                            "nobody)\n",
                            c.mode, c.workers, c.ps, c.measured);
      j["check"].push_back({{"mode", c.mode}, {"workers", c.workers}, {"ps", c.ps},
                            {"measured", c.measured}, {"modelled", false}});
      continue;
    }
    const double error = c.measured > 0 ? c.predicted / c.measured - 1 : 0;
    absl::StrAppendFormat(&t, "  %-14s %2d workers %d ps: measured %.0f, predicted "
                          "%.0f examples/s (%+.0f%%%s)\n",
                          c.mode, c.workers, c.ps, c.measured, c.predicted,
                          error * 100,
                          c.in_sample ? ", in-sample: its mode's only worker count"
                                      : "");
    j["check"].push_back({{"mode", c.mode}, {"workers", c.workers}, {"ps", c.ps},
                          {"measured", c.measured}, {"predicted", c.predicted},
                          {"relative_error", error}, {"in_sample", c.in_sample},
                          {"modelled", true}});
  }
  report.ok = true;
  return report;
}

}  // namespace weft
