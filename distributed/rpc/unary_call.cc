#include "distributed/rpc/unary_call.h"

#include <memory>
#include <utility>

#include "distributed/rpc/cq_threads.h"

namespace weft {
namespace {

// One call; when it completes it frees itself and then hands its answer
// (or failure) to `done`.
class UnaryCall final : public CqTag {
 public:
  UnaryCall(grpc::ByteBuffer request,
            std::function<void(grpc::Status, const grpc::ByteBuffer&)> done)
      : request_(std::move(request)), done_(std::move(done)) {}

  grpc::ClientContext* context() { return &context_; }

  void Start(grpc::GenericStub* stub, const std::string& method,
             CqThreads* queue) {
    queue_ = queue;
    queue_->Register(&context_);
    Posting posting(this);
    reader_ = stub->PrepareUnaryCall(&context_, method, request_, queue_->cq());
    reader_->StartCall();
    reader_->Finish(&response_, &status_, this);
  }

  // The call is gone (its context, and with it a reference to the channel)
  // before `done` runs: a caller that waits for `done` may then drop the
  // channel itself.
  void Done(bool) override {
    queue_->Unregister(&context_);
    const grpc::Status status = std::move(status_);
    grpc::ByteBuffer response;
    response.Swap(&response_);
    auto done = std::move(done_);
    delete this;
    done(status, response);
  }

 private:
  CqThreads* queue_ = nullptr;
  grpc::ClientContext context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  grpc::Status status_;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> reader_;
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
  call->Start(stub, method,
              options.queue != nullptr ? options.queue : CqThreads::ForClients());
}

}  // namespace weft
