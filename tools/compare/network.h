// The network a weft compare run's tasks talk over: where Linux allows it,
// a private network namespace per run (unshare(CLONE_NEWNET)), its
// loopback brought up and, with a rate, shaped with tc's token bucket
// filter (tbf), so that the bytes its loopback carries are exactly the
// run's and cross a link of the stated rate. Elsewhere the runs share the
// machine's loopback.
//
// Not thread-safe: EnterRunNetwork moves the calling process (which must
// be single-threaded, as unshare(CLONE_NEWNET) requires) into the new
// namespace, and the children it starts next go with it.
#ifndef WEFT_TOOLS_COMPARE_NETWORK_H_
#define WEFT_TOOLS_COMPARE_NETWORK_H_

#include <cstdint>
#include <string>

namespace weft {

struct RunNetwork {
  bool private_loopback = false;  // a namespace of the run's own
  // What the report says of it: "private loopback per run[, shaped to R]",
  // or "shared loopback, <why not>: bytes include other traffic" (with
  // "; --link-rate skipped" when a rate was asked for).
  std::string note;
};

// A fresh network namespace for this process and the children it starts
// next, its loopback up and, with a nonempty `link_rate` (a tc rate such
// as "100mbit"), shaped. Where namespaces are not allowed the process is
// left in (or put back into) the namespace it started in, and the note
// says why. The note also says when the rate could not be applied (tc
// missing or the rate not one of tc's); the namespace is kept then.
// Each call leaves the previous run's namespace (it goes when its last
// process ends).
RunNetwork EnterRunNetwork(const std::string& link_rate);

// Bytes the loopback interface has sent, in this process's network
// namespace; -1 if /proc/self/net/dev has no "lo".
int64_t LoopbackBytes();

// Whether a TCP connection to `address` ("127.0.0.1:PORT") is accepted
// now; false for an address that does not parse.
bool Accepts(const std::string& address);

}  // namespace weft

#endif  // WEFT_TOOLS_COMPARE_NETWORK_H_
