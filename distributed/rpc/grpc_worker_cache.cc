#include "distributed/rpc/grpc_worker_cache.h"

#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "distributed/rpc/grpc_coding.h"
#include "distributed/rpc/local_socket.h"
#include "distributed/rpc/socket_options.h"
#include "distributed/rpc/tensor_coding.h"
#include "distributed/rpc/unary_call.h"
#include "distributed/task_name.h"
#include "grpcpp/channel.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "runtime/core/thread_pool.h"

namespace weft {
namespace {

// Which way one task is reached: over its local socket while it has one
// (local_socket.h), else over TCP. It holds no gRPC object, so calls in
// flight may keep it and drop it on any thread.
//
// Thread safety: thread-safe.
class RouteChoice {
 public:
  RouteChoice(std::string address, std::shared_ptr<const Security> security)
      : address_(std::move(address)),
        security_(std::move(security)),
        applies_(LocalSocketApplies(address_, *security_)) {
    local_.store(applies_ && LocalSocketAnswers(address_, *security_));
  }

  bool local() const { return local_.load(std::memory_order_acquire); }
  // How many times the choice changed.
  uint64_t switches() const { return switches_.load(std::memory_order_acquire); }

  // After every call: `status` UNAVAILABLE says the task may have come up,
  // or back, with or without its local socket, so this looks again, at
  // most once a second. A task that was reached over its socket and then
  // over TCP (it went away) is looked for until its socket is back, so
  // that a restarted task is reached the fast way again.
  void AfterCall(const grpc::Status& status) {
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE &&
        !socket_lost_.load(std::memory_order_relaxed)) {
      return;
    }
    if (!applies_) return;
    absl::MutexLock lock(&mu_);
    const absl::Time now = absl::Now();
    if (now < next_look_) return;
    next_look_ = now + absl::Seconds(1);
    const bool local = LocalSocketAnswers(address_, *security_);
    const bool was = local_.load(std::memory_order_relaxed);
    if (local == was) return;
    socket_lost_.store(was, std::memory_order_relaxed);
    local_.store(local, std::memory_order_release);
    switches_.fetch_add(1, std::memory_order_acq_rel);
  }

 private:
  const std::string address_;
  const std::shared_ptr<const Security> security_;
  const bool applies_;  // LocalSocketApplies: a socket may ever be there
  std::atomic<bool> local_{false};        // written under mu_
  std::atomic<bool> socket_lost_{false};  // written under mu_
  std::atomic<uint64_t> switches_{0};     // written under mu_
  absl::Mutex mu_;
  absl::Time next_look_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

class GrpcRemoteWorker final : public WorkerInterface {
 public:
  GrpcRemoteWorker(std::string task, std::string address,
                   const GrpcChannelOptions& options)
      : peer_(absl::StrCat(task, " at ", address)),
        address_(std::move(address)),
        options_(options),
        route_(std::make_shared<RouteChoice>(address_, options.security)) {
    args_.SetMaxReceiveMessageSize(options.max_message_bytes);
    args_.SetMaxSendMessageSize(options.max_message_bytes);
    // Reconnect soon after a task comes up (gRPC's default backoff grows
    // to two minutes).
    args_.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    args_.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    // Despite its name, this is how long one connection attempt (TCP and
    // the HTTP/2 SETTINGS exchange) may take before gRPC gives it up, and
    // calls made meanwhile fail UNAVAILABLE. At 100 ms a loaded host failed
    // steps ("connection attempt timed out before receiving SETTINGS
    // frame"); 5 s still gives up on a silent address well before gRPC's
    // default of 20 s. A refused connection fails at once either way.
    args_.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 5000);
    AddSocketOptions(&args_);
  }

