// weft run: load a GraphDef, feed, run, print fetches.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ops/framework/node_def_util.h"
#include "ops/framework/op_registry.h"
#include "runtime/core/local_device_mgr.h"
#include "runtime/session.h"
#include "runtime/core/status.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/graph_file.h"
#include "tools/op_timing.h"
#include "tools/tensor_text.h"

namespace weft {
namespace {

constexpr char kUsage[] =
    "usage: weft run --graph FILE --fetch T [--fetch T ...] [--target NODE ...]\n"
    "                [--feed T=VALUE ...] [--init NODE ...] [--steps N]\n"
    "                [--format text|json] [--timing] [--cpu-devices N]\n"
    "                [--log-device-placement] [--no-soft-placement] [--op-timing]\n"
    "                [--intra-op-threads N] [--inter-op-threads N]\n"
    "                [--max-input-bytes N] [--memory-limit N]\n"
    "\n"
    "  --graph FILE    GraphDef, binary (.pb) or text (.pbtxt); detected from the bytes\n"
    "  --fetch T       tensor to print: 'node' or 'node:i' (repeatable)\n"
    "  --target NODE   node to run without printing (repeatable), e.g. an update op\n"
    "  --feed T=VALUE  value for a tensor (repeatable). VALUE is a JSON number,\n"
    "                  a nested JSON list, {\"dtype\":\"int32\",\"shape\":[2],\"values\":[1,2]},\n"
    "                  or @file.npy\n"
    "  --init NODE     node to run once before the steps, e.g. a variable initializer\n"
    "  --steps N       run N times (variables persist) and print the last result\n"
    "  --timing        print step-time statistics (after --init) and the CPU\n"
    "                  time a step takes (all threads) to stderr\n"
    "  --cpu-devices N give the session N CPU devices (/cpu:0 .. /cpu:N-1), as\n"
    "                  ConfigProto.device_count {\"CPU\": N} does; default 1\n"
    "  --log-device-placement  print each node's device to stderr; a node not\n"
    "                  on the device it asked for is marked \"(requested /cpu:9,\n"
    "                  soft-placed)\"\n"
    "  --no-soft-placement  fail, naming the node and why, when a node's device\n"
    "                  request cannot be met (no such device, no kernel there,\n"
    "                  conflicting colocation) instead of running it elsewhere,\n"
    "                  as ConfigProto.allow_soft_placement = false\n"
    "  --intra-op-threads N  threads one kernel may split its work over, as\n"
    "                  ConfigProto.intra_op_parallelism_threads; default: cores\n"
    "  --inter-op-threads N  threads running independent kernels at once, as\n"
    "                  ConfigProto.inter_op_parallelism_threads; default: cores\n"
    "  --max-input-bytes N  refuse a --graph, @file.npy or feed larger than N bytes\n"
    "                  (default 1 GiB; sizes take K, M, G or T: 64M)\n"
    "  --memory-limit N  fail a step with RESOURCE_EXHAUSTED, naming the node,\n"
    "                  when the session's tensors would hold more than N bytes\n"
    "                  of host memory (default: no limit but the machine's)\n"
    "  --op-timing     trace the steps after the first and print the kernel time\n"
    "                  per op type to stderr (tracing slows the steps a little)\n"
    "  --format F      text (default) or json: {\"fetches\": {T: {dtype, shape, values}}}\n";

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

int RunCommand(int argc, char** argv) {
  CommandLine cl({{"graph", kValue},
                  {"fetch", kRepeated},
                  {"target", kRepeated},
                  {"feed", kRepeated},
                  {"init", kRepeated},
                  {"steps", kValue},
                  {"format", kValue},
                  {"timing", kSwitch},
                  {"cpu-devices", kValue},
                  {"intra-op-threads", kValue},
                  {"inter-op-threads", kValue},
                  {"log-device-placement", kSwitch},
                  {"no-soft-placement", kSwitch},
                  {"op-timing", kSwitch},
                  {"max-input-bytes", kValue},
                  {"memory-limit", kValue},
                  {"help", kSwitch}});
  if (std::optional<int> exit = StartCommand(argc, argv, kUsage, {"graph"}, &cl)) {
    return *exit;
  }
  if (!cl.Has("fetch") && !cl.Has("target")) {
    return ReportUsage(
        absl::InvalidArgumentError("give at least one --fetch or --target"),
        kUsage);
  }
  const std::string format = cl.Get("format", "text");
  absl::StatusOr<int64_t> steps = cl.GetPositiveInt("steps", 1);
  absl::StatusOr<int64_t> cpu_devices =
      cl.GetPositiveInt("cpu-devices", 1, kMaxLocalCpuDevices);
  absl::StatusOr<int64_t> intra_op =
      cl.GetPositiveInt("intra-op-threads", 0, kMaxPoolThreads);
  absl::StatusOr<int64_t> inter_op =
      cl.GetPositiveInt("inter-op-threads", 0, kMaxPoolThreads);
  absl::StatusOr<int64_t> max_input =
      cl.GetByteSize("max-input-bytes", kDefaultMaxInputBytes);
  absl::StatusOr<int64_t> memory_limit = cl.GetByteSize("memory-limit", 0);
  for (const auto* flag : {&steps, &cpu_devices, &intra_op, &inter_op,
                           &max_input, &memory_limit}) {
    if (!flag->ok()) return ReportUsage(flag->status(), kUsage);
  }

  absl::StatusOr<tensorflow::GraphDef> graph = ReadGraphDefFile(cl.Get("graph"), *max_input);
  if (!graph.ok()) return ReportError(graph.status());
  std::vector<std::pair<std::string, Tensor>> feeds;
  if (absl::Status s = ParseFeeds(*graph, cl.GetAll("feed"), *max_input, &feeds); !s.ok()) {
    return ReportError(s);
  }

  // Graphs exported on other machines often ask for devices this one lacks
  // (a GPU); by default the CLI runs them where a kernel exists instead of
  // refusing (--log-device-placement marks what moved).
  SessionOptions options;
  options.memory_limit_bytes = *memory_limit;
  options.config.set_allow_soft_placement(!cl.Has("no-soft-placement"));
  (*options.config.mutable_device_count())["CPU"] = static_cast<int>(*cpu_devices);
  options.config.set_intra_op_parallelism_threads(static_cast<int>(*intra_op));
  options.config.set_inter_op_parallelism_threads(static_cast<int>(*inter_op));
  options.config.set_log_device_placement(cl.Has("log-device-placement"));
  std::unique_ptr<Session> session = NewLocalSession(options);
  if (absl::Status s = session->Create(*graph); !s.ok()) return ReportError(s);
  std::vector<Tensor> outputs;
  if (cl.Has("init")) {
    absl::Status s = session->Run(feeds, {}, cl.GetAll("init"), &outputs);
    if (!s.ok()) {
      return ReportError(WithMemoryLimitFlag(WithContext(s, "running --init"), *memory_limit));
    }
  }
  std::vector<double> step_micros;
  const bool op_timing = cl.Has("op-timing");
  tensorflow::RunOptions run_options;
  OpTimingTable op_table;
  double cpu_micros_at_second_step = 0;
  for (int64_t step = 0; step < *steps; ++step) {
    if (step == 1) cpu_micros_at_second_step = ProcessCpuMicros();
    // The first step prepares the signature, so it is not traced.
    run_options.set_trace_level(op_timing && step > 0
                                    ? tensorflow::RunOptions::FULL_TRACE
                                    : tensorflow::RunOptions::NO_TRACE);
    tensorflow::RunMetadata metadata;
    const absl::Time start = absl::Now();
    absl::Status s = session->Run(run_options, feeds, cl.GetAll("fetch"),
                                  cl.GetAll("target"), &outputs,
                                  op_timing ? &metadata : nullptr);
    if (op_timing && step > 0) op_table.Add(metadata.step_stats());
    step_micros.push_back(absl::ToDoubleMicroseconds(absl::Now() - start));
    if (!s.ok()) {
      if (*steps > 1) s = WithContext(s, absl::StrCat("step ", step + 1));
      return ReportError(WithMemoryLimitFlag(s, *memory_limit));
    }
  }
  PrintResults(cl.GetAll("fetch"), outputs, format == "json");
  if (cl.Has("timing")) {
    const double cpu_after_first =
        *steps > 1 ? ProcessCpuMicros() - cpu_micros_at_second_step : 0;
    PrintTiming(step_micros, cpu_after_first);
  }
  if (op_timing) std::fputs(op_table.Format(*steps - 1, 20).c_str(), stderr);
  session->Close().IgnoreError();
  return kExitOk;
}

}  // namespace weft
