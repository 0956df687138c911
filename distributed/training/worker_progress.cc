#include "distributed/training/worker_progress.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/builder/node_def_edit.h"
#include "runtime/core/types.h"

namespace weft {
namespace {

constexpr char kPrefix[] = "weft_progress/";

// A node of the counters: name and inputs under kPrefix, int64 typed.
tensorflow::NodeDef* Add(tensorflow::GraphDef* g, const std::string& name,
                         const std::string& op, const std::string& device,
                         std::vector<std::string> inputs = {}) {
  for (std::string& in : inputs) in = absl::StrCat(kPrefix, in);
  tensorflow::NodeDef* n =
      AppendNode(g, absl::StrCat(kPrefix, name), op, device, std::move(inputs));
  SetTypeAttr(n, "dtype", DT_INT64);
  return n;
}

}  // namespace

WorkerProgressNodes AddWorkerProgress(tensorflow::GraphDef* graph, int workers,
                                      const std::string& device,
                                      const std::vector<std::string>& after) {
  WorkerProgressNodes out;
  AppendIntConst(graph, absl::StrCat(kPrefix, "zero"), device, DT_INT64, 0);
  AppendIntConst(graph, absl::StrCat(kPrefix, "one"), device, DT_INT64, 1);
  std::vector<std::string> inits;
  for (int i = 0; i < workers; ++i) {
    const std::string var = absl::StrCat("worker_", i);
    tensorflow::NodeDef* v = Add(graph, var, "VarHandleOp", device);
    (*v->mutable_attr())["shape"].mutable_shape();
    (*v->mutable_attr())["shared_name"].set_s(v->name());
    (*v->mutable_attr())["container"].set_s("");
    Add(graph, var + "/init", "AssignVariableOp", device, {var, "zero"});
    tensorflow::NodeDef* bump =
        Add(graph, var + "/bump", "AssignAddVariableOp", device, {var, "one"});
    for (const std::string& a : after) bump->add_input(a);
    Add(graph, var + "/read", "ReadVariableOp", device, {var});
    inits.push_back(absl::StrCat("^", kPrefix, var, "/init"));
    out.bump.push_back(absl::StrCat(kPrefix, var, "/bump"));
    out.reads.push_back(absl::StrCat(kPrefix, var, "/read"));
  }
  // The global step at which the chief finished the job (its last step,
  // its final checkpoint), 0 before: the others report success only then.
  tensorflow::NodeDef* done = Add(graph, "chief_done", "VarHandleOp", device);
  (*done->mutable_attr())["shape"].mutable_shape();
  (*done->mutable_attr())["shared_name"].set_s(done->name());
  (*done->mutable_attr())["container"].set_s("");
  Add(graph, "chief_done/init", "AssignVariableOp", device, {"chief_done", "zero"});
  Add(graph, "chief_done/step", "Placeholder", device);
  Add(graph, "chief_done/set", "AssignVariableOp", device,
      {"chief_done", "chief_done/step"});
  Add(graph, "chief_done/read", "ReadVariableOp", device, {"chief_done"});
  inits.push_back(absl::StrCat("^", kPrefix, "chief_done/init"));
  out.chief_done = absl::StrCat(kPrefix, "chief_done/set");
  out.chief_done_step = absl::StrCat(kPrefix, "chief_done/step");
  out.read_chief_done = absl::StrCat(kPrefix, "chief_done/read");
  out.init = AppendNode(graph, absl::StrCat(kPrefix, "init"), "NoOp", device,
                        std::move(inits))
                 ->name();
  return out;
}

std::string BehindNote(const std::vector<int64_t>& now,
                       const std::vector<int64_t>& before, double seconds) {
  if (now.empty()) return "";
  const int64_t most = *std::max_element(now.begin(), now.end());
  std::vector<std::string> behind;
  for (size_t i = 0; i < now.size(); ++i) {
    const std::string task = absl::StrCat("/job:worker/task:", i);
    if (before.size() == now.size() && now[i] == before[i] && most > now[i]) {
      behind.push_back(absl::StrFormat("%s (no step in %.0fs, at %d)", task,
                                       seconds, now[i]));
    } else if (now[i] * 5 < most * 4 && most - now[i] >= 5) {
      behind.push_back(absl::StrCat(task, " (", now[i], " steps, the most ", most, ")"));
    }
  }
  return behind.empty() ? "" : absl::StrCat("behind: ", absl::StrJoin(behind, ", "));
}

void ProgressHistory::Record(std::vector<int64_t> counts, absl::Time at) {
  absl::MutexLock lock(&mu_);
  readings_.emplace_back(at, std::move(counts));
  if (readings_.size() > 1024) readings_.pop_front();
}

std::vector<ProgressHistory::Stalled> ProgressHistory::StalledAt(
    absl::Time at, absl::Duration quiet) const {
  absl::MutexLock lock(&mu_);
  // The last reading at or before `at`.
  auto last = readings_.rbegin();
  while (last != readings_.rend() && last->first > at) ++last;
  if (last == readings_.rend() || last->second.empty()) return {};
  const std::vector<int64_t>& now = last->second;
  const int64_t most = *std::max_element(now.begin(), now.end());
  std::vector<Stalled> out;
  for (size_t i = 0; i < now.size(); ++i) {
    if (now[i] >= most) continue;
    // The oldest reading of the run of readings that ends at `last` and
    // shows the same count.
    absl::Time since = last->first;
    for (auto r = last; r != readings_.rend(); ++r) {
      if (r->second.size() != now.size() || r->second[i] != now[i]) break;
      since = r->first;
    }
    if (at - since >= quiet) {
      out.push_back({static_cast<int>(i), now[i], most, at - since});
    }
  }
  return out;
}

}  // namespace weft