  void GetStatusAsync(const tensorflow::GetStatusRequest* request,
                      tensorflow::GetStatusResponse* response,
                      Done done) override {
    Call("GetStatus", *request, response, options_.status_timeout,
         std::move(done));
  }
  void CreateWorkerSessionAsync(
      const tensorflow::CreateWorkerSessionRequest* request,
      tensorflow::CreateWorkerSessionResponse* response, Done done) override {
    Call("CreateWorkerSession", *request, response, options_.control_timeout,
         std::move(done));
  }
  void DeleteWorkerSessionAsync(
      const tensorflow::DeleteWorkerSessionRequest* request,
      tensorflow::DeleteWorkerSessionResponse* response, Done done) override {
    Call("DeleteWorkerSession", *request, response, options_.control_timeout,
         std::move(done));
  }
  void RegisterGraphAsync(const tensorflow::RegisterGraphRequest* request,
                          tensorflow::RegisterGraphResponse* response,
                          Done done) override {
    Call("RegisterGraph", *request, response, options_.control_timeout,
         std::move(done));
  }
  void DeregisterGraphAsync(const tensorflow::DeregisterGraphRequest* request,
                            tensorflow::DeregisterGraphResponse* response,
                            Done done) override {
    Call("DeregisterGraph", *request, response, options_.control_timeout,
         std::move(done));
  }
  void RunGraphAsync(const tensorflow::RunGraphRequest* request,
                     tensorflow::RunGraphResponse* response,
                     Done done) override {
    Call("RunGraph", *request, response, absl::InfiniteDuration(),
         std::move(done));
  }
  void CleanupGraphAsync(const tensorflow::CleanupGraphRequest* request,
                         tensorflow::CleanupGraphResponse* response,
                         Done done) override {
    Call("CleanupGraph", *request, response, options_.control_timeout,
         std::move(done));
  }
  void CleanupAllAsync(const tensorflow::CleanupAllRequest* request,
                       tensorflow::CleanupAllResponse* response,
                       Done done) override {
    Call("CleanupAll", *request, response, options_.control_timeout,
         std::move(done));
  }
  void RecvTensorAsync(const tensorflow::RecvTensorRequest* request,
                       tensorflow::RecvTensorResponse* response,
                       Done done) override {
    Call("RecvTensor", *request, response, absl::InfiniteDuration(),
         std::move(done));
  }
  // The tensor_content straight from the message into `result->allocator`
  // (distributed/rpc/tensor_coding.h). A large answer is copied out on
  // `result->copy_pool`, so that the queue's thread goes on serving calls.
  void RecvTensorValueAsync(const tensorflow::RecvTensorRequest* request,
                            RecvTensorResult* result, Done done) override {
    CallRaw("RecvTensor", *request, absl::InfiniteDuration(), false,
            [peer = peer_, result, done = std::move(done)](
                absl::Status s, const grpc::ByteBuffer& response) mutable {
              auto decode = [peer, result, s, done = std::move(done)](
                                const grpc::ByteBuffer& response) {
                absl::Status d = s;
                if (d.ok()) {
                  d = DecodeRecvTensorResponse(response, result->allocator,
                                               result->copy_pool,
                                               &result->tensor, &result->is_dead);
                  if (!d.ok()) {
                    d = absl::Status(d.code(), absl::StrCat("RecvTensor answer from ",
                                                            peer, ": ", d.message()));
                  }
                }
                done(d);
              };
              if (s.ok() && result->copy_pool != nullptr &&
                  response.Length() >= kParallelCopyBytes) {
                // The copy shares the answer's slices.
                result->copy_pool->Schedule(
                    [decode = std::move(decode), response = response]() mutable {
                      decode(response);
                    });
              } else {
                decode(response);
              }
            });
  }

 private:
  void Call(const char* method, const google::protobuf::MessageLite& request,
            google::protobuf::MessageLite* response, absl::Duration timeout,
            Done done, bool wait_for_ready = false) {
    CallRaw(method, request, timeout, wait_for_ready,
            [peer = peer_, method, response, done = std::move(done)](
                absl::Status s, const grpc::ByteBuffer& bytes) {
              if (s.ok()) {
                s = ParseFromByteBuffer(bytes, response,
                                        absl::StrCat(method, " answer from ", peer));
              }
              done(std::move(s));
            });
  }

