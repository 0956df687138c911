// weft submit: `weft run` on a cluster. The graph goes to the master of the
// task at --target (a Weft server or a TensorFlow one), which places it over
// every task; the fetches come back and print as `weft run` prints them.
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distributed/rpc/grpc_session.h"
#include "runtime/core/status.h"
#include "tools/cluster_flags.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/graph_file.h"
#include "tools/run_steps.h"

namespace weft {
namespace {

constexpr char kUsageHead[] =
    "usage: weft submit --target grpc://HOST:PORT --graph FILE --fetch T ...\n"
    "                   [--target-node NODE ...] [--feed T=VALUE ...]\n"
    "                   [--init NODE ...] [--steps N] [--format text|json]\n"
    "                   [--timing] [--step-timeout-s N] [--no-soft-placement]\n"
    "                   [--device-filter SPEC ...] [--max-input-bytes N]\n"
    "\n"
    "  --target grpc://HOST:PORT  the task whose master runs the graph (weft\n"
    "                  server, weft launch, or a TensorFlow server)\n"
    "  --target-node NODE  node to run without printing (weft run's --target)\n"
    "  --device-filter SPEC  use only the tasks SPEC matches (repeatable), as\n"
    "                  ConfigProto.device_filters: /job:ps, /job:worker/task:0\n"
    "  --step-timeout-s N  fail a step that takes longer (default: none)\n"
    "  --call-timeout-s N  give up on a master that has not answered a call\n"
    "                  (CreateSession, a step without --step-timeout-s) for\n"
    "                  N seconds (default 3600); every 10 s of waiting is\n"
    "                  reported on stderr\n"
    "  --graph, --fetch, --feed, --init, --steps, --format, --timing,\n"
    "  --no-soft-placement, --max-input-bytes: as for weft run. A run longer\n"
    "  than two seconds prints a progress line a second to stderr.\n";
std::string Usage() { return absl::StrCat(kUsageHead, kSecurityFlagsUsage); }

}  // namespace

int SubmitCommand(int argc, char** argv) {
  std::map<std::string, FlagKind> flags = {{"target", kValue},
                  {"graph", kValue},
                  {"fetch", kRepeated},
                  {"target-node", kRepeated},
                  {"feed", kRepeated},
                  {"init", kRepeated},
                  {"steps", kValue},
                  {"format", kValue},
                  {"timing", kSwitch},
                  {"step-timeout-s", kValue},
                  {"call-timeout-s", kValue},
                  {"no-soft-placement", kSwitch},
                  {"device-filter", kRepeated},
                  {"max-input-bytes", kValue},
                  {"help", kSwitch}};
  AddSecurityFlags(&flags);
  CommandLine cl(flags);
  const std::string usage = Usage();
  const char* kUsage = usage.c_str();
  if (std::optional<int> rc =
          StartCommand(argc, argv, kUsage, {"target", "graph"}, &cl)) {
    return *rc;
  }
  if (!cl.Has("fetch") && !cl.Has("target-node")) {
    return ReportUsage(
        absl::InvalidArgumentError("give at least one --fetch or --target-node"),
        kUsage);
  }
  absl::StatusOr<std::string> address = GrpcTargetAddress(cl.Get("target"));
  if (!address.ok()) return ReportUsage(address.status(), kUsage);
  absl::StatusOr<int64_t> steps = cl.GetPositiveInt("steps", 1);
  absl::StatusOr<int64_t> timeout = cl.GetPositiveInt("step-timeout-s", 0);
  absl::StatusOr<int64_t> call_timeout = cl.GetPositiveInt("call-timeout-s", 3600);
  absl::StatusOr<int64_t> max_input =
      cl.GetByteSize("max-input-bytes", kDefaultMaxInputBytes);
  for (const auto* flag : {&steps, &timeout, &call_timeout, &max_input}) {
    if (!flag->ok()) return ReportUsage(flag->status(), kUsage);
  }
  absl::StatusOr<tensorflow::GraphDef> graph =
      ReadGraphDefFile(cl.Get("graph"), *max_input);
  if (!graph.ok()) return ReportError(graph.status());
  StepLoop loop;
  if (absl::Status s = ParseFeeds(*graph, cl.GetAll("feed"), *max_input, &loop.feeds);
      !s.ok()) {
    return ReportError(s);
  }
  SessionOptions options;
  options.config.set_allow_soft_placement(!cl.Has("no-soft-placement"));
  for (const std::string& f : cl.GetAll("device-filter")) {
    options.config.add_device_filters(f);
  }
  absl::StatusOr<std::shared_ptr<const Security>> security = SecurityFromFlags(cl);
  if (!security.ok()) return ReportUsage(security.status(), kUsage);
  GrpcSessionWaits waits;
  waits.call_timeout = absl::Seconds(*call_timeout);
  waits.log = [](absl::string_view line) {
    std::fprintf(stderr, "weft submit: %.*s\n", static_cast<int>(line.size()),
                 line.data());
  };
  std::unique_ptr<Session> session =
      NewGrpcSession(*address, options, *security, waits);
  if (absl::Status s = session->Create(*graph); !s.ok()) return ReportError(s);
  loop.fetches = cl.GetAll("fetch");
  loop.targets = cl.GetAll("target-node");
  loop.inits = cl.GetAll("init");
  loop.steps = *steps;
  loop.json = cl.Get("format", "text") == "json";
  loop.timing = cl.Has("timing");
  loop.progress = true;
  loop.timeout_ms = *timeout * 1000;
  const int rc = RunStepLoop(session.get(), loop);
  session->Close().IgnoreError();
  return rc;
}

}  // namespace weft
