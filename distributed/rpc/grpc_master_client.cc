#include "distributed/rpc/grpc_master_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "distributed/rpc/grpc_coding.h"
#include "distributed/rpc/unary_call.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace weft {

struct GrpcMasterClient::Stub {
  explicit Stub(std::shared_ptr<grpc::Channel> channel) : stub(std::move(channel)) {}
  grpc::GenericStub stub;
};

GrpcMasterClient::GrpcMasterClient(std::string address, int max_message_bytes,
                                   std::shared_ptr<const Security> security)
    : address_(std::move(address)),
      name_(absl::StrCat("the master at ", address_)),
      security_(std::move(security)) {
  QuietGrpcLogging();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(max_message_bytes);
  args.SetMaxSendMessageSize(max_message_bytes);
  stub_ = std::make_unique<Stub>(grpc::CreateCustomChannel(
      address_, security_->ChannelCredentials(), args));
}

GrpcMasterClient::~GrpcMasterClient() = default;

absl::Status GrpcMasterClient::Call(absl::string_view method,
                                    const google::protobuf::MessageLite& request,
                                    google::protobuf::MessageLite* response,
                                    absl::Duration timeout) {
  const std::string& peer = name_;
  grpc::ByteBuffer request_bytes;
  absl::Status s = SerializeToByteBuffer(request, &request_bytes);
  if (!s.ok()) return s;
  UnaryCallOptions options;
  options.timeout = timeout;
  options.security = security_.get();
  absl::Notification done;
  // The answer is parsed in the callback, while the call still holds it;
  // this frame outlives the call's use of `s` and `response`.
  StartUnaryCall(&stub_->stub, absl::StrCat(kMasterServicePrefix, method),
                 std::move(request_bytes), options,
                 [&](grpc::Status status, const grpc::ByteBuffer& answer) {
                   s = FromGrpcStatus(status, peer, method);
                   if (s.ok()) {
                     s = ParseFromByteBuffer(
                         answer, response,
                         absl::StrCat(method, " answer from ", peer));
                   }
                   done.Notify();
                 });
  // gRPC ends the call by its deadline; meanwhile the wait is reported.
  const absl::Time start = absl::Now();
  while (!done.WaitForNotificationWithTimeout(report_every_)) {
    if (!log_) continue;
    log_(absl::StrCat(
        "still waiting for ", method, " from ", peer, " after ",
        absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Seconds(1))),
        timeout == absl::InfiniteDuration()
            ? ""
            : absl::StrCat(" (gives up after ", absl::FormatDuration(timeout), ")"),
        "; a step may take this long, or the master may have stopped "
        "answering (see its log)"));
  }
  return s;
}

}  // namespace weft
