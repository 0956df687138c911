// Tasks on one host reach each other over their local sockets: which
// addresses have one, that a server listens there unless told not to, that
// a channel goes where the socket is and back to TCP when it goes away, and
// that a socket another user holds is not trusted.
#include "distributed/rpc/local_socket.h"
#include "distributed/rpc/socket_options.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "distributed/rpc/grpc_security.h"
#include "distributed/rpc/grpc_server.h"
#include "distributed/rpc/grpc_worker_cache.h"
#include "gtest/gtest.h"
#include "proto/worker.pb.h"
#include "tests/distributed/free_port.h"

namespace weft {
namespace {

ServerOptions Options(const std::string& address, bool local_socket) {
  ServerOptions o;
  o.cluster = ParseClusterSpec(absl::StrCat("worker=", address)).value();
  o.task = {"worker", 0};
  o.max_gpus = 0;
  o.inter_op_threads = 1;
  o.intra_op_threads = 1;
  o.local_socket = local_socket;
  o.log = [](absl::string_view) {};
  return o;
}

// The kernel's address of the local socket of `address`, and its length.
socklen_t SocketAddress(const std::string& address, sockaddr_un* sa) {
  *sa = sockaddr_un{};
  sa->sun_family = AF_UNIX;
  const std::string name = LocalSocketName(address);
  std::memcpy(sa->sun_path + 1, name.data(), name.size());
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 +
                                name.size());
}

// Whether `fd`'s own address (`get`: getsockname) or its peer's
// (getpeername) is the local socket of `address`.
bool IsLocalSocketOf(int fd, decltype(&getsockname) get,
                     const std::string& address) {
  sockaddr_un want;
  const socklen_t want_len = SocketAddress(address, &want);
  sockaddr_un sa{};
  socklen_t len = sizeof(sa);
  return get(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0 &&
         len == want_len && std::memcmp(&sa, &want, len) == 0;
}

// A listener on the local socket of `address` that is not a gRPC server:
// counts the connections it accepts and closes them.
class StandIn {
 public:
  explicit StandIn(const std::string& address) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa;
    const socklen_t len = SocketAddress(address, &sa);
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&sa), len) == 0 &&
             listen(fd_, 16) == 0;
    thread_ = std::thread([this] {
      while (true) {
        const int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;  // shut down
        ++accepted_;
        close(c);
      }
    });
  }
  ~StandIn() { Close(); }
  void Close() {
    if (thread_.joinable()) {
      shutdown(fd_, SHUT_RDWR);
      thread_.join();
      close(fd_);
    }
  }
  bool bound() const { return bound_; }
  int accepted() const { return accepted_.load(); }

 private:
  int fd_ = -1;
  bool bound_ = false;
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

absl::Status GetStatus(WorkerInterface* worker) {
  tensorflow::GetStatusRequest req;
  tensorflow::GetStatusResponse resp;
  absl::Notification done;
  absl::Status status;
  worker->GetStatusAsync(&req, &resp, [&](absl::Status s) {
    status = s;
    done.Notify();
  });
  done.WaitForNotification();
  return status;
}

TEST(LocalSocketTest, OnlyLoopbackAddressesWithAPortAndWithoutTls) {
  const Security& none = *Security::None();
  EXPECT_TRUE(LocalSocketApplies("127.0.0.1:2222", none));
  EXPECT_TRUE(LocalSocketApplies("127.0.0.3:2222", none));
  EXPECT_TRUE(LocalSocketApplies("localhost:2222", none));
  EXPECT_TRUE(LocalSocketApplies("[::1]:2222", none));
  EXPECT_FALSE(LocalSocketApplies("127.0.0.1:0", none));
  EXPECT_FALSE(LocalSocketApplies("10.0.0.7:2222", none));
  EXPECT_FALSE(LocalSocketApplies("ps0.example.com:2222", none));
  EXPECT_FALSE(LocalSocketApplies("127.0.0.1", none));
  EXPECT_FALSE(LocalSocketApplies(std::string(200, 'a') + ":1", none));
  EXPECT_EQ(LocalSocketTarget("127.0.0.1:2222"),
            "unix-abstract:weft-task/127.0.0.1:2222");
}

TEST(LocalSocketTest, AServerListensThereUnlessToldNot) {
  const std::string address = absl::StrCat("127.0.0.1:", FreePort());
  {
    auto server = GrpcServer::Start(Options(address, true));
    ASSERT_TRUE(server.ok()) << server.status();
    EXPECT_EQ((*server)->local_target(), LocalSocketTarget(address));
    EXPECT_TRUE(LocalSocketAnswers(address, *Security::None()));
    (*server)->Shutdown();
  }
  EXPECT_FALSE(LocalSocketAnswers(address, *Security::None()));
  auto server = GrpcServer::Start(Options(address, false));
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->local_target(), "");
  EXPECT_FALSE(LocalSocketAnswers(address, *Security::None()));
  // Reached over TCP alone.
  auto worker = NewGrpcRemoteWorker("/job:worker/replica:0/task:0", address, {});
  EXPECT_TRUE(GetStatus(worker.get()).ok());
}

