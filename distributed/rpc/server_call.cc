#include "distributed/rpc/server_call.h"

#include <atomic>

#include "absl/synchronization/mutex.h"
#include "distributed/rpc/cq_threads.h"
#include "distributed/rpc/tensor_coding.h"
#include "distributed/worker.h"

namespace weft {
namespace {

// One call on the server's queue, from the wait for it to its last write;
// it asks for the next call as soon as it has one. It frees itself once
// its last write is done and gRPC has said the call is over (the second
// tag, `ended_`, which also tells of a client that cancelled or went
// away). The handler may finish on any thread.
class ServerCall final : public CqTag, public CallControl {
 public:
  static void Await(Dispatcher* dispatcher, grpc::ServerCompletionQueue* cq) {
    auto* call = new ServerCall(dispatcher, cq);
    Posting posting(call);
    call->context_.AsyncNotifyWhenDone(&call->ended_);
    dispatcher->service()->RequestCall(&call->context_, &call->stream_, cq, cq,
                                       call);
  }

  void Done(bool ok) override {
    switch (state_) {
      case State::kAwaited: {
        if (!ok) {  // the server is shutting down; the call never began
          Unref();
          return;
        }
        refs_.fetch_add(1, std::memory_order_relaxed);  // `ended_` will come
        Await(dispatcher_, cq_);
        absl::StatusOr<const Dispatcher::Method*> method =
            dispatcher_->Find(context_);
        if (!method.ok()) {
          Finish(ToGrpcStatus(method.status()));
          return;
        }
        method_ = *method;
        state_ = State::kReading;
        Posting posting(this);
        stream_.Read(&request_, this);
        return;
      }
      case State::kReading:
        if (!ok) {
          Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "the call carried no request message"));
          return;
        }
        if (method_->max_request_bytes > 0 &&
            request_.Length() > method_->max_request_bytes) {
          const size_t length = request_.Length();
          request_.Clear();
          Finish(grpc::Status(
              grpc::StatusCode::RESOURCE_EXHAUSTED,
              absl::StrCat(context_.method(), ": the request is ", length,
                           " bytes; this method takes at most ",
                           method_->max_request_bytes)));
          return;
        }
        state_ = State::kFinishing;
        method_->handler(request_, &response_, this, [this](grpc::Status s) {
          {
            absl::MutexLock lock(&mu_);
            answered_ = true;
            on_cancel_ = nullptr;
          }
          Posting posting(this);
          if (s.ok()) {
            stream_.WriteAndFinish(response_, grpc::WriteOptions(), s, this);
          } else {
            stream_.Finish(s, this);
          }
        });
        return;
      case State::kFinishing:
        Unref();
        return;
    }
  }

  void OnCancel(std::function<void()> on_cancel) override {
    {
      absl::MutexLock lock(&mu_);
      if (!cancelled_) {
        on_cancel_ = std::move(on_cancel);
        return;
      }
    }
    on_cancel();
  }

 private:
  enum class State { kAwaited, kReading, kFinishing };

  // gRPC's word that the call is over: answered, cancelled, or past its
  // deadline.
  class Ended final : public CqTag {
   public:
    explicit Ended(ServerCall* call) : call_(call) {}
    void Done(bool) override { call_->CallEnded(); }

   private:
    ServerCall* const call_;
  };

  ServerCall(Dispatcher* dispatcher, grpc::ServerCompletionQueue* cq)
      : dispatcher_(dispatcher), cq_(cq), stream_(&context_), ended_(this) {}
  void Finish(const grpc::Status& status) {
    state_ = State::kFinishing;
    Posting posting(this);
    stream_.Finish(status, this);
  }
  void CallEnded() {
    std::function<void()> on_cancel;
    {
      absl::MutexLock lock(&mu_);
      if (!answered_ && context_.IsCancelled()) {
        cancelled_ = true;
        on_cancel = std::move(on_cancel_);
      }
      on_cancel_ = nullptr;
    }
    if (on_cancel) on_cancel();
    Unref();
  }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  Dispatcher* const dispatcher_;
  grpc::ServerCompletionQueue* const cq_;
  State state_ = State::kAwaited;
  grpc::GenericServerContext context_;
  grpc::GenericServerAsyncReaderWriter stream_;
  const Dispatcher::Method* method_ = nullptr;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  Ended ended_;
  std::atomic<int> refs_{1};  // the call's own tags; `ended_` once begun
  absl::Mutex mu_;
  bool answered_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void()> on_cancel_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

void AwaitCall(Dispatcher* dispatcher, grpc::ServerCompletionQueue* cq) {
  ServerCall::Await(dispatcher, cq);
}

CallHandler RecvTensorMethod(WorkerInterface* worker) {
  return [worker](const grpc::ByteBuffer& in, grpc::ByteBuffer* out,
                  CallControl*, std::function<void(grpc::Status)> finish) {
    struct Call {
      tensorflow::RecvTensorRequest request;
      RecvTensorResult result;
    };
    auto call = std::make_shared<Call>();
    absl::Status s = ParseFromByteBuffer(in, &call->request, "RecvTensorRequest");
    if (!s.ok()) {
      finish(ToGrpcStatus(s));
      return;
    }
    worker->RecvTensorValueAsync(
        &call->request, &call->result, [call, out, finish](absl::Status s) {
          if (s.ok()) {
            s = EncodeRecvTensorResponse(call->result.tensor,
                                         call->result.is_dead, out);
          }
          finish(ToGrpcStatus(s));
        });
  };
}

}  // namespace weft
