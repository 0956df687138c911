#include "distributed/rpc/grpc_coding.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "grpc/support/log.h"
#include "grpcpp/support/slice.h"

namespace weft {
namespace {

std::atomic<bool> listener_failed{false};

// gRPC's log lines are dropped; one is noted: its listener giving a port
// up (tcp_server_posix's "Failed accept4", e.g. EMFILE).
void DropLog(gpr_log_func_args* args) {
  if (args->message != nullptr &&
      std::strstr(args->message, "Failed accept4") != nullptr) {
    listener_failed.store(true, std::memory_order_relaxed);
  }
}

}  // namespace

bool GrpcListenerFailed() {
  return listener_failed.load(std::memory_order_relaxed);
}

void QuietGrpcLogging() {
  static const bool once = [] {
    if (std::getenv("GRPC_VERBOSITY") == nullptr &&
        std::getenv("GRPC_TRACE") == nullptr) {
      gpr_set_log_function(&DropLog);
    }
    return true;
  }();
  (void)once;
}

namespace {

// grpc-status-details-bin of the errors Weft's services return: a
// GrpcPayloadContainer (what TensorFlow's clients parse there) with one
// payload, {"weft": "service"}. It tells a Weft client that the error is
// the service's answer, not the transport's.
const std::string& ServiceErrorDetails() {
  static const std::string* details = [] {
    const std::string entry = std::string("\x0a\x04weft\x12\x07service", 15);
    return new std::string(std::string("\x0a", 1) + static_cast<char>(entry.size()) +
                           entry);
  }();
  return *details;
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  std::string message(status.message());
  if (message.size() > kMaxStatusMessage) {
    message.resize(kMaxStatusMessage);
    message += " ... [truncated]";
  }
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), message,
                      ServiceErrorDetails());
}

absl::Status FromGrpcStatus(const grpc::Status& status, absl::string_view peer,
                            absl::string_view method) {
  if (status.ok()) return absl::OkStatus();
  const auto code = static_cast<absl::StatusCode>(status.error_code());
  const std::string& message = status.error_message();
  // A Weft service's own answer: it names the task already.
  if (status.error_details() == ServiceErrorDetails()) {
    return absl::Status(code, message);
  }
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return absl::UnavailableError(absl::StrCat(
          method, " to ", peer, " failed: the task is unreachable (", message,
          "); is it running (weft server / weft launch with the same "
          "--cluster), is the address in the cluster spec right, and do both "
          "sides use the same TLS flags?"));
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      if (message == "Deadline Exceeded") {  // gRPC's own, not the task's
        return absl::DeadlineExceededError(absl::StrCat(
            method, " to ", peer,
            " got no answer in time; the task may be overloaded or stuck "
            "(see its log)"));
      }
      break;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      if (absl::StrContains(message, "message larger than max") ||
          absl::StrContains(message, "Received message larger")) {
        return absl::ResourceExhaustedError(absl::StrCat(
            method, " to ", peer, ": ", message,
            "; raise the limit on both sides (weft server --max-message-mb)"));
      }
      break;
    default:
      break;
  }
  return absl::Status(code, message);
}

absl::Status SerializeToByteBuffer(const google::protobuf::MessageLite& message,
                                   grpc::ByteBuffer* buffer) {
  const size_t size = message.ByteSizeLong();
  if (size > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::InternalError(absl::StrCat(
        "a ", message.GetTypeName(), " of ", size,
        " bytes is over protobuf's 2 GiB limit"));
  }
  grpc::Slice slice(size);
  message.SerializeWithCachedSizesToArray(const_cast<uint8_t*>(slice.begin()));
  grpc::ByteBuffer out(&slice, 1);
  buffer->Swap(&out);
  return absl::OkStatus();
}

absl::Status ParseFromByteBuffer(const grpc::ByteBuffer& buffer,
                                 google::protobuf::MessageLite* message,
                                 absl::string_view what) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": unreadable message"));
  }
  bool ok;
  if (slices.size() == 1) {
    ok = message->ParseFromArray(slices[0].begin(),
                                 static_cast<int>(slices[0].size()));
  } else {
    std::string bytes;
    bytes.reserve(buffer.Length());
    for (const grpc::Slice& s : slices) {
      bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    ok = message->ParseFromString(bytes);
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": the bytes are not a valid ", message->GetTypeName()));
  }
  return absl::OkStatus();
}

}  // namespace weft