  // The call, with the answer's bytes as they came.
  void CallRaw(const char* method, const google::protobuf::MessageLite& request,
               absl::Duration timeout, bool wait_for_ready,
               std::function<void(absl::Status, const grpc::ByteBuffer&)> done) {
    grpc::ByteBuffer bytes;
    absl::Status s = SerializeToByteBuffer(request, &bytes);
    if (!s.ok()) {
      done(absl::Status(s.code(), absl::StrCat(method, " to ", peer_, ": ",
                                               s.message())),
           grpc::ByteBuffer());
      return;
    }
    UnaryCallOptions call;
    call.timeout = timeout;
    call.wait_for_ready = wait_for_ready;
    call.security = options_.security.get();
    call.queue = options_.queue;
    StartUnaryCall(
        Stub(route_->local()), absl::StrCat(kWorkerServicePrefix, method),
        std::move(bytes), call,
        // Copies, not `this`: a call may answer after the cache is gone
        // (the security it presents is `security`, kept alive here).
        [peer = peer_, security = options_.security, route = route_, method,
         done = std::move(done)](grpc::Status status,
                                 const grpc::ByteBuffer& answer) {
          route->AfterCall(status);
          done(FromGrpcStatus(status, peer, method), answer);
        });
  }

  // The stub of the local socket's channel or of TCP's, made on first use
  // and kept while this worker lives: a channel torn down while gRPC still
  // tracks a connection that is closing (its task stopping) made gRPC
  // abort ('ref_counted.h: prior > 0'). A channel taken up again after the
  // route changed forgets its reconnection backoff: it last failed while
  // the task was away, and would fail the first calls to the task that is
  // back.
  //
  // A socket channel that still fails (it has not reconnected since the
  // task came back: gRPC fails calls at once until it has, with the error
  // of its last try) is asked to connect, and the call goes over TCP
  // meanwhile; so the first calls after the route turns back to the socket
  // do not fail with "unix-abstract:...: Connection refused".
  grpc::GenericStub* Stub(bool local) {
    const uint64_t switches = route_->switches();
    absl::MutexLock lock(&mu_);
    Way& socket = ways_[1];
    if (local && socket.stub != nullptr) {
      if (socket.switches != switches) {
        grpc::experimental::ChannelResetConnectionBackoff(socket.channel.get());
        socket.switches = switches;
      }
      if (socket.channel->GetState(/*try_to_connect=*/true) ==
          GRPC_CHANNEL_TRANSIENT_FAILURE) {
        local = false;
      }
    }
    Way& way = ways_[local ? 1 : 0];
    if (way.stub == nullptr) {
      way.channel = grpc::CreateCustomChannel(
          local ? LocalSocketTarget(address_) : address_,
          options_.security->ChannelCredentials(), args_);
      way.stub = std::make_unique<grpc::GenericStub>(way.channel);
    } else if (way.switches != switches) {
      grpc::experimental::ChannelResetConnectionBackoff(way.channel.get());
    }
    way.switches = switches;
    return way.stub.get();
  }

  const std::string peer_;
  const std::string address_;
  const GrpcChannelOptions options_;
  const std::shared_ptr<RouteChoice> route_;
  grpc::ChannelArguments args_;  // fixed after construction
  struct Way {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<grpc::GenericStub> stub;
    uint64_t switches = 0;  // the route's, when last used
  };
  absl::Mutex mu_;
  Way ways_[2] ABSL_GUARDED_BY(mu_);  // TCP, local socket
};

}  // namespace

std::unique_ptr<WorkerInterface> NewGrpcRemoteWorker(
    const std::string& task, const std::string& address,
    const GrpcChannelOptions& options) {
  return std::make_unique<GrpcRemoteWorker>(task, address, options);
}

GrpcWorkerCache::GrpcWorkerCache(ClusterSpec cluster, std::string local_task,
                                 WorkerInterface* local,
                                 GrpcChannelOptions options)
    : cluster_(std::move(cluster)),
      local_task_(std::move(local_task)),
      local_(local),
      options_(options) {}

GrpcWorkerCache::~GrpcWorkerCache() = default;

absl::StatusOr<WorkerInterface*> GrpcWorkerCache::GetWorker(
    const std::string& task) {
  if (local_ != nullptr && task == local_task_) return local_;
  absl::MutexLock lock(&mu_);
  auto it = remote_.find(task);
  if (it != remote_.end()) return it->second.get();
  std::string address;
  for (const TaskId& id : cluster_.Tasks()) {
    if (id.DeviceNamePrefix() == task) address = *cluster_.Address(id);
  }
  if (address.empty()) {
    return absl::UnavailableError(absl::StrCat(
        "task ", task, " is not in the cluster ", cluster_.ToString()));
  }
  auto worker = NewGrpcRemoteWorker(task, address, options_);
  WorkerInterface* out = worker.get();
  remote_.emplace(task, std::move(worker));
  return out;
}

}  // namespace weft
