// weft run: load a GraphDef, feed, run, print fetches.
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
#include "tools/run_steps.h"

namespace weft {
namespace {

constexpr char kUsage[] =
    "usage: weft run --graph FILE --fetch T [--fetch T ...] [--target NODE ...]\n"
    "                [--feed T=VALUE ...] [--init NODE ...] [--steps N]\n"
    "                [--format text|json] [--timing] [--cpu-devices N]\n"
    "                [--log-device-placement] [--no-soft-placement] [--op-timing]\n"
    "                [--no-graph-optimizations] [--intra-op-threads N] [--inter-op-threads N]\n"
    "                [--max-input-bytes N] [--memory-limit N]\n"
    "\n"
    "  --graph FILE    GraphDef, binary (.pb) or text (.pbtxt); detected from the bytes\n"
    "  --fetch T       tensor to print: 'node' or 'node:i' (repeatable)\n"
    "  --target NODE   node to run without printing (repeatable), e.g. an update op\n"
    "  --feed T=VALUE  value for a tensor (repeatable). VALUE is a JSON number,\n"
    "                  a nested JSON list, {\"dtype\":\"int32\",\"shape\":[2],\"values\":[1,2]},\n"
    "                  or @file.npy\n"
    "  --init NODE     node to run once before the steps, e.g. a variable initializer\n"
    "                  (repeatable: one run each, in the order given)\n"
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
    "  --no-graph-optimizations  run the graph's nodes as written: no constant\n"
    "                  folding, no fusion of a convolution or product with the\n"
    "                  bias, batch norm and activation after it (as TensorFlow's\n"
    "                  OptimizerOptions.L0 with grappler's meta optimizer off)\n"
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
                  {"no-graph-optimizations", kSwitch},
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
  if (cl.Has("no-graph-optimizations")) {
    auto* graph_options = options.config.mutable_graph_options();
    graph_options->mutable_optimizer_options()->set_opt_level(
        tensorflow::OptimizerOptions::L0);
    graph_options->mutable_rewrite_options()->set_disable_meta_optimizer(true);
  }
  (*options.config.mutable_device_count())["CPU"] = static_cast<int>(*cpu_devices);
  options.config.set_intra_op_parallelism_threads(static_cast<int>(*intra_op));
  options.config.set_inter_op_parallelism_threads(static_cast<int>(*inter_op));
  options.config.set_log_device_placement(cl.Has("log-device-placement"));
  std::unique_ptr<Session> session = NewLocalSession(options);
  if (absl::Status s = session->Create(*graph); !s.ok()) return ReportError(s);
  StepLoop loop;
  loop.feeds = std::move(feeds);
  loop.fetches = cl.GetAll("fetch");
  loop.targets = cl.GetAll("target");
  loop.inits = cl.GetAll("init");
  loop.steps = *steps;
  loop.json = format == "json";
  loop.timing = cl.Has("timing");
  loop.op_timing = cl.Has("op-timing");
  loop.memory_limit_bytes = *memory_limit;
  const int rc = RunStepLoop(session.get(), loop);
  if (rc != kExitOk) return rc;
  session->Close().IgnoreError();
  return kExitOk;
}

}  // namespace weft
