// How a cluster's tasks and clients trust each other: TLS (mutual when a CA
// is given: every task and client then presents a certificate the CA
// signed) and a shared auth token that every call presents. Off by default
// (plaintext, no token), which is why servers listen on loopback unless
// told otherwise.
//
//   SecurityFiles files{.tls_cert = "task.pem", .tls_key = "task.key",
//                       .tls_ca = "ca.pem", .auth_token = "token"};
//   WEFT_ASSIGN_OR_RETURN(auto security, Security::Load(files));
//   // servers: security->ServerCredentials(); every call checked by Allows()
//   // clients: security->ChannelCredentials(); security->Authorize(&context)
//
// A task's certificate serves both ways: it proves the server to its
// clients and, with a CA, the task to the other tasks it calls. The token
// travels as "authorization: Bearer <token>" metadata; a call without it,
// or with another one, is UNAUTHENTICATED. Security is immutable and
// thread-safe.
#ifndef WEFT_DISTRIBUTED_RPC_GRPC_SECURITY_H_
#define WEFT_DISTRIBUTED_RPC_GRPC_SECURITY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/client_context.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_context.h"

namespace weft {

struct SecurityFiles {
  std::string tls_cert;    // PEM certificate chain; with tls_key
  std::string tls_key;     // PEM private key
  std::string tls_ca;      // PEM CA: verify peers (servers: require clients')
  std::string auth_token;  // a file holding the token (whitespace trimmed)
};

class Security {
 public:
  // INVALID_ARGUMENT naming the flag (--tls-cert, ...) for a missing or
  // unreadable file, a certificate without its key, or an empty token.
  static absl::StatusOr<std::shared_ptr<const Security>> Load(
      const SecurityFiles& files);
  // Plaintext, no token.
  static std::shared_ptr<const Security> None();

  bool tls() const { return tls_; }
  bool has_token() const { return !token_.empty(); }
  // Whether a server with this security knows who calls it: a token, or
  // TLS with a CA that every client's certificate must be signed by. TLS
  // alone only encrypts: anyone may connect.
  bool authenticates_callers() const {
    return has_token() || (tls_ && !ca_.empty());
  }

  // FAILED_PRECONDITION when this process has no certificate to serve with
  // but clients are to use TLS (a CA alone is for clients).
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials() const;
  std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials() const;
  void Authorize(grpc::ClientContext* context) const;
  // Whether a server call presents the token (always, without one).
  bool Allows(const grpc::ServerContextBase& context) const;

 private:
  bool tls_ = false;
  std::string cert_, key_, ca_, token_;
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RPC_GRPC_SECURITY_H_
