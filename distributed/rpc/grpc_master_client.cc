#include "distributed/rpc/grpc_master_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "distributed/rpc/grpc_coding.h"
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
    : address_(std::move(address)), security_(std::move(security)) {
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
  const std::string peer = absl::StrCat("the master at ", address_);
  grpc::ByteBuffer request_bytes, response_bytes;
  absl::Status s = SerializeToByteBuffer(request, &request_bytes);
  if (!s.ok()) return s;
  grpc::ClientContext context;
  if (timeout != absl::InfiniteDuration()) {
    context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  }
  security_->Authorize(&context);
  absl::Notification done;
  grpc::Status status;
  stub_->stub.UnaryCall(&context, absl::StrCat(kMasterServicePrefix, method),
                   grpc::StubOptions(), &request_bytes, &response_bytes,
                   [&](grpc::Status st) {
                     status = std::move(st);
                     done.Notify();
                   });
  done.WaitForNotification();  // gRPC ends the call by its deadline
  s = FromGrpcStatus(status, peer, method);
  if (!s.ok()) return s;
  return ParseFromByteBuffer(response_bytes, response,
                             absl::StrCat(method, " answer from ", peer));
}

}  // namespace weft
