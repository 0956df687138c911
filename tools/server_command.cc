// weft server: one task of a cluster, serving TensorFlow's MasterService and
// WorkerService over gRPC until SIGTERM or SIGINT (distributed/rpc/
// grpc_server.h). What tf.distribute.Server(cluster, job, task).join() is to
// a TensorFlow job: a TensorFlow 1.x client reaches it with
// tf.compat.v1.Session("grpc://ADDRESS").
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distributed/cluster_spec.h"
#include "distributed/rpc/grpc_coding.h"
#include "distributed/rpc/grpc_server.h"
#include "runtime/core/device.h"
#include "tools/cluster_flags.h"
#include "tools/command_line.h"
#include "tools/commands.h"

namespace weft {
namespace {

constexpr char kUsageHead[] =
    "usage: weft server --cluster SPEC --job NAME --task I [flags]\n"
    "       weft server            (cluster and task from TF_CONFIG)\n"
    "\n"
    "Serves one task of the cluster (MasterService and WorkerService, the\n"
    "gRPC services of TensorFlow's distributed runtime) on the address the\n"
    "spec gives it, until SIGTERM or SIGINT.\n"
    "\n"
    "  --cluster SPEC        'ps=host:port;worker=host:port,host:port', a JSON\n"
    "                        ClusterSpec, or @FILE holding either\n"
    "  --job NAME --task I   this process's task in the spec\n"
    "  --cpus N              CPU devices of the task (default 1)\n"
    "  --gpus N              GPUs to use (default all; 0 for none)\n"
    "  --memory-limit BYTES  host memory the task may hold (512M, 4G, ...)\n"
    "  --max-message-mb N    largest gRPC message, both ways (default 1024)\n"
    "  --rpc-memory-mb N     memory gRPC may hold for calls in flight; past it\n"
    "                        it slows readers, then drops connections\n"
    "                        (default 2 x --max-message-mb + 256)\n"
    "  --wait-for-tasks-s N  how long a session waits for every task to be\n"
    "                        up (default 120)\n"
    "  --session-gc-s N      close sessions idle for N s, and drop worker\n"
    "                        sessions and graphs no call used for as long\n"
    "                        (default 3600)\n"
    "  --file-root DIR       (repeatable) a directory whose files the graphs\n"
    "                        run here may read and write (checkpoints,\n"
    "                        readers); paths are resolved ('..', links)\n"
    "                        before the check. Default: no file access\n"
    "  --allow-non-loopback  serve a non-loopback address (exactly the one\n"
    "                        the spec names); needs --auth-token-file or\n"
    "                        mutual TLS (--tls-ca), or --insecure\n"
    "  --insecure            serve a non-loopback address to anyone\n"
    "  --no-local-socket     serve TCP alone: no Unix socket where the Weft\n"
    "                        tasks of this host reach a loopback task\n";
std::string Usage() { return absl::StrCat(kUsageHead, kSecurityFlagsUsage); }

sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

int ServerCommand(int argc, char** argv) {
  // Blocked before any thread starts, so every thread inherits the mask and
  // the signals reach only the sigwait below.
  const sigset_t signals = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::map<std::string, FlagKind> flags = {{"cluster", kValue},
                                           {"job", kValue},
                                           {"task", kValue},
                                           {"cpus", kValue},
                                           {"gpus", kValue},
                                           {"memory-limit", kValue},
                                           {"max-message-mb", kValue},
                                           {"rpc-memory-mb", kValue},
                                           {"wait-for-tasks-s", kValue},
                                           {"session-gc-s", kValue},
                                           {"file-root", kRepeated},
                                           {"allow-non-loopback", kSwitch},
                                           {"insecure", kSwitch},
                                           {"no-local-socket", kSwitch},
                                           {"help", kSwitch}};
  AddSecurityFlags(&flags);
  CommandLine cl(flags);
  const std::string usage = Usage();
  const char* kUsage = usage.c_str();
  if (std::optional<int> rc = StartCommand(argc, argv, kUsage, {}, &cl)) {
    return *rc;
  }
  absl::StatusOr<std::shared_ptr<const Security>> security = SecurityFromFlags(cl);
  if (!security.ok()) return ReportUsage(security.status(), kUsage);
  absl::StatusOr<ClusterAndTask> where = ClusterAndTaskFromFlags(cl);
  if (!where.ok()) return ReportUsage(where.status(), kUsage);

  ServerOptions options;
  options.cluster = where->cluster;
  options.task = where->task;
  options.allow_non_loopback = cl.Get("allow-non-loopback") == "true";
  options.insecure = cl.Get("insecure") == "true";
  options.local_socket = cl.Get("no-local-socket") != "true";
  options.security = *security;
  if (cl.Has("file-root")) options.file_roots = cl.GetAll("file-root");
  absl::StatusOr<int64_t> cpus = cl.GetPositiveInt("cpus", 1, 1024);
  absl::StatusOr<int64_t> max_mb = cl.GetPositiveInt("max-message-mb", 1024, 2047);
  absl::StatusOr<int64_t> wait = cl.GetPositiveInt("wait-for-tasks-s", 120);
  absl::StatusOr<int64_t> gc = cl.GetPositiveInt("session-gc-s", 3600);
  absl::StatusOr<int64_t> memory = cl.GetByteSize("memory-limit", 0);
  absl::StatusOr<int64_t> rpc_mb = cl.GetPositiveInt("rpc-memory-mb", 0, int64_t{1} << 30);
  for (const absl::Status& s : {cpus.status(), max_mb.status(), wait.status(),
                                gc.status(), memory.status(), rpc_mb.status()}) {
    if (!s.ok()) return ReportUsage(s, kUsage);
  }
  if (cl.Has("gpus")) {
    absl::StatusOr<int64_t> gpus = cl.Get("gpus") == "0"
                                       ? absl::StatusOr<int64_t>(0)
                                       : cl.GetPositiveInt("gpus", -1, 1024);
    if (!gpus.ok()) return ReportUsage(gpus.status(), kUsage);
    options.max_gpus = static_cast<int>(*gpus);
  }
  options.num_cpus = static_cast<int>(*cpus);
  options.max_message_bytes = static_cast<int>(*max_mb << 20);
  options.rpc_memory_bytes = *rpc_mb << 20;
  options.wait_for_tasks = absl::Seconds(*wait);
  options.session_gc = absl::Seconds(*gc);
  options.memory_limit_bytes = *memory;
  options.log = [](absl::string_view line) {
    std::fprintf(stderr, "weft server: %.*s\n", static_cast<int>(line.size()),
                 line.data());
  };

  absl::StatusOr<std::unique_ptr<GrpcServer>> server = GrpcServer::Start(options);
  if (!server.ok()) return ReportError(server.status());
  std::vector<std::string> devices;
  for (const Device* d : (*server)->devices().devices()) {
    devices.push_back(d->name());
  }
  std::fprintf(stderr,
               "weft server: %s serving MasterService and WorkerService on %s%s "
               "(%s%s, pid %d)\nweft server: devices: %s\n"
               "weft server: graphs' file access: %s\n",
               (*server)->task_name().c_str(), (*server)->address().c_str(),
               (*server)->local_target().empty()
                   ? ""
                   : absl::StrCat(" and ", (*server)->local_target()).c_str(),
               (*security)->tls() ? "TLS" : "plaintext",
               (*security)->has_token() ? ", auth token" : "",
               static_cast<int>(getpid()), absl::StrJoin(devices, ", ").c_str(),
               options.file_roots.empty()
                   ? "none (--file-root DIR allows a directory)"
                   : absl::StrJoin(options.file_roots, ", ").c_str());
  std::fflush(stderr);

  // Until SIGTERM or SIGINT; a listener that gRPC gave up (it accepts no
  // connection any more) ends the task with an error, so that whatever
  // supervises it starts it again, rather than leave it up and deaf.
  int signal_number = 0;
  while (signal_number == 0) {
    timespec tick{1, 0};
    const int got = sigtimedwait(&signals, nullptr, &tick);
    if (got == SIGTERM || got == SIGINT) {
      signal_number = got;
    } else if (GrpcListenerFailed()) {
      std::fprintf(stderr,
                   "weft server: %s: the listener on %s stopped accepting "
                   "connections (gRPC: accept4 failed, e.g. past the open-file "
                   "limit); exiting with status 1 so that the task is started "
                   "again\n",
                   (*server)->task_name().c_str(), (*server)->address().c_str());
      (*server)->Shutdown();
      return kExitError;
    }
  }
  std::fprintf(stderr, "weft server: %s shutting down (%s)\n",
               (*server)->task_name().c_str(),
               signal_number == SIGINT ? "SIGINT" : "SIGTERM");
  (*server)->Shutdown();
  server->reset();
  std::fprintf(stderr, "weft server: stopped\n");
  return kExitOk;
}

}  // namespace weft
