// weft launch: every task of a cluster that lives on this machine, as child
// `weft server` processes, watched until Ctrl-C or until one of them dies
// (what torchrun is to a PyTorch job, for a TensorFlow-style cluster).
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "distributed/cluster_spec.h"
#include "distributed/rpc/grpc_server.h"
#include "distributed/rpc/local_socket.h"
#include "distributed/rpc/grpc_worker_cache.h"
#include "proto/worker.pb.h"
#include "runtime/checkpoint/file_util.h"
#include "tools/cluster_flags.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/compare/local_processes.h"

namespace weft {
namespace {

constexpr char kUsage[] =
    "usage: weft launch --cluster SPEC [flags]\n"
    "       weft launch --ps N --workers M [flags]\n"
    "\n"
    "Starts every task of the cluster whose host is this machine (loopback\n"
    "addresses) as a child 'weft server', waits until each answers, prints\n"
    "one line per task, and watches them: Ctrl-C (or SIGTERM) stops them\n"
    "all; when one dies the others are stopped and its exit status and the\n"
    "end of its log are printed.\n"
    "\n"
    "  --cluster SPEC        as for weft server (flag form, JSON or @FILE)\n"
    "  --ps N --workers M    a cluster of N ps and M worker tasks on free\n"
    "                        loopback ports (127.0.0.1)\n"
    "  --log-dir DIR         where each task's log goes, made if missing\n"
    "                        (default: a new directory under /tmp)\n"
    "  --start-timeout-s N   how long to wait for every task to answer\n"
    "                        (default 60)\n"
    "  --cpus N              CPU devices per task (default 1)\n"
    "  --no-local-socket     the tasks talk over TCP alone (see weft server)\n"
    "  --file-root DIR       (repeatable) passed to every task: where its\n"
    "                        graphs may read and write files (see weft server)\n"
    "  --tls-cert, --tls-key, --tls-ca, --auth-token-file: passed to every\n"
    "                        task (see weft server --help)\n";

std::string Host(const std::string& address) {
  return address.substr(0, address.rfind(':'));
}

// Starts `weft server` for the child's task; its output goes to its log.
absl::Status Spawn(const ClusterSpec& spec, const std::string& cpus,
                   const std::vector<std::string>& extra,
                   const sigset_t& blocked, Child* c) {
  std::vector<std::string> args = {"server", "--cluster", spec.ToString(),
                                   "--job", c->task.job, "--task",
                                   std::to_string(c->task.index), "--cpus", cpus};
  args.insert(args.end(), extra.begin(), extra.end());
  return SpawnWeft(args, blocked, c);
}

// Asks the task for its devices, through `worker`, until it answers or
// `deadline`.
absl::Status WaitUntilServing(const Child& c, WorkerInterface* worker,
                              absl::Time deadline) {
  absl::Status last;
  while (absl::Now() < deadline) {
    tensorflow::GetStatusRequest req;
    tensorflow::GetStatusResponse resp;
    absl::Notification done;
    worker->GetStatusAsync(&req, &resp, [&](absl::Status s) {
      last = s;
      done.Notify();
    });
    done.WaitForNotification();
    if (last.ok()) return last;
    int status;
    if (waitpid(c.pid, &status, WNOHANG) == c.pid) {
      return absl::AbortedError(absl::StrCat(
          c.task.ToString(), " ended before it answered (", ExitText(status),
          "); the end of its log ", c.log, ":\n", Tail(c.log)));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      c.task.ToString(), " at ", c.address, " did not answer GetStatus in time (",
      last.message(), "); see its log ", c.log));
}

}  // namespace

int LaunchCommand(int argc, char** argv) {
  const sigset_t blocked = BlockStopSignals();

  std::map<std::string, FlagKind> flags = {{"cluster", kValue},
                                           {"ps", kValue},
                                           {"workers", kValue},
                                           {"log-dir", kValue},
                                           {"start-timeout-s", kValue},
                                           {"cpus", kValue},
                                           {"no-local-socket", kSwitch},
                                           {"file-root", kRepeated},
                                           {"help", kSwitch}};
  AddSecurityFlags(&flags);
  CommandLine cl(flags);
  if (std::optional<int> rc = StartCommand(argc, argv, kUsage, {}, &cl)) {
    return *rc;
  }
  absl::StatusOr<std::shared_ptr<const Security>> security = SecurityFromFlags(cl);
  if (!security.ok()) return ReportUsage(security.status(), kUsage);
  absl::StatusOr<ClusterSpec> spec;
  if (cl.Has("cluster")) {
    if (cl.Has("ps") || cl.Has("workers")) {
      return ReportUsage(absl::InvalidArgumentError(
                             "give --cluster or --ps/--workers, not both"),
                         kUsage);
    }
    spec = ClusterFromFlag(cl.Get("cluster"));
  } else if (cl.Has("workers")) {
    absl::StatusOr<int64_t> workers = cl.GetPositiveInt("workers", 1, 256);
    absl::StatusOr<int64_t> ps =
        cl.Get("ps", "0") == "0" ? absl::StatusOr<int64_t>(0)
                                 : cl.GetPositiveInt("ps", 0, 256);
    if (!workers.ok()) return ReportUsage(workers.status(), kUsage);
    if (!ps.ok()) return ReportUsage(ps.status(), kUsage);
    spec = LocalCluster(*ps, *workers);
  } else {
    return ReportUsage(
        absl::InvalidArgumentError("give --cluster SPEC, or --ps N --workers M"),
        kUsage);
  }
  if (!spec.ok()) return ReportUsage(spec.status(), kUsage);
  absl::StatusOr<int64_t> timeout = cl.GetPositiveInt("start-timeout-s", 60);
  absl::StatusOr<int64_t> cpus = cl.GetPositiveInt("cpus", 1, 1024);
  if (!timeout.ok()) return ReportUsage(timeout.status(), kUsage);
  if (!cpus.ok()) return ReportUsage(cpus.status(), kUsage);

  std::string log_dir = cl.Get("log-dir");
  if (log_dir.empty()) {
    char tmpl[] = "/tmp/weft-launch-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      return ReportError(absl::FailedPreconditionError(
          absl::StrCat("cannot make a log directory: ", std::strerror(errno))));
    }
    log_dir = tmpl;
  } else {
    absl::Status made = CreateDirectories(log_dir);
    if (!made.ok()) {
      return ReportError(absl::FailedPreconditionError(absl::StrCat(
          "--log-dir: ", made.message())));
    }
  }

  std::vector<std::string> server_args = SecurityArgs(cl);
  if (cl.Get("no-local-socket") == "true") server_args.push_back("--no-local-socket");
  if (cl.Has("file-root")) {
    for (const std::string& root : cl.GetAll("file-root")) {
      server_args.push_back("--file-root");
      server_args.push_back(root);
    }
  }

  std::vector<Child> children;
  for (const TaskId& task : spec->Tasks()) {
    Child c;
    c.task = task;
    c.address = *spec->Address(task);
    if (!IsLoopbackHost(Host(c.address))) {
      std::fprintf(stderr, "weft launch: %s at %s is not on this machine; start it there\n",
                   task.ToString().c_str(), c.address.c_str());
      continue;
    }
    c.log = absl::StrCat(log_dir, "/", task.job, "-", task.index, ".log");
    children.push_back(std::move(c));
  }
  if (children.empty()) {
    return ReportError(absl::InvalidArgumentError(
        "no task of the cluster has a loopback address; nothing to launch here"));
  }
  for (Child& c : children) {
    absl::Status s =
        Spawn(*spec, std::to_string(*cpus), server_args, blocked, &c);
    if (!s.ok()) {
      StopAll(&children);
      return ReportError(s);
    }
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(*timeout);
  // The channels live until the launcher ends: one torn down while gRPC
  // still tracks its connection (closed when the task stops) made gRPC
  // abort with 'ref_counted.h: prior > 0'.
  GrpcChannelOptions channel;
  channel.security = *security;
  channel.status_timeout = absl::Seconds(2);
  std::vector<std::unique_ptr<WorkerInterface>> probes;
  for (Child& c : children) {
    probes.push_back(
        NewGrpcRemoteWorker(c.task.DeviceNamePrefix(), c.address, channel));
    absl::Status s = WaitUntilServing(c, probes.back().get(), deadline);
    if (!s.ok()) {
      StopAll(&children);
      return ReportError(s);
    }
  }
  std::printf("weft launch: cluster %s\n", spec->ToString().c_str());
  for (const Child& c : children) {
    std::printf("  %-8s task %-3d %-22s pid %-7d log %s\n", c.task.job.c_str(),
                c.task.index, c.address.c_str(), static_cast<int>(c.pid),
                c.log.c_str());
  }
  // Clients talk to the chief: the "chief" task, else the first worker.
  const Child* chief = &children.front();
  for (const char* job : {"worker", "chief"}) {  // the later one wins
    for (const Child& c : children) {
      if (c.task.job == job) {
        chief = &c;
        break;
      }
    }
  }
  std::printf("weft launch: %zu task(s) serving; clients connect to grpc://%s; "
              "Ctrl-C stops them\n",
              children.size(), chief->address.c_str());
  std::fflush(stdout);

  for (;;) {
    siginfo_t info;
    const int sig = sigwaitinfo(&blocked, &info);
    if (sig == SIGINT || sig == SIGTERM) {
      std::printf("weft launch: stopping %zu task(s)\n", children.size());
      StopAll(&children);
      std::printf("weft launch: stopped\n");
      return kExitOk;
    }
    if (sig != SIGCHLD) continue;
    for (Child& c : children) {
      if (!c.running) continue;
      if (waitpid(c.pid, &c.status, WNOHANG) != c.pid) continue;
      c.running = false;
      std::fprintf(stderr,
                   "weft launch: %s at %s (pid %d) died: %s; stopping the "
                   "others. The end of its log %s:\n%s\n",
                   c.task.ToString().c_str(), c.address.c_str(),
                   static_cast<int>(c.pid), ExitText(c.status).c_str(),
                   c.log.c_str(), Tail(c.log).c_str());
      StopAll(&children);
      return kExitError;
    }
  }
}

}  // namespace weft
