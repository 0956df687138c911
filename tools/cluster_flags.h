// The cluster and this process's task, as every distributed subcommand
// takes them: --cluster SPEC (flag form, JSON, or @FILE holding either) with
// --job and --task, or, with none of those flags, the TF_CONFIG environment
// variable (distributed/cluster_spec.h).
#ifndef WEFT_TOOLS_CLUSTER_FLAGS_H_
#define WEFT_TOOLS_CLUSTER_FLAGS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "distributed/cluster_spec.h"
#include "distributed/rpc/grpc_security.h"
#include "tools/command_line.h"

namespace weft {

struct ClusterAndTask {
  ClusterSpec cluster;
  TaskId task;
};

// INVALID_ARGUMENT naming the flag or the TF_CONFIG field at fault.
absl::StatusOr<ClusterAndTask> ClusterAndTaskFromFlags(const CommandLine& cl);

// --tls-cert, --tls-key, --tls-ca and --auth-token-file: add them to a
// command's flags, and load what they name (Security::None() without any).
void AddSecurityFlags(std::map<std::string, FlagKind>* flags);
inline constexpr char kSecurityFlagsUsage[] =
    "  --tls-cert FILE --tls-key FILE  serve (and call) with TLS\n"
    "  --tls-ca FILE         verify peers with this CA; servers then require\n"
    "                        client certificates (mutual TLS)\n"
    "  --auth-token-file FILE  every call presents the token in FILE; servers\n"
    "                        refuse calls without it (UNAUTHENTICATED)\n";
absl::StatusOr<std::shared_ptr<const Security>> SecurityFromFlags(
    const CommandLine& cl);
// The same flags as arguments, for a child process.
std::vector<std::string> SecurityArgs(const CommandLine& cl);

// The host:port of a --target grpc://HOST:PORT; INVALID_ARGUMENT quoting
// the flag for anything else.
absl::StatusOr<std::string> GrpcTargetAddress(const std::string& flag);

// The spec of --cluster alone (for commands without a task of their own).
absl::StatusOr<ClusterSpec> ClusterFromFlag(const std::string& value);

}  // namespace weft

#endif  // WEFT_TOOLS_CLUSTER_FLAGS_H_
