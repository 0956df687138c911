// Child `weft` processes on this machine, for the commands that start a
// local cluster (weft launch, weft compare): free loopback ports, spawning
// a subcommand with its output to a log, and stopping them all. It lives
// with weft compare's libraries, below the CLI, so that the runner
// (runner.h) can use it; weft launch uses it from tools/.
//
// Children get SIGTERM when the parent dies (PR_SET_PDEATHSIG), so a killed
// launcher leaves no task behind. Not thread-safe: one thread spawns,
// waits and stops.
#ifndef WEFT_TOOLS_COMPARE_LOCAL_PROCESSES_H_
#define WEFT_TOOLS_COMPARE_LOCAL_PROCESSES_H_

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "distributed/cluster_spec.h"

namespace weft {

struct Child {
  TaskId task;          // the cluster task it serves, if any
  std::string address;  // its address then
  std::string log;      // stdout and stderr go there
  pid_t pid = -1;
  bool running = false;
  int status = 0;       // waitpid's, once it ended
};

// Blocks SIGINT, SIGTERM and SIGCHLD in the calling thread, so that a
// watcher waits for them (sigwaitinfo, sigtimedwait) between its checks
// instead of being interrupted; returns that set (SpawnWeft unblocks it in
// the children). Call before any thread starts, so they inherit the mask.
sigset_t BlockStopSignals();

// N ps and M worker tasks on distinct free loopback ports (127.0.0.1).
absl::StatusOr<ClusterSpec> LocalCluster(int64_t ps, int64_t workers);

// A new random auth token (128 bits, hex) in `dir`/auth_token, readable by
// this user alone: the clusters a command starts for itself use one, so
// that no other local user's process can call their tasks. Returns the
// file's path.
absl::StatusOr<std::string> WriteGeneratedToken(const std::string& dir);

// The last `bytes` of a file ("..." first when cut).
std::string Tail(const std::string& path, size_t bytes = 2000);
// "exit status 1", "killed by signal 9 (Killed)".
std::string ExitText(int status);

// Runs this binary (/proc/self/exe) with `args` (the subcommand and its
// flags), output to c->log, signals in `blocked` unblocked in the child.
// Sets c->pid and c->running.
absl::Status SpawnWeft(const std::vector<std::string>& args,
                       const sigset_t& blocked, Child* c);

// Reaps `c` if it ended (non-blocking); true if it is still running.
bool StillRunning(Child* c);

// SIGTERM to every running child, SIGKILL to those still there after
// `grace`; reaps them all.
void StopAll(std::vector<Child>* children,
             absl::Duration grace = absl::Seconds(15));

}  // namespace weft

#endif  // WEFT_TOOLS_COMPARE_LOCAL_PROCESSES_H_
