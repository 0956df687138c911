#include "tools/run_steps.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ops/framework/node_def_util.h"
#include "ops/framework/op_registry.h"
#include "runtime/core/status.h"
#include "tools/commands.h"
#include "tools/op_timing.h"
#include "tools/tensor_text.h"

namespace weft {
namespace {

// The dtype a tensor name refers to, so JSON feeds take the placeholder's
// type; DT_INVALID when the graph cannot tell (the session then reports it).
DataType DtypeOfTensor(const tensorflow::GraphDef& graph,
                       const std::string& name) {
  absl::StatusOr<TensorId> id = ParseTensorName(name);
  if (!id.ok() || id->is_control()) return DT_INVALID;
  for (const auto& node : graph.node()) {
    if (node.name() != id->node) continue;
    const tensorflow::OpDef* op_def = GlobalOpRegistry().LookUpOpDef(node.op());
    if (op_def == nullptr) return DT_INVALID;
    tensorflow::NodeDef with_defaults = node;
    AddDefaultsToNodeDef(*op_def, &with_defaults);
    DataTypeVector inputs, outputs;
    if (!InOutTypesForNode(with_defaults, *op_def, &inputs, &outputs).ok() ||
        id->index >= static_cast<int>(outputs.size())) {
      return DT_INVALID;
    }
    return BaseType(outputs[id->index]);
  }
  return DT_INVALID;
}

}  // namespace

absl::Status ParseFeeds(const tensorflow::GraphDef& graph,
                        const std::vector<std::string>& specs,
                        int64_t max_file_bytes,
                        std::vector<std::pair<std::string, Tensor>>* feeds) {
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--feed '", spec, "' is not of the form T=VALUE"));
    }
    const std::string name = spec.substr(0, eq);
    absl::StatusOr<Tensor> value =
        ParseFeedValue(spec.substr(eq + 1), DtypeOfTensor(graph, name),
                       max_file_bytes);
    if (!value.ok()) {
      return WithContext(value.status(), absl::StrCat("feed '", name, "'"));
    }
    feeds->emplace_back(name, *std::move(value));
  }
  return absl::OkStatus();
}

namespace {

void PrintResults(const std::vector<std::string>& fetches,
                  const std::vector<Tensor>& outputs, bool json) {
  if (json) {
    std::string out = "{\"fetches\": {";
    for (size_t i = 0; i < fetches.size(); ++i) {
      if (i > 0) out += ", ";
      absl::StrAppend(&out, "\"", fetches[i], "\": ", TensorToJson(outputs[i]));
    }
    out += "}}\n";
    std::fputs(out.c_str(), stdout);
    return;
  }
  for (size_t i = 0; i < fetches.size(); ++i) {
    const Tensor& t = outputs[i];
    std::printf("%s = %s %s\n%s\n", fetches[i].c_str(),
                DataTypeNumpyName(t.dtype()).c_str(),
                t.shape().DebugString().c_str(), TensorToText(t).c_str());
  }
}

// User plus system CPU time of the whole process (all its threads), in us.
double ProcessCpuMicros() {
  rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  auto micros = [](const timeval& t) { return t.tv_sec * 1e6 + t.tv_usec; };
  return micros(usage.ru_utime) + micros(usage.ru_stime);
}

// The first step prepares (prunes, builds the executor); later ones reuse it,
// so both are reported. The CPU time per step (all threads, after the first
// step) says how much of the machine a step costs: on a busy machine a
// process's step time is mostly its share of the cores.
void PrintTiming(std::vector<double> micros, double cpu_micros_after_first) {
  const size_t steps = micros.size();
  const double first = micros.front();
  if (micros.size() > 1) micros.erase(micros.begin());
  std::sort(micros.begin(), micros.end());
  std::fprintf(stderr,
               "timing: steps=%zu first_step_us=%.1f median_step_us=%.2f "
               "min_step_us=%.2f max_step_us=%.2f cpu_us_per_step=%.2f\n",
               steps, first, micros[micros.size() / 2],
               micros.front(), micros.back(),
               cpu_micros_after_first / static_cast<double>(micros.size()));
}

}  // namespace

int RunStepLoop(Session* session, const StepLoop& loop) {
  std::vector<Tensor> outputs;
  // One run per init, in the order given (as sess.run(a); sess.run(b)):
  // an init may need what an earlier one did (fill a queue, then close it).
  for (const std::string& init : loop.inits) {
    absl::Status s = session->Run(loop.feeds, {}, {init}, &outputs);
    if (!s.ok()) {
      return ReportError(WithMemoryLimitFlag(
          WithContext(s, absl::StrCat("running --init ", init)), loop.memory_limit_bytes));
    }
  }
  std::vector<double> step_micros;
  tensorflow::RunOptions run_options;
  run_options.set_timeout_in_ms(loop.timeout_ms);
  OpTimingTable op_table;
  double cpu_micros_at_second_step = 0;
  const absl::Time loop_start = absl::Now();
  absl::Time last_progress = loop_start;
  for (int64_t step = 0; step < loop.steps; ++step) {
    if (step == 1) cpu_micros_at_second_step = ProcessCpuMicros();
    // The first step prepares the signature, so it is not traced.
    run_options.set_trace_level(loop.op_timing && step > 0
                                    ? tensorflow::RunOptions::FULL_TRACE
                                    : tensorflow::RunOptions::NO_TRACE);
    tensorflow::RunMetadata metadata;
    const absl::Time start = absl::Now();
    absl::Status s = session->Run(run_options, loop.feeds, loop.fetches,
                                  loop.targets, &outputs,
                                  loop.op_timing ? &metadata : nullptr);
    if (loop.op_timing && step > 0) op_table.Add(metadata.step_stats());
    const absl::Time end = absl::Now();
    step_micros.push_back(absl::ToDoubleMicroseconds(end - start));
    if (!s.ok()) {
      if (loop.steps > 1) s = WithContext(s, absl::StrCat("step ", step + 1));
      return ReportError(WithMemoryLimitFlag(s, loop.memory_limit_bytes));
    }
    if (loop.progress && end - loop_start > absl::Seconds(2) &&
        end - last_progress >= absl::Seconds(1)) {
      last_progress = end;
      std::fprintf(stderr, "step %lld of %lld, %.1f steps/s\n",
                   static_cast<long long>(step + 1),
                   static_cast<long long>(loop.steps),
                   (step + 1) / absl::ToDoubleSeconds(end - loop_start));
    }
  }
  PrintResults(loop.fetches, outputs, loop.json);
  if (loop.timing) {
    const double cpu_after_first =
        loop.steps > 1 ? ProcessCpuMicros() - cpu_micros_at_second_step : 0;
    PrintTiming(step_micros, cpu_after_first);
  }
  if (loop.op_timing) {
    std::fputs(op_table.Format(loop.steps - 1, 20).c_str(), stderr);
  }
  return kExitOk;
}

}  // namespace weft
