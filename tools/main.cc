// weft: the Weft command-line tool. One subcommand per file (tools/*_command.cc).
#include <sys/resource.h>

#include <cstdio>
#include <cstring>

#include "runtime/core/allocator.h"
#include "tools/commands.h"

namespace {

constexpr char kUsage[] =
    "usage: weft <command> [flags]\n"
    "\n"
    "commands:\n"
    "  run       run a GraphDef and print fetched tensors\n"
    "  graphgen  write a training graph for a built-in model\n"
    "  train     train a model locally with a progress line\n"
    "  inspect   summarize a GraphDef: ops, devices, variables, inputs, outputs\n"
    "  server    serve one task of a cluster (TensorFlow's gRPC services)\n"
    "  launch    start a cluster's local tasks and watch them\n"
    "  submit    run a GraphDef on a cluster through its master\n"
    "  compare   train one model in every replication mode and compare\n"
    "\n"
    "Run 'weft <command> --help' for the command's flags.\n";

// The soft limit on open files raised to the hard one: a server's every
// connection is a descriptor, and at the soft limit (often 1024) gRPC's
// listener stops accepting for good, so a modest connection flood would
// leave a task deaf. Children (weft launch's tasks) inherit the limit.
void RaiseOpenFileLimit() {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);  // best effort: the old limit stands
  }
}

}  // namespace

int main(int argc, char** argv) {
  weft::SetHostMallocPolicy();  // before any thread starts
  RaiseOpenFileLimit();
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? weft::kExitUsage : weft::kExitOk;
  }
  const char* command = argv[1];
  if (std::strcmp(command, "run") == 0) return weft::RunCommand(argc - 2, argv + 2);
  if (std::strcmp(command, "inspect") == 0) {
    return weft::InspectCommand(argc - 2, argv + 2);
  }
  if (std::strcmp(command, "graphgen") == 0) {
    return weft::GraphgenCommand(argc - 2, argv + 2);
  }
  if (std::strcmp(command, "submit") == 0) {
    return weft::SubmitCommand(argc - 2, argv + 2);
  }
  if (std::strcmp(command, "launch") == 0) {
    return weft::LaunchCommand(argc - 2, argv + 2);
  }
  if (std::strcmp(command, "server") == 0) {
    return weft::ServerCommand(argc - 2, argv + 2);
  }
  if (std::strcmp(command, "compare") == 0) {
    return weft::CompareCommand(argc - 2, argv + 2);
  }
  if (std::strcmp(command, "train") == 0) {
    return weft::TrainCommand(argc - 2, argv + 2);
  }
  std::fprintf(stderr, "usage error: unknown command '%s'\n\n%s", command, kUsage);
  return weft::kExitUsage;
}
