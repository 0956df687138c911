#include "tools/op_timing.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"

namespace weft {
namespace {

// "node = Op()" -> "Op"; anything else unchanged.
std::string OpOfLabel(const tensorflow::NodeExecStats& ns) {
  const std::string& label = ns.timeline_label();
  const size_t eq = label.find(" = ");
  const size_t paren = label.rfind('(');
  if (eq == std::string::npos || paren == std::string::npos || paren < eq) {
    return ns.node_name();
  }
  return label.substr(eq + 3, paren - eq - 3);
}

}  // namespace

void OpTimingTable::Add(const tensorflow::StepStats& stats) {
  for (const tensorflow::DeviceStepStats& dev : stats.dev_stats()) {
    for (const tensorflow::NodeExecStats& ns : dev.node_stats()) {
      Entry& e = by_op_[OpOfLabel(ns)];
      e.nanos += ns.op_end_rel_nanos() > 0 ? ns.op_end_rel_nanos()
                                           : ns.op_end_rel_micros() * 1000;
      ++e.count;
    }
  }
}

std::string OpTimingTable::Format(int64_t steps, int top) const {
  std::vector<std::pair<std::string, Entry>> rows(by_op_.begin(), by_op_.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second.nanos > b.second.nanos;
  });
  int64_t total = 0;
  for (const auto& r : rows) total += r.second.nanos;
  const double per = static_cast<double>(std::max<int64_t>(1, steps));
  std::string out = absl::StrFormat(
      "op timing over %d traced steps (kernel time, us/step):\n", steps);
  for (int i = 0; i < static_cast<int>(rows.size()) && i < top; ++i) {
    const Entry& e = rows[i].second;
    absl::StrAppendFormat(&out, "  %10.1f us  %5.1f%%  %5.1f nodes  %s\n",
                          e.nanos / per / 1e3,
                          total > 0 ? 100.0 * e.nanos / total : 0.0,
                          e.count / per, rows[i].first);
  }
  absl::StrAppendFormat(&out, "  %10.1f us  total\n", total / per / 1e3);
  return out;
}

}  // namespace weft