// The channel goes to the local socket when one answers there (here a
// stand-in that speaks no HTTP/2, so the call fails), and back to TCP,
// where the real task serves, once it has gone.
TEST(LocalSocketTest, AChannelGoesWhereTheSocketIsAndBackToTcp) {
  const std::string address = absl::StrCat("127.0.0.1:", FreePort());
  auto server = GrpcServer::Start(Options(address, false));
  ASSERT_TRUE(server.ok()) << server.status();
  StandIn stand_in(address);
  ASSERT_TRUE(stand_in.bound());
  ASSERT_TRUE(LocalSocketAnswers(address, *Security::None()));
  GrpcChannelOptions options;
  options.status_timeout = absl::Seconds(2);
  auto worker = NewGrpcRemoteWorker("/job:worker/replica:0/task:0", address,
                                    options);
  const absl::Status failed = GetStatus(worker.get());
  EXPECT_FALSE(failed.ok());
  EXPECT_GE(stand_in.accepted(), 2);  // the probe, then gRPC's connection
  stand_in.Close();
  absl::Status s;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (!(s = GetStatus(worker.get())).ok() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(200));
  }
  EXPECT_TRUE(s.ok()) << s;
}

// The Unix sockets of this process whose address (either end) is the
// local socket of `address`, with their send buffers.
std::vector<int> SendBuffersOfLocalSockets(const std::string& address) {
  std::vector<int> buffers;
  for (int fd = 0; fd < 4096; ++fd) {
    for (auto get : {&getsockname, &getpeername}) {
      if (!IsLocalSocketOf(fd, get, address)) continue;
      int listening = 0;
      socklen_t size = sizeof(listening);
      getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size);
      if (listening) break;
      int bytes = 0;
      size = sizeof(bytes);
      getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, &size);
      buffers.push_back(bytes);
      break;
    }
  }
  return buffers;
}

// Both ends of a local socket connection (the channel's and the one the
// server accepted) get the larger send buffer, up to the kernel's cap.
TEST(LocalSocketTest, BothEndsGetTheLargerSendBuffer) {
  const std::string address = absl::StrCat("127.0.0.1:", FreePort());
  auto server = GrpcServer::Start(Options(address, true));
  ASSERT_TRUE(server.ok()) << server.status();
  auto worker = NewGrpcRemoteWorker("/job:worker/replica:0/task:0", address, {});
  ASSERT_TRUE(GetStatus(worker.get()).ok());
  int cap = kLocalSocketSendBuffer;
  if (FILE* f = std::fopen("/proc/sys/net/core/wmem_max", "r")) {
    if (std::fscanf(f, "%d", &cap) != 1) cap = kLocalSocketSendBuffer;
    std::fclose(f);
  }
  const int expected = 2 * std::min(cap, kLocalSocketSendBuffer);  // Linux doubles it
  const std::vector<int> buffers = SendBuffersOfLocalSockets(address);
  ASSERT_EQ(buffers.size(), 2u) << "the channel's end and the server's";
  for (int b : buffers) EXPECT_EQ(b, expected);
}

// Connections of this process to the local socket of `address` (the
// channel's ends).
int ConnectionsToLocalSocket(const std::string& address) {
  int n = 0;
  for (int fd = 0; fd < 4096; ++fd) {
    if (IsLocalSocketOf(fd, &getpeername, address)) ++n;
  }
  return n;
}

// A task that goes away is reached over TCP meanwhile, and over its socket
// again once it is back with one.
TEST(LocalSocketTest, ARestartedTaskIsReachedOverItsSocketAgain) {
  const std::string address = absl::StrCat("127.0.0.1:", FreePort());
  auto server = GrpcServer::Start(Options(address, true));
  ASSERT_TRUE(server.ok()) << server.status();
  GrpcChannelOptions options;
  options.status_timeout = absl::Seconds(2);
  auto worker = NewGrpcRemoteWorker("/job:worker/replica:0/task:0", address,
                                    options);
  ASSERT_TRUE(GetStatus(worker.get()).ok());
  EXPECT_EQ(ConnectionsToLocalSocket(address), 1);
  (*server)->Shutdown();
  server->reset();
  EXPECT_FALSE(GetStatus(worker.get()).ok());  // over TCP from now on
  server = GrpcServer::Start(Options(address, true));
  ASSERT_TRUE(server.ok()) << server.status();
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline &&
         !(GetStatus(worker.get()).ok() && ConnectionsToLocalSocket(address) == 1)) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(GetStatus(worker.get()).ok());
  EXPECT_EQ(ConnectionsToLocalSocket(address), 1)
      << "the channel stayed on TCP after the task came back";
}

TEST(LocalSocketTest, ASocketAnotherUserHoldsIsNotTrusted) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root, to hold a socket as another user";
  }
  const std::string address = absl::StrCat("127.0.0.1:", FreePort());
  sockaddr_un sa;
  const socklen_t len = SocketAddress(address, &sa);  // before the fork
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Only system calls from here on: the parent has threads.
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(1);
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (bind(fd, reinterpret_cast<sockaddr*>(&sa), len) != 0 ||
        listen(fd, 4) != 0) {
      _exit(2);
    }
    (void)!write(ready[1], "r", 1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char c;
  const bool up = read(ready[0], &c, 1) == 1;
  close(ready[0]);
  if (up) EXPECT_FALSE(LocalSocketAnswers(address, *Security::None()));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  if (!up && WIFEXITED(status) && WEXITSTATUS(status) == 1) {
    GTEST_SKIP() << "this root cannot become another user (no CAP_SETUID)";
  }
  ASSERT_TRUE(up) << "the other user's listener did not start";
}

}  // namespace
}  // namespace weft
