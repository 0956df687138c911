#include "distributed/training/numerics.h"

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace weft {

std::vector<VariableRead> VariableReads(const tensorflow::GraphDef& graph) {
  std::map<std::string, const tensorflow::NodeDef*> handles;
  std::vector<VariableRead> reads;
  for (const tensorflow::NodeDef& n : graph.node()) {
    if (n.op() == "VarHandleOp") handles[n.name()] = &n;
    if (n.op() == "VariableV2") reads.push_back({n.name(), n.name(), n.device()});
  }
  for (const tensorflow::NodeDef& n : graph.node()) {
    if (n.op() != "ReadVariableOp" || n.input_size() < 1) continue;
    auto it = handles.find(std::string(absl::StripSuffix(n.input(0), ":0")));
    if (it == handles.end()) continue;
    reads.push_back({n.name(), it->first, it->second->device()});
    handles.erase(it);  // one read per variable
  }
  return reads;
}

std::string NonFiniteVariables(Session* session,
                               const tensorflow::GraphDef& graph) {
  const std::vector<VariableRead> reads = VariableReads(graph);
  std::vector<std::string> fetches;
  for (const VariableRead& r : reads) fetches.push_back(r.fetch);
  std::vector<Tensor> values;
  tensorflow::RunOptions run;
  run.set_timeout_in_ms(30000);
  absl::Status s = session->Run(run, {}, fetches, {}, &values, nullptr);
  if (!s.ok()) {
    return absl::StrCat("its variables could not be read (", s.message(), ")");
  }
  std::vector<std::string> bad;
  for (size_t i = 0; i < values.size(); ++i) {
    const Tensor& t = values[i];
    bool finite = true;
    if (t.dtype() == DT_FLOAT) {
      for (float v : t.flat<float>()) finite = finite && std::isfinite(v);
    } else if (t.dtype() == DT_DOUBLE) {
      for (double v : t.flat<double>()) finite = finite && std::isfinite(v);
    }
    if (!finite) bad.push_back(absl::StrCat(reads[i].name, " on ", reads[i].device));
  }
  if (bad.empty()) {
    return "every variable is finite: the batch or the model's arithmetic "
           "overflowed";
  }
  return absl::StrCat("variables holding non-finite values: ",
                      absl::StrJoin(bad, ", "));
}

absl::Status NonFiniteLoss(const TaskId& task, double loss, int64_t global_step,
                           int64_t local_step, const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat(
      "task ", task.ToString(), ": the loss is ", loss, " at global step ",
      global_step, " (this worker's step ", local_step, "); ", why,
      ". Stopping rather than training on it (a client that wrote them, or "
      "an update that diverged: try a lower --lr; --no-check-numerics "
      "trains on)"));
}

}  // namespace weft
