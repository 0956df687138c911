// A loopback TCP port nothing listens on now (the kernel's next ephemeral
// one), for tests that must write a task's port into a cluster spec before
// the task starts. Another process may take it meanwhile; the tests that
// use it start their servers at once.
#ifndef WEFT_TESTS_DISTRIBUTED_FREE_PORT_H_
#define WEFT_TESTS_DISTRIBUTED_FREE_PORT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace weft {

inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  const bool ok =
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  return ok ? ntohs(addr.sin_port) : 0;
}

}  // namespace weft

#endif  // WEFT_TESTS_DISTRIBUTED_FREE_PORT_H_
