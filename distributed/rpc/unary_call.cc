#include "distributed/rpc/unary_call.h"

#include <utility>

namespace weft {
namespace {

class UnaryCall final : public grpc::ClientUnaryReactor {
 public:
  UnaryCall(grpc::ByteBuffer request,
            std::function<void(grpc::Status, const grpc::ByteBuffer&)> done)
      : request_(std::move(request)), done_(std::move(done)) {}

  grpc::ClientContext* context() { return &context_; }
  const grpc::ByteBuffer* request() const { return &request_; }
  grpc::ByteBuffer* response() { return &response_; }

  void OnDone(const grpc::Status& status) override {
    done_(status, response_);
    delete this;
  }

 private:
  grpc::ClientContext context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  std::function<void(grpc::Status, const grpc::ByteBuffer&)> done_;
};

}  // namespace

void StartUnaryCall(grpc::GenericStub* stub, const std::string& method,
                    grpc::ByteBuffer request, const UnaryCallOptions& options,
                    std::function<void(grpc::Status, const grpc::ByteBuffer&)> done) {
  auto* call = new UnaryCall(std::move(request), std::move(done));
  if (options.timeout != absl::InfiniteDuration()) {
    call->context()->set_deadline(absl::ToChronoTime(absl::Now() + options.timeout));
  }
  call->context()->set_wait_for_ready(options.wait_for_ready);
  if (options.security != nullptr) options.security->Authorize(call->context());
  stub->PrepareUnaryCall(call->context(), method, grpc::StubOptions(),
                         call->request(), call->response(), call);
  call->StartCall();
}

}  // namespace weft
