#include "tools/compare/local_processes.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

namespace weft {

sigset_t BlockStopSignals() {
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
  return blocked;
}

namespace {

// A socket bound to a free loopback port, and the port; -1 when none could
// be had. While the socket stays open, the kernel hands the port to no one
// else.
std::pair<int, int> BindFreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {-1, -1};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return {-1, -1};
  }
  return {fd, ntohs(addr.sin_port)};
}

}  // namespace

absl::StatusOr<ClusterSpec> LocalCluster(int64_t ps, int64_t workers) {
  // Every socket stays bound until every port is chosen: closed one by
  // one, the kernel could hand the same port out twice, and the spec would
  // name one address for two tasks.
  std::vector<int> held;
  absl::Cleanup release = [&held] {
    for (int fd : held) close(fd);
  };
  std::vector<std::string> jobs;
  for (const auto& [job, n] : {std::pair<const char*, int64_t>{"ps", ps},
                               {"worker", workers}}) {
    std::vector<std::string> addresses;
    for (int64_t i = 0; i < n; ++i) {
      const auto [fd, port] = BindFreeLoopbackPort();
      if (fd < 0) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "could not find a free loopback port: ", std::strerror(errno)));
      }
      held.push_back(fd);
      addresses.push_back(absl::StrCat("127.0.0.1:", port));
    }
    if (n > 0) jobs.push_back(absl::StrCat(job, "=", absl::StrJoin(addresses, ",")));
  }
  return ParseClusterSpec(absl::StrJoin(jobs, ";"));
}

absl::StatusOr<std::string> WriteGeneratedToken(const std::string& dir) {
  unsigned char bytes[16];
  FILE* random = std::fopen("/dev/urandom", "rb");
  const bool read =
      random != nullptr && std::fread(bytes, 1, sizeof(bytes), random) == sizeof(bytes);
  if (random != nullptr) std::fclose(random);
  if (!read) {
    return absl::FailedPreconditionError(
        "cannot read /dev/urandom for the cluster's auth token");
  }
  std::string token;
  for (unsigned char b : bytes) absl::StrAppend(&token, absl::Hex(b, absl::kZeroPad2));
  const std::string path = dir + "/auth_token";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || write(fd, token.data(), token.size()) !=
                    static_cast<ssize_t>(token.size())) {
    if (fd >= 0) close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot write the cluster's auth token to ", path));
  }
  close(fd);
  return path;
}

std::string Tail(const std::string& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.size() > bytes) text = "..." + text.substr(text.size() - bytes);
  return text;
}

std::string ExitText(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exit status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    return absl::StrCat("killed by signal ", WTERMSIG(status), " (",
                        strsignal(WTERMSIG(status)), ")");
  }
  return "ended";
}

absl::Status SpawnWeft(const std::vector<std::string>& args,
                       const sigset_t& blocked, Child* c) {
  const int fd = open(c->log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot write the log ", c->log, ": ", std::strerror(errno)));
  }
  std::vector<std::string> all = {"weft"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fd);
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot start a process for 'weft ", args.empty() ? "" : args[0],
        "': ", std::strerror(errno)));
  }
  if (pid == 0) {
    // The child: stopped with its parent however that ends.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    sigprocmask(SIG_UNBLOCK, &blocked, nullptr);
    execv("/proc/self/exe", argv.data());
    std::fprintf(stderr, "weft: cannot run /proc/self/exe: %s\n",
                 std::strerror(errno));
    _exit(127);
  }
  close(fd);
  c->pid = pid;
  c->running = true;
  return absl::OkStatus();
}

bool StillRunning(Child* c) {
  if (!c->running) return false;
  const pid_t r = waitpid(c->pid, &c->status, WNOHANG);
  if (r == c->pid || r < 0) c->running = false;
  return c->running;
}

void StopAll(std::vector<Child>* children, absl::Duration grace) {
  for (Child& c : *children) {
    if (c.running) kill(c.pid, SIGTERM);
  }
  const absl::Time deadline = absl::Now() + grace;
  for (Child& c : *children) {
    while (StillRunning(&c)) {
      if (absl::Now() > deadline) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, &c.status, 0);
        c.running = false;
      } else {
        absl::SleepFor(absl::Milliseconds(20));
      }
    }
  }
}

}  // namespace weft
