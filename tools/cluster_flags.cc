#include "tools/cluster_flags.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/graph_file.h"

namespace weft {

namespace {
constexpr const char* kSecurityFlags[] = {"tls-cert", "tls-key", "tls-ca",
                                          "auth-token-file"};
}  // namespace

void AddSecurityFlags(std::map<std::string, FlagKind>* flags) {
  for (const char* f : kSecurityFlags) (*flags)[f] = kValue;
}

absl::StatusOr<std::shared_ptr<const Security>> SecurityFromFlags(
    const CommandLine& cl) {
  SecurityFiles files;
  files.tls_cert = cl.Get("tls-cert");
  files.tls_key = cl.Get("tls-key");
  files.tls_ca = cl.Get("tls-ca");
  files.auth_token = cl.Get("auth-token-file");
  return Security::Load(files);
}

std::vector<std::string> SecurityArgs(const CommandLine& cl) {
  std::vector<std::string> args;
  for (const char* f : kSecurityFlags) {
    if (cl.Has(f)) {
      args.push_back(absl::StrCat("--", f));
      args.push_back(cl.Get(f));
    }
  }
  return args;
}

absl::StatusOr<std::string> GrpcTargetAddress(const std::string& flag) {
  absl::string_view address = flag;
  if (!absl::ConsumePrefix(&address, "grpc://") || address.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--target must be grpc://HOST:PORT, not '", flag, "'"));
  }
  return std::string(address);
}

absl::StatusOr<ClusterSpec> ClusterFromFlag(const std::string& value) {
  if (absl::StartsWith(value, "@")) {
    const std::string path = value.substr(1);
    absl::StatusOr<std::string> text = ReadFileToString(path, 16 << 20);
    if (!text.ok()) return text.status();
    return ParseClusterSpec(*text, path);
  }
  return ParseClusterSpec(value, "--cluster");
}

absl::StatusOr<ClusterAndTask> ClusterAndTaskFromFlags(const CommandLine& cl) {
  ClusterAndTask out;
  if (!cl.Has("cluster") && !cl.Has("job") && !cl.Has("task")) {
    const char* tf_config = std::getenv("TF_CONFIG");
    if (tf_config == nullptr || *tf_config == '\0') {
      return absl::InvalidArgumentError(
          "give --cluster SPEC --job NAME --task I, or set TF_CONFIG");
    }
    absl::StatusOr<TfConfig> config = ParseTfConfig(tf_config);
    if (!config.ok()) return config.status();
    out.cluster = std::move(config->cluster);
    out.task = std::move(config->task);
    return out;
  }
  if (!cl.Has("cluster") || !cl.Has("job") || !cl.Has("task")) {
    return absl::InvalidArgumentError(
        "--cluster, --job and --task go together (or set TF_CONFIG and give "
        "none of them)");
  }
  absl::StatusOr<ClusterSpec> cluster = ClusterFromFlag(cl.Get("cluster"));
  if (!cluster.ok()) return cluster.status();
  out.cluster = *std::move(cluster);
  out.task.job = cl.Get("job");
  if (!absl::SimpleAtoi(cl.Get("task"), &out.task.index) || out.task.index < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--task must be a task index (0, 1, ...), not '", cl.Get("task"), "'"));
  }
  if (!out.cluster.HasTask(out.task)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--job ", out.task.job, " --task ", out.task.index,
        " is not a task of the cluster ", out.cluster.ToString()));
  }
  return out;
}

}  // namespace weft
