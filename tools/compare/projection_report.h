// weft compare --project's output: the cost model of projection.h fitted to
// the measured runs, each term's provenance (fitted from which runs,
// assumed, or stated by which flag), the projected rows marked as not
// measured, and the model's check against the measured runs, as the text
// the command prints and the "projection" object of report.json.
//
// Pure function; thread-compatible.
#ifndef WEFT_TOOLS_COMPARE_PROJECTION_REPORT_H_
#define WEFT_TOOLS_COMPARE_PROJECTION_REPORT_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tools/compare/projection.h"

namespace weft {

struct ProjectionRequest {
  std::vector<int> workers;       // the worker counts to project
  double per_worker_batch = 0;    // examples per worker per step
  ProjectedLink link;             // as parsed from the flags below
  std::string link_text;          // --project-link as given ("10gbit")
  std::string latency_text;       // --project-latency as given ("50us")
};

struct ProjectionReport {
  std::string text;     // what weft compare prints
  nlohmann::json json;  // report.json's "projection"; {"error": ...} on refusal
  bool ok = false;      // false: refused; text and json["error"] say why
};

ProjectionReport BuildProjectionReport(const std::vector<MeasuredRun>& runs,
                                       const MeasuredSetting& setting,
                                       const ProjectionRequest& request);

}  // namespace weft

#endif  // WEFT_TOOLS_COMPARE_PROJECTION_REPORT_H_
