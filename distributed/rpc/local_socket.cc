#include "distributed/rpc/local_socket.h"

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "distributed/rpc/grpc_security.h"
#include "grpc/support/sync.h"
#include "grpcpp/version_info.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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
namespace {

constexpr absl::string_view kNamePrefix = "weft-task/";

#ifdef WEFT_GRPC_SOCKET_MUTATOR
// Larger send buffers on Unix sockets; nothing else changes.
bool MutateFd(int fd) {
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
    [](int fd, grpc_socket_mutator*) { return MutateFd(fd); },
    [](grpc_socket_mutator*, grpc_socket_mutator*) { return 0; },
    [](grpc_socket_mutator* m) { delete m; },
    [](const grpc_mutate_socket_info* info, grpc_socket_mutator*) {
      return MutateFd(info->fd);
    },
};

// A new mutator, whose one reference the channel arguments take.
grpc_socket_mutator* NewMutator() {
  auto* mutator = new grpc_socket_mutator;
  grpc_socket_mutator_init(mutator, &kVtable);
  return mutator;
}
#endif

class BuffersOption final : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments* args) override {
    AddLocalSocketBuffers(args);
  }
  void UpdatePlugins(
      std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>*) override {}
};

}  // namespace

void AddLocalSocketBuffers(grpc::ChannelArguments* args) {
#ifdef WEFT_GRPC_SOCKET_MUTATOR
  args->SetSocketMutator(NewMutator());
#else
  (void)args;
#endif
}

std::unique_ptr<grpc::ServerBuilderOption> LocalSocketBuffersOption() {
  return std::make_unique<BuffersOption>();
}

bool IsLoopbackHost(absl::string_view host) {
  host = absl::StripPrefix(absl::StripSuffix(host, "]"), "[");
  if (absl::EqualsIgnoreCase(host, "localhost") || host == "::1") return true;
  if (!absl::StartsWith(host, "127.")) return false;
  int parts = 0;
  for (absl::string_view p : absl::StrSplit(host, '.')) {
    int v;
    if (!absl::SimpleAtoi(p, &v) || v < 0 || v > 255) return false;
    ++parts;
  }
  return parts == 4;
}

bool LocalSocketApplies(absl::string_view address, const Security& security) {
  if (security.tls()) return false;
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return false;
  int port = 0;
  if (!absl::SimpleAtoi(address.substr(colon + 1), &port) || port <= 0) {
    return false;
  }
  // sun_path holds the leading NUL, the prefix and the address.
  if (1 + kNamePrefix.size() + address.size() > sizeof(sockaddr_un::sun_path)) {
    return false;
  }
  return IsLoopbackHost(address.substr(0, colon));
}

std::string LocalSocketName(absl::string_view address) {
  return absl::StrCat(kNamePrefix, address);
}

std::string LocalSocketTarget(absl::string_view address) {
  return absl::StrCat("unix-abstract:", LocalSocketName(address));
}

bool LocalSocketAnswers(absl::string_view address, const Security& security) {
  if (!LocalSocketApplies(address, security)) return false;
  sockaddr_un sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sun_family = AF_UNIX;
  const std::string name = LocalSocketName(address);
  std::memcpy(sa.sun_path + 1, name.data(), name.size());
  const socklen_t length =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ours = false;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&sa), length) == 0) {
    ucred peer;
    socklen_t size = sizeof(peer);
    ours = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 &&
           peer.uid == geteuid();
  }
  close(fd);
  return ours;
}

}  // namespace weft
