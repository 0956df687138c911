// The calls of a gRPC server (grpc_server.h): a table of methods by path
// (Dispatcher), each served from the raw bytes of its request to those of
// its answer through a CallHandler, on the server's completion queue
// (AwaitCall), with the client's cancellation passed on (CallControl), and
// the adapters that serve WorkerService and MasterService methods through
// their request and response protos.
//
// Thread safety: a Dispatcher is filled before the server starts and only
// read after; handlers are called on the queue's thread and may finish on
// any thread.
#ifndef WEFT_DISTRIBUTED_RPC_SERVER_CALL_H_
#define WEFT_DISTRIBUTED_RPC_SERVER_CALL_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "distributed/master.h"
#include "distributed/rpc/grpc_coding.h"
#include "distributed/rpc/grpc_security.h"
#include "distributed/worker_interface.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/support/byte_buffer.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/thread_pool.h"

namespace weft {

// What a handler may ask of the call it serves, until it calls finish.
class CallControl {
 public:
  // Runs `on_cancel` once if the client cancels the call, goes away or lets
  // its deadline pass before the answer is sent (at once when that has
  // happened already). It runs on the queue's thread: it must not block.
  virtual void OnCancel(std::function<void()> on_cancel) = 0;

 protected:
  ~CallControl() = default;
};

// A cancellation that the end of `call` starts, if it ends before its
// answer: a client that goes away, or whose deadline passes, takes its
// step with it on every task.
inline std::shared_ptr<CancellationManager> CancelledWith(CallControl* call) {
  auto cancel = std::make_shared<CancellationManager>();
  call->OnCancel([cancel] { cancel->StartCancel(); });
  return cancel;
}

// Serves one call: `finish` (called once, on any thread) ends it with the
// response left in `out`.
using CallHandler = std::function<void(const grpc::ByteBuffer& in,
                                   grpc::ByteBuffer* out, CallControl* control,
                                   std::function<void(grpc::Status)> finish)>;

// The largest request of a method that carries no graph and no tensors
// (GetStatus, CleanupGraph, RecvTensor's request, ...): a cluster's
// CreateWorkerSession is a few KiB.
constexpr size_t kMaxControlRequestBytes = size_t{4} << 20;
// Methods whose requests carry graphs or tensors: the server's limit.
constexpr size_t kLarge = 0;

// The table of methods, fixed once the server starts.
class Dispatcher {
 public:
  explicit Dispatcher(std::shared_ptr<const Security> security)
      : security_(std::move(security)) {}
  // `max_request_bytes`: the largest request the method takes (0: the
  // server's message limit). A control call that carries no tensors has
  // no business being large; refusing it before it is parsed keeps a peer
  // from making the server hold several copies of a huge message.
  void Add(absl::string_view prefix, absl::string_view method, CallHandler h,
           size_t max_request_bytes = kMaxControlRequestBytes) {
    Method& m = handlers_[absl::StrCat(prefix, method)];
    m.handler = std::move(h);
    m.max_request_bytes = max_request_bytes;
  }
  grpc::AsyncGenericService* service() { return &service_; }

  struct Method {
    CallHandler handler;
    size_t max_request_bytes = 0;  // 0: no limit below the server's
  };

  // The method of a call that arrived, or why it is refused.
  absl::StatusOr<const Method*> Find(
      const grpc::GenericServerContext& context) const {
    if (!security_->Allows(context)) {
      return absl::UnauthenticatedError(absl::StrCat(
          context.method(), ": the call did not present this cluster's auth "
          "token (give the client the same --auth-token-file as the servers)"));
    }
    auto it = handlers_.find(context.method());
    if (it == handlers_.end()) {
      return absl::UnimplementedError(
          absl::StrCat("Weft does not implement ", context.method()));
    }
    return &it->second;
  }

 private:
  const std::shared_ptr<const Security> security_;
  absl::flat_hash_map<std::string, Method> handlers_;  // fixed after Start
  grpc::AsyncGenericService service_;
};

// Waits for the next call on `cq` and serves it through `dispatcher`; each
// call waits for the one after it as soon as it arrives.
void AwaitCall(Dispatcher* dispatcher, grpc::ServerCompletionQueue* cq);

// A method: the request parsed as `name`, `invoke` called (on `pool` when
// not null), and the response serialized when it is done.
template <typename Req, typename Resp>
CallHandler Serve(
    std::string name, ThreadPool* pool,
    std::function<void(const Req&, Resp*, CallControl*,
                       std::function<void(absl::Status)>)>
        invoke) {
  return [=](const grpc::ByteBuffer& in, grpc::ByteBuffer* out,
             CallControl* control, std::function<void(grpc::Status)> finish) {
    auto call = std::make_shared<std::pair<Req, Resp>>();
    absl::Status s = ParseFromByteBuffer(in, &call->first, name);
    if (!s.ok()) {
      finish(ToGrpcStatus(s));
      return;
    }
    auto run = [invoke, call, out, control, finish = std::move(finish)] {
      invoke(call->first, &call->second, control,
             [call, out, finish](absl::Status s) {
        if (s.ok()) s = SerializeToByteBuffer(call->second, out);
        finish(ToGrpcStatus(s));
      });
    };
    if (pool != nullptr) {
      pool->Schedule(std::move(run));
    } else {
      run();
    }
  };
}

// A WorkerService method: asynchronous already; `pool` for the ones that
// do their work before they return (RegisterGraph builds executors).
template <typename Req, typename Resp>
CallHandler WorkerMethod(WorkerInterface* worker,
                         void (WorkerInterface::*method)(const Req*, Resp*,
                                                         WorkerInterface::Done),
                         ThreadPool* pool, std::string name) {
  return Serve<Req, Resp>(
      std::move(name), pool,
      [worker, method](const Req& req, Resp* resp, CallControl*,
                       std::function<void(absl::Status)> done) {
        (worker->*method)(&req, resp, std::move(done));
      });
}

// A MasterService method: it blocks, so it runs on `pool`.
template <typename Req, typename Resp>
CallHandler MasterMethod(Master* master,
                         absl::Status (Master::*method)(const Req&, Resp*),
                         ThreadPool* pool, std::string name) {
  return Serve<Req, Resp>(
      std::move(name), pool,
      [master, method](const Req& req, Resp* resp, CallControl*,
                       std::function<void(absl::Status)> done) {
        done((master->*method)(req, resp));
      });
}

// RecvTensor: the answer encoded from the tensor's own buffer
// (tensor_coding.h) rather than through a RecvTensorResponse proto.
CallHandler RecvTensorMethod(WorkerInterface* worker);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RPC_SERVER_CALL_H_
