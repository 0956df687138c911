#include "distributed/rpc/socket_options.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpc/support/sync.h"
#include "grpcpp/version_info.h"

// gRPC's public headers declare grpc_socket_mutator without its layout,
// which lives in an internal header (src/core/lib/iomgr/socket_mutator.h)
// together with grpc_socket_mutator_init, which libgrpc exports. These are
// that header's declarations as of gRPC 1.51 (the version this project
// builds with: the vtable's fourth entry, mutate_fd_2, is the one gRPC
// calls for every socket, accepted ones included); another version gets no
// mutator rather than a guess.
#if GRPC_CPP_VERSION_MAJOR == 1 && GRPC_CPP_VERSION_MINOR == 51
#define WEFT_GRPC_SOCKET_MUTATOR 1
typedef struct {
  int fd;
  int usage;  // grpc_fd_usage
} grpc_mutate_socket_info;
struct grpc_socket_mutator_vtable {
  bool (*mutate_fd)(int fd, grpc_socket_mutator* mutator);
  int (*compare)(grpc_socket_mutator* a, grpc_socket_mutator* b);
  void (*destroy)(grpc_socket_mutator* mutator);
  bool (*mutate_fd_2)(const grpc_mutate_socket_info* info,
                      grpc_socket_mutator* mutator);
};
struct grpc_socket_mutator {
  const grpc_socket_mutator_vtable* vtable;
  gpr_refcount refcount;
};
void grpc_socket_mutator_init(grpc_socket_mutator* mutator,
                              const grpc_socket_mutator_vtable* vtable);
#endif

namespace weft {

int ServerConnectionFdCap() {
  static const int cap = [] {
    rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
      return 16384;
    }
    const int64_t soft = static_cast<int64_t>(limit.rlim_cur);
    const int64_t kept = std::max<int64_t>(256, soft / 8);
    return static_cast<int>(std::clamp<int64_t>(soft - kept, 64, 16384));
  }();
  return cap;
}

namespace {

#ifdef WEFT_GRPC_SOCKET_MUTATOR
// gRPC's grpc_fd_usage: what the descriptor is for.
constexpr int kServerConnection = 2;

// Shuts the accepted `fd` down (gRPC reads the end and closes it) and
// says why, at most every 10 s.
void RefuseConnection(int fd, const std::string& why) {
  (void)shutdown(fd, SHUT_RDWR);
  static std::atomic<int64_t> last_said{0};
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  int64_t said = last_said.load(std::memory_order_relaxed);
  if (now - said >= 10 &&
      last_said.compare_exchange_strong(said, now, std::memory_order_relaxed)) {
    std::fprintf(stderr, "weft: refusing new connections: %s\n", why.c_str());
  }
}

// The connections each peer address holds open, as (descriptor, inode)
// pairs; one whose descriptor now names another socket, or none, has
// closed. Checked for a peer when it connects, for all past 4096 peers.
class PeerConnections {
 public:
  // Whether `fd`, from `peer`, is within the peer's share; records it.
  bool Admit(int fd, const std::string& peer) {
    struct stat st;
    if (fstat(fd, &st) != 0) return true;
    absl::MutexLock lock(&mu_);
    if (peers_.size() > 4096) {
      for (auto it = peers_.begin(); it != peers_.end();) {
        Prune(&it->second);
        if (it->second.empty()) {
          peers_.erase(it++);
        } else {
          ++it;
        }
      }
    }
    std::vector<std::pair<int, ino_t>>& open = peers_[peer];
    Prune(&open);
    if (static_cast<int>(open.size()) >= kMaxServerConnectionsPerPeer) return false;
    open.emplace_back(fd, st.st_ino);
    return true;
  }

 private:
  static void Prune(std::vector<std::pair<int, ino_t>>* open) {
    open->erase(std::remove_if(open->begin(), open->end(),
                               [](const std::pair<int, ino_t>& c) {
                                 struct stat st;
                                 return fstat(c.first, &st) != 0 ||
                                        st.st_ino != c.second;
                               }),
                open->end());
  }

  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::vector<std::pair<int, ino_t>>> peers_
      ABSL_GUARDED_BY(mu_);
};

// The peer's address without its port; "" for a Unix socket.
std::string PeerHost(int fd) {
  sockaddr_storage address;
  socklen_t length = sizeof(address);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return "";
  }
  char host[INET6_ADDRSTRLEN] = "";
  if (address.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&address)->sin_addr,
              host, sizeof(host));
  } else if (address.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&address)->sin6_addr,
              host, sizeof(host));
  }
  // An IPv4 peer of a dual-stack socket is the IPv4 address.
  return std::string(absl::StripPrefix(host, "::ffff:"));
}

// A server's new connection: within the caps, or refused.
void AdmitConnection(int fd) {
  if (fd >= ServerConnectionFdCap()) {
    RefuseConnection(fd, absl::StrCat(
        fd, " descriptors are open, the most this server keeps for "
        "connections (its open-file limit less a reserve); a client may be "
        "opening connections without closing them"));
    return;
  }
  const std::string peer = PeerHost(fd);
  if (peer.empty()) return;  // a local socket: this user's own processes
  static PeerConnections* const peers = new PeerConnections;
  if (!peers->Admit(fd, peer)) {
    RefuseConnection(fd, absl::StrCat(
        peer, " holds ", kMaxServerConnectionsPerPeer,
        " connections already, the most one address may"));
  }
}

bool MutateFd(int fd, int usage) {
  // Never false for a server's connection: gRPC would give the port up.
  if (usage == kServerConnection) AdmitConnection(fd);
  sockaddr_storage address;
  socklen_t length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0 &&
      address.ss_family == AF_UNIX) {
    const int bytes = kLocalSocketSendBuffer;
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
  }
  return true;  // a failure leaves the default, which works
}

const grpc_socket_mutator_vtable kVtable = {
    [](int fd, grpc_socket_mutator*) { return MutateFd(fd, -1); },
    [](grpc_socket_mutator*, grpc_socket_mutator*) { return 0; },
    [](grpc_socket_mutator* m) { delete m; },
    [](const grpc_mutate_socket_info* info, grpc_socket_mutator*) {
      return MutateFd(info->fd, info->usage);
    },
};

// A new mutator, whose one reference the channel arguments take.
grpc_socket_mutator* NewMutator() {
  auto* mutator = new grpc_socket_mutator;
  grpc_socket_mutator_init(mutator, &kVtable);
  return mutator;
}
#endif

class SocketOption final : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments* args) override {
    AddSocketOptions(args);
  }
  void UpdatePlugins(
      std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>*) override {}
};

}  // namespace

void AddSocketOptions(grpc::ChannelArguments* args) {
#ifdef WEFT_GRPC_SOCKET_MUTATOR
  args->SetSocketMutator(NewMutator());
#else
  (void)args;
#endif
}

std::unique_ptr<grpc::ServerBuilderOption> ServerSocketOptions() {
  return std::make_unique<SocketOption>();
}

}  // namespace weft
