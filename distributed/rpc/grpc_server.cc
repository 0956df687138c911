#include "distributed/rpc/grpc_server.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/notification.h"
#include "distributed/local_master.h"
#include "distributed/master.h"
#include "distributed/rpc/cq_threads.h"
#include "distributed/rpc/grpc_coding.h"
#include "distributed/rpc/grpc_worker_cache.h"
#include "distributed/rpc/local_socket.h"
#include "distributed/rpc/socket_options.h"
#include "distributed/rpc/tensor_coding.h"
#include "distributed/worker.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/file_policy.h"
#include "runtime/core/local_device_mgr.h"
#include "runtime/core/status.h"
#include "runtime/core/thread_pool.h"
#include "runtime/gpu/gpu_devices.h"

namespace weft {
namespace {

int64_t RpcMemoryBytes(const ServerOptions& o) {
  if (o.rpc_memory_bytes > 0) return o.rpc_memory_bytes;
  return 2 * int64_t{o.max_message_bytes} + (int64_t{256} << 20);
}

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
std::shared_ptr<CancellationManager> CancelledWith(CallControl* call) {
  auto cancel = std::make_shared<CancellationManager>();
  call->OnCancel([cancel] { cancel->StartCancel(); });
  return cancel;
}

// Serves one call: `finish` (called once, on any thread) ends it with the
// response left in `out`.
using CallHandler = std::function<void(const grpc::ByteBuffer& in,
                                   grpc::ByteBuffer* out, CallControl* control,
                                   std::function<void(grpc::Status)> finish)>;

// Threads on the server's queue. One: a second thread on the same queue
// takes over the polling whenever the first runs a call, and each handoff
// wakes it (a two-task step went from 9 to 18 thread switches per task).
// What might hold the thread up is run elsewhere: blocking methods on the
// control pool, large RecvTensor answers on the receiving device's pool.
constexpr int kQueueThreads = 1;
// Calls the server waits for at once (each takes up the next as it arrives).
constexpr int kAwaitedCalls = 4;
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

// Splits "host:port" ("[::1]:2222" for IPv6); the spec checked the form.
std::pair<std::string, int> SplitAddress(absl::string_view address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  (void)absl::SimpleAtoi(address.substr(colon + 1), &port);
  return {std::string(address.substr(0, colon)), port};
}

}  // namespace

struct GrpcServer::Impl {
  ServerOptions options;
  std::string task_name;
  std::string address;
  std::string local_target;  // empty: none
  std::unique_ptr<DeviceMgr> devices;
  std::unique_ptr<ThreadPool> inter_op;  // the worker's steps
  std::unique_ptr<ThreadPool> control;   // the master's blocking calls
  // The worker's control calls that do work before they answer
  // (RegisterGraph builds executors): a pool of their own, so that no
  // number of master calls waiting for tasks holds them up.
  std::unique_ptr<ThreadPool> worker_control;
  std::unique_ptr<ThreadPool> timer;     // collection of what expired
  // Declared before everything that makes calls on it or answers them, so
  // destroyed after them.
  std::unique_ptr<CqThreads> queue;
  std::unique_ptr<GrpcWorkerCache> cache;
  std::unique_ptr<Worker> worker;
  std::unique_ptr<Master> master;
  std::shared_ptr<LocalMaster> local_master;  // over `master` and `control`
  std::unique_ptr<Dispatcher> service;
  std::unique_ptr<grpc::Server> server;
  absl::Notification stop;
  absl::Mutex mu;
  bool shut_down ABSL_GUARDED_BY(mu) = false;
};

GrpcServer::GrpcServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GrpcServer::~GrpcServer() { Shutdown(); }

const std::string& GrpcServer::task_name() const { return impl_->task_name; }
const std::string& GrpcServer::address() const { return impl_->address; }
const std::string& GrpcServer::local_target() const {
  return impl_->local_target;
}
const DeviceMgr& GrpcServer::devices() const { return *impl_->devices; }
std::shared_ptr<MasterInterface> GrpcServer::master() const {
  return impl_->local_master;
}

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(
    const ServerOptions& options) {
  QuietGrpcLogging();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  const TaskId& task = options.task;
  if (!options.cluster.HasTask(task)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task ", task.ToString(), " is not in the cluster ",
        options.cluster.ToString(), " (check --job and --task)"));
  }
  impl->task_name = task.DeviceNamePrefix();
  WEFT_ASSIGN_OR_RETURN(impl->address, options.cluster.Address(task));
  auto [host, port] = SplitAddress(impl->address);
  if (port == 0 && options.cluster.NumTasks() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task ", task.ToString(), " has port 0 in the cluster spec; the other "
        "tasks could not find it: give every task its port"));
  }
  const bool loopback = IsLoopbackHost(host);
  if (!loopback && !options.allow_non_loopback) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task ", task.ToString(), " would listen on ", impl->address,
        ", which is not a loopback address: the services accept graphs and "
        "run them, so serving the network must be asked for explicitly "
        "(weft server --allow-non-loopback)"));
  }
  if (!loopback && !options.security->authenticates_callers() &&
      !options.insecure) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task ", task.ToString(), " would serve ", impl->address,
        " to the network without knowing who calls it: anyone who reaches "
        "the port could run graphs here. Give every task and client "
        "--auth-token-file (with --tls-cert/--tls-key so the token is not "
        "sent in the clear), or --tls-ca for mutual TLS; --insecure serves "
        "anyone"));
  }

  absl::StatusOr<std::shared_ptr<const FilePolicy>> files =
      FilePolicy::Confined(options.file_roots);
  if (!files.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task ", task.ToString(), ": ", files.status().message(),
        " (--file-root)"));
  }
  LocalDeviceOptions device_options;
  device_options.file_policy = *files;
  device_options.job = task.job;
  device_options.task = task.index;
  device_options.num_cpus = options.num_cpus;
  device_options.intra_op_threads = options.intra_op_threads;
  device_options.host_memory_limit_bytes = options.memory_limit_bytes;
  GpuDevices gpus =
      NewLocalGpuDevices(task.job, 0, task.index, options.max_gpus);
  WEFT_ASSIGN_OR_RETURN(impl->devices,
                        NewLocalDeviceMgr(device_options, std::move(gpus.devices)));
  WEFT_ASSIGN_OR_RETURN(
      impl->inter_op,
      ThreadPool::Create("weft_inter_op", options.inter_op_threads > 0
                                              ? options.inter_op_threads
                                              : DefaultThreadCount()));
  WEFT_ASSIGN_OR_RETURN(impl->control, ThreadPool::Create("weft_rpc", 16));
  WEFT_ASSIGN_OR_RETURN(impl->worker_control,
                        ThreadPool::Create("weft_worker_rpc", 4));
  WEFT_ASSIGN_OR_RETURN(impl->timer, ThreadPool::Create("weft_gc", 1));

  // One queue and thread for the server's calls and for the calls this
  // task makes (cq_threads.h): so one thread polls and runs them all.
  grpc::ServerBuilder builder;
  std::unique_ptr<grpc::ServerCompletionQueue> cq = builder.AddCompletionQueue();
  grpc::ServerCompletionQueue* const queue = cq.get();
  impl->queue = std::make_unique<CqThreads>(std::move(cq), "weft_rpc_queue",
                                            kQueueThreads);

  GrpcChannelOptions channel;
  channel.max_message_bytes = options.max_message_bytes;
  channel.security = options.security;
  channel.queue = impl->queue.get();
  impl->cache = std::make_unique<GrpcWorkerCache>(options.cluster,
                                                  impl->task_name, nullptr,
                                                  channel);
  // ClusterSpec propagation: a session's own cache over the cluster its
  // client names, reaching this task in-process under its name there.
  auto session_workers = [impl = impl.get(), channel](
                             const ClusterSpec& cluster, const std::string& task)
      -> absl::StatusOr<std::shared_ptr<WorkerCache>> {
    return std::make_shared<GrpcWorkerCache>(cluster, task, impl->worker.get(),
                                             channel);
  };
  WorkerOptions w;
  w.task = impl->task_name;
  w.session_workers = session_workers;
  w.devices = impl->devices.get();
  w.inter_op_pool = impl->inter_op.get();
  w.workers = impl->cache.get();
  w.step_limits = options.step_limits;
  w.idle_ttl = options.session_gc > absl::ZeroDuration()
                   ? options.session_gc
                   : absl::InfiniteDuration();
  impl->worker = std::make_unique<Worker>(w);
  impl->cache->set_local(impl->worker.get());

  MasterOptions m;
  m.task = impl->task_name;
  m.session_workers = session_workers;
  m.cluster = options.cluster;
  m.workers = impl->cache.get();
  m.wait_for_tasks = options.wait_for_tasks;
  m.session_gc = options.session_gc;
  m.log = options.log;
  impl->master = std::make_unique<Master>(m);
  impl->local_master = std::make_shared<LocalMaster>(
      impl->master.get(), impl->control.get(), impl->task_name);

  impl->service = std::make_unique<Dispatcher>(options.security);
  Dispatcher& d = *impl->service;
  Worker* worker = impl->worker.get();
  ThreadPool* control = impl->control.get();
  ThreadPool* worker_control = impl->worker_control.get();
  constexpr absl::string_view kW = kWorkerServicePrefix;
  d.Add(kW, "GetStatus", WorkerMethod(worker, &WorkerInterface::GetStatusAsync, nullptr, "GetStatusRequest"));
  d.Add(kW, "CreateWorkerSession", WorkerMethod(worker, &WorkerInterface::CreateWorkerSessionAsync, nullptr, "CreateWorkerSessionRequest"));
  d.Add(kW, "DeleteWorkerSession", WorkerMethod(worker, &WorkerInterface::DeleteWorkerSessionAsync, worker_control, "DeleteWorkerSessionRequest"));
  d.Add(kW, "RegisterGraph", WorkerMethod(worker, &WorkerInterface::RegisterGraphAsync, worker_control, "RegisterGraphRequest"), kLarge);
  d.Add(kW, "DeregisterGraph", WorkerMethod(worker, &WorkerInterface::DeregisterGraphAsync, worker_control, "DeregisterGraphRequest"));
  d.Add(kW, "RunGraph", WorkerMethod(worker, &WorkerInterface::RunGraphAsync, nullptr, "RunGraphRequest"), kLarge);
  d.Add(kW, "CleanupGraph", WorkerMethod(worker, &WorkerInterface::CleanupGraphAsync, nullptr, "CleanupGraphRequest"));
  d.Add(kW, "CleanupAll", WorkerMethod(worker, &WorkerInterface::CleanupAllAsync, worker_control, "CleanupAllRequest"));
  d.Add(kW, "RecvTensor", RecvTensorMethod(worker));
  Master* master = impl->master.get();
  constexpr absl::string_view kM = kMasterServicePrefix;
  d.Add(kM, "CreateSession", MasterMethod(master, &Master::CreateSession, control, "CreateSessionRequest"), kLarge);
  d.Add(kM, "ExtendSession", MasterMethod(master, &Master::ExtendSession, control, "ExtendSessionRequest"), kLarge);
  d.Add(kM, "PartialRunSetup", MasterMethod(master, &Master::PartialRunSetup, control, "PartialRunSetupRequest"));
  d.Add(kM, "RunStep", Serve<tensorflow::RunStepRequest, tensorflow::RunStepResponse>(
      "RunStepRequest", nullptr,
      [master, control](const tensorflow::RunStepRequest& req, tensorflow::RunStepResponse* resp,
                        CallControl* call, std::function<void(absl::Status)> done) {
        master->RunStepAsync(req, resp, control, std::move(done),
                             CancelledWith(call));
      }), kLarge);
  d.Add(kM, "CloseSession", MasterMethod(master, &Master::CloseSession, control, "CloseSessionRequest"));
  d.Add(kM, "ListDevices", MasterMethod(master, &Master::ListDevices, control, "ListDevicesRequest"));
  d.Add(kM, "Reset", MasterMethod(master, &Master::Reset, control, "ResetRequest"));
  d.Add(kM, "MakeCallable", MasterMethod(master, &Master::MakeCallable, control, "MakeCallableRequest"));
  d.Add(kM, "RunCallable", Serve<tensorflow::RunCallableRequest, tensorflow::RunCallableResponse>(
      "RunCallableRequest", control,
      [master](const tensorflow::RunCallableRequest& req, tensorflow::RunCallableResponse* resp,
               CallControl* call, std::function<void(absl::Status)> done) {
        done(master->RunCallable(req, resp, CancelledWith(call).get()));
      }), kLarge);
  d.Add(kM, "ReleaseCallable", MasterMethod(master, &Master::ReleaseCallable, control, "ReleaseCallableRequest"));

  const std::string& listen = impl->address;
  int bound_port = 0;
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                        options.security->ServerCredentials());
  builder.AddListeningPort(listen, credentials, &bound_port);
  if (options.local_socket &&
      LocalSocketApplies(impl->address, *options.security)) {
    impl->local_target = LocalSocketTarget(impl->address);
    builder.AddListeningPort(impl->local_target, credentials);
  }
  // Local sockets' buffers, and the cap on connections (socket_options.h).
  builder.SetOption(ServerSocketOptions());
  // gRPC shares a port between processes by default (SO_REUSEPORT): then a
  // second task started on a busy port would answer half of its calls.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // What peers can make gRPC hold, whatever they send.
  grpc::ResourceQuota quota(absl::StrCat("weft_server_", impl->address));
  quota.Resize(static_cast<size_t>(RpcMemoryBytes(options)));
  builder.SetResourceQuota(quota);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  builder.RegisterAsyncGenericService(impl->service->service());
  impl->server = builder.BuildAndStart();
  if (impl->server == nullptr || bound_port == 0) {
    impl->server.reset();
    return absl::FailedPreconditionError(absl::StrCat(
        "task ", task.ToString(), " could not listen on ", listen,
        impl->local_target.empty() ? "" : absl::StrCat(" and ", impl->local_target),
        " (is another process using the port, or is the host not an "
        "address of this machine?",
        impl->local_target.empty() ? "" : " --no-local-socket serves TCP alone",
        ")"));
  }
  if (port == 0) impl->address = absl::StrCat(host, ":", bound_port);
  for (int i = 0; i < kAwaitedCalls; ++i) {
    ServerCall::Await(impl->service.get(), queue);
  }

  // Collection: the master's idle sessions, the worker's expired step
  // rendezvous (what peers asked for and never ran, steps never cleaned up).
  Impl* raw = impl.get();
  const bool session_gc = options.session_gc > absl::ZeroDuration();
  const absl::Duration every = std::min(
      {absl::Seconds(5), options.step_limits.unclaimed_ttl / 4,
       session_gc ? options.session_gc / 4 : absl::InfiniteDuration()});
  raw->timer->Schedule([raw, every, session_gc] {
    while (!raw->stop.WaitForNotificationWithTimeout(every)) {
      const absl::Time now = absl::Now();
      raw->worker->CollectExpired(now);
      if (session_gc) raw->master->CollectIdleSessions(now);
    }
  });
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(impl)));
}

bool GrpcServer::WaitForCollectivesClaimed(absl::Duration max) {
  Worker* worker = impl_->worker.get();  // null once shut down
  return worker == nullptr || worker->WaitForCollectivesClaimed(max);
}

void GrpcServer::Shutdown() {
  Impl& impl = *impl_;
  {
    absl::MutexLock lock(&impl.mu);
    if (impl.shut_down) return;
    impl.shut_down = true;
  }
  impl.stop.Notify();
  impl.timer.reset();  // its loop reads the master and the worker
  // Steps in flight end now, so the calls waiting on them can answer.
  impl.worker->AbortAllSteps();
  impl.server->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  impl.local_master->Close();  // waits for the in-process calls
  impl.master.reset();  // closes the sessions still open
  impl.control.reset();
  impl.worker_control.reset();
  impl.worker.reset();
  impl.inter_op.reset();
  // Every handler has answered: nothing posts to the queue any more.
  impl.queue.reset();
}

}  // namespace weft
