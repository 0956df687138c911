#include "tools/compare/network.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace weft {
namespace {

// EnterRunNetwork's work: false when namespaces are not allowed here
// (*note says why; the process is back in the namespace it started in).
bool EnterPrivateNetwork(const std::string& link_rate, std::string* note) {
  static const int original = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (original < 0 || unshare(CLONE_NEWNET) != 0) {
    *note = absl::StrCat("no private network namespace (",
                         std::strerror(errno), ")");
    return false;
  }
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  bool up = fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0;
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  up = up && ioctl(fd, SIOCSIFFLAGS, &ifr) == 0;
  const int err = errno;
  if (fd >= 0) close(fd);
  if (!up) {
    setns(original, CLONE_NEWNET);
    *note = absl::StrCat("no private network namespace (cannot bring up its "
                         "loopback: ", std::strerror(err), ")");
    return false;
  }
  if (link_rate.empty()) {
    *note = "private loopback per run";
  } else if (std::system(absl::StrCat("tc qdisc add dev lo root tbf rate ",
                                      link_rate,
                                      " burst 256kb latency 100ms "
                                      ">/dev/null 2>&1")
                             .c_str()) == 0) {
    *note = absl::StrCat("private loopback per run, shaped to ", link_rate);
  } else {
    *note = absl::StrCat("private loopback per run, NOT shaped to ", link_rate,
                         ": tc failed (is it installed, and is ", link_rate,
                         " a tc rate?)");
  }
  return true;
}

}  // namespace

RunNetwork EnterRunNetwork(const std::string& link_rate) {
  RunNetwork n;
  std::string why;
  n.private_loopback = EnterPrivateNetwork(link_rate, &why);
  n.note = n.private_loopback
               ? why
               : absl::StrCat("shared loopback, ", why,
                              ": bytes include other traffic",
                              link_rate.empty() ? "" : "; --link-rate skipped");
  return n;
}

int64_t LoopbackBytes() {
  std::ifstream in("/proc/self/net/dev");
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view v = line;
    const size_t colon = v.find(':');
    if (colon == absl::string_view::npos) continue;
    std::string name(absl::StripAsciiWhitespace(v.substr(0, colon)));
    if (name != "lo") continue;
    std::vector<std::string> f = absl::StrSplit(
        std::string(v.substr(colon + 1)), ' ', absl::SkipEmpty());
    int64_t tx = 0;
    // receive: bytes packets errs drop fifo frame compressed multicast;
    // then transmit bytes.
    if (f.size() > 8 && absl::SimpleAtoi(f[8], &tx)) return tx;
  }
  return -1;
}

bool Accepts(const std::string& address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port)) {
    return false;
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr);
  const bool ok =
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

}  // namespace weft
