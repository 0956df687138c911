#include "distributed/rpc/grpc_security.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace weft {
namespace {

constexpr size_t kMaxFileBytes = 1 << 20;

absl::StatusOr<std::string> ReadSmallFile(const std::string& path,
                                          const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, ": cannot be read"));
  }
  std::string text(kMaxFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, " ", path, ": larger than ", kMaxFileBytes, " bytes"));
  }
  if (text.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, " is empty"));
  }
  return text;
}

// Equal strings, in time that depends on the length only.
bool SameToken(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

}  // namespace

std::shared_ptr<const Security> Security::None() {
  static const auto* none = new std::shared_ptr<const Security>(new Security());
  return *none;
}

absl::StatusOr<std::shared_ptr<const Security>> Security::Load(
    const SecurityFiles& files) {
  auto s = std::shared_ptr<Security>(new Security());
  if (files.tls_cert.empty() != files.tls_key.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert and --tls-key go together (the certificate and its key)");
  }
  if (!files.tls_cert.empty()) {
    auto cert = ReadSmallFile(files.tls_cert, "--tls-cert");
    if (!cert.ok()) return cert.status();
    auto key = ReadSmallFile(files.tls_key, "--tls-key");
    if (!key.ok()) return key.status();
    s->cert_ = *std::move(cert);
    s->key_ = *std::move(key);
    s->tls_ = true;
  }
  if (!files.tls_ca.empty()) {
    auto ca = ReadSmallFile(files.tls_ca, "--tls-ca");
    if (!ca.ok()) return ca.status();
    s->ca_ = *std::move(ca);
    s->tls_ = true;
  }
  if (!files.auth_token.empty()) {
    auto token = ReadSmallFile(files.auth_token, "--auth-token-file");
    if (!token.ok()) return token.status();
    s->token_ = std::string(absl::StripAsciiWhitespace(*token));
    if (s->token_.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--auth-token-file ", files.auth_token, " holds only whitespace"));
    }
    for (char c : s->token_) {
      if (c < 0x21 || c > 0x7e) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--auth-token-file ", files.auth_token,
            ": the token must be printable ASCII without spaces"));
      }
    }
  }
  return std::shared_ptr<const Security>(std::move(s));
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>>
Security::ServerCredentials() const {
  if (!tls_) return grpc::InsecureServerCredentials();
  if (cert_.empty()) {
    return absl::FailedPreconditionError(
        "serving TLS needs a certificate and its key (--tls-cert, --tls-key); "
        "--tls-ca alone only verifies peers");
  }
  grpc::SslServerCredentialsOptions options(
      ca_.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                  : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = ca_;
  options.pem_key_cert_pairs.push_back({key_, cert_});
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> Security::ChannelCredentials() const {
  if (!tls_) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = ca_;  // empty: the system's roots
  options.pem_private_key = key_;
  options.pem_cert_chain = cert_;
  return grpc::SslCredentials(options);
}

void Security::Authorize(grpc::ClientContext* context) const {
  if (!token_.empty()) {
    context->AddMetadata("authorization", absl::StrCat("Bearer ", token_));
  }
}

bool Security::Allows(const grpc::ServerContextBase& context) const {
  if (token_.empty()) return true;
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return false;
  const absl::string_view value(it->second.data(), it->second.size());
  return SameToken(value, absl::StrCat("Bearer ", token_));
}

}  // namespace weft
