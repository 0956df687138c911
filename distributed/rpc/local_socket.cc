#include "distributed/rpc/local_socket.h"

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "distributed/rpc/grpc_security.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace weft {
namespace {

constexpr absl::string_view kNamePrefix = "weft-task/";

}  // namespace

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
