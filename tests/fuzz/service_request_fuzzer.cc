// Fuzz target: every request message the MasterService and the
// WorkerService accept, decoded and served by an in-process cluster (two
// workers, a master on task 0) as a server would serve it, plus the
// RecvTensorResponse decoder. The first byte picks the method; the rest are
// the request's bytes. Every call must end (bounded: a step is aborted, as
// the master would abort it) with success or a clean error.
//
// The tasks' devices allow graphs no file access, as `weft server` without
// --file-root: a mutated RegisterGraph may carry file ops.
//
// Master requests whose session_handle is "S" are pointed at a session made
// at start-up (x -> y = x + c on task 1 -> z = -y), so mutated RunSteps,
// Extends and callables reach the session rather than "not found".
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/synchronization/notification.h"
#include "distributed/cluster_spec.h"
#include "distributed/in_process_worker_cache.h"
#include "distributed/master.h"
#include "distributed/rpc/tensor_coding.h"
#include "distributed/worker.h"
#include "grpcpp/support/byte_buffer.h"
#include "runtime/core/device.h"
#include "runtime/core/file_policy.h"
#include "runtime/core/thread_pool.h"
#include "tests/fuzz/fuzz_check.h"

namespace weft {
namespace {

struct Cluster {
  std::unique_ptr<DeviceMgr> devices[2];
  std::unique_ptr<ThreadPool> pools[2];
  InProcessWorkerCache cache;
  std::unique_ptr<Worker> workers[2];
  std::unique_ptr<Master> master;
  std::string handle;
};

tensorflow::GraphDef Sample() {
  tensorflow::GraphDef def;
  auto add = [&](const char* name, const char* op, const char* device) {
    tensorflow::NodeDef* n = def.add_node();
    n->set_name(name);
    n->set_op(op);
    n->set_device(device);
    (*n->mutable_attr())[std::string(op) == "Placeholder" || std::string(op) == "Const"
                             ? "dtype"
                             : "T"]
        .set_type(tensorflow::DT_FLOAT);
    return n;
  };
  add("x", "Placeholder", "");
  tensorflow::NodeDef* c = add("c", "Const", "/job:worker/task:1");
  auto* value = (*c->mutable_attr())["value"].mutable_tensor();
  value->set_dtype(tensorflow::DT_FLOAT);
  value->add_float_val(1.5f);
  tensorflow::NodeDef* y = add("y", "AddV2", "/job:worker/task:1");
  y->add_input("x");
  y->add_input("c");
  add("z", "Neg", "")->add_input("y");
  return def;
}

Cluster* TheCluster() {
  static Cluster* cluster = [] {
    auto* c = new Cluster;
    for (int t = 0; t < 2; ++t) {
      LocalDeviceOptions d;
      d.job = "worker";
      d.task = t;
      // As a server without --file-root: mutated graphs with SaveV2 or
      // MergeV2Checkpoints touch no file of the fuzzing host.
      d.file_policy = FilePolicy::Confined({}).value();
      d.intra_op_threads = 1;
      d.host_memory_limit_bytes = int64_t{64} << 20;
      c->devices[t] = DeviceMgr::NewLocal(d).value();
      c->pools[t] = ThreadPool::Create("fuzz_worker", 2).value();
      WorkerOptions w;
      w.task = "/job:worker/replica:0/task:" + std::to_string(t);
      w.devices = c->devices[t].get();
      w.inter_op_pool = c->pools[t].get();
      w.workers = &c->cache;
      c->workers[t] = std::make_unique<Worker>(w);
      c->cache.Add(w.task, c->workers[t].get());
    }
    MasterOptions m;
    m.task = "/job:worker/replica:0/task:0";
    m.cluster = ParseClusterSpec("worker=127.0.0.1:1,127.0.0.1:2").value();
    m.workers = &c->cache;
    m.wait_for_tasks = absl::Seconds(1);
    m.call_timeout = absl::Seconds(5);
    m.session_gc = absl::ZeroDuration();
    m.log = [](absl::string_view) {};
    c->master = std::make_unique<Master>(m);
    tensorflow::CreateSessionRequest req;
    *req.mutable_graph_def() = Sample();
    tensorflow::CreateSessionResponse resp;
    if (!c->master->CreateSession(req, &resp).ok()) std::abort();
    c->handle = resp.session_handle();
    return c;
  }();
  return cluster;
}

template <typename Req, typename Resp>
void WorkerCall(WorkerInterface* w,
            void (WorkerInterface::*method)(const Req*, Resp*, WorkerInterface::Done),
            const uint8_t* data, size_t size, const char* what) {
  auto req = std::make_shared<Req>();
  if (!req->ParseFromArray(data, static_cast<int>(size))) return;
  auto resp = std::make_shared<Resp>();
  auto done = std::make_shared<absl::Notification>();
  auto status = std::make_shared<absl::Status>();
  (w->*method)(req.get(), resp.get(), [req, resp, done, status](absl::Status s) {
    *status = s;
    done->Notify();
  });
  if (!done->WaitForNotificationWithTimeout(absl::Seconds(1))) {
    // A step waiting on a peer: what the master's abort ends.
    for (auto& worker : TheCluster()->workers) worker->AbortAllSteps();
    weft::fuzz::ExpectTrue(done->WaitForNotificationWithTimeout(absl::Seconds(10)),
                           "a worker call ends once its steps are aborted");
  }
  weft::fuzz::ExpectClean(*status, what);
}

// `run(request, &response)` calls the method.
template <typename Req, typename Resp, typename Run>
void MasterCallWith(Run run, const uint8_t* data, size_t size,
                    const char* what) {
  Req req;
  if (!req.ParseFromArray(data, static_cast<int>(size))) return;
  // Steps are bounded as a client bounds them: a mutated ExtendSession may
  // add a loop that never ends, which only a deadline stops (in
  // TensorFlow too). A callable's steps take its run_options.
  if constexpr (std::is_same_v<Req, tensorflow::RunStepRequest>) {
    req.mutable_options()->set_timeout_in_ms(2000);
  }
  if constexpr (std::is_same_v<Req, tensorflow::MakeCallableRequest>) {
    req.mutable_options()->mutable_run_options()->set_timeout_in_ms(2000);
  }
  if constexpr (!std::is_same_v<Req, tensorflow::ResetRequest> &&
                !std::is_same_v<Req, tensorflow::CreateSessionRequest> &&
                !std::is_same_v<Req, tensorflow::CloseSessionRequest>) {
    if (req.session_handle() == "S") req.set_session_handle(TheCluster()->handle);
  }
  Resp resp;
  weft::fuzz::ExpectClean(run(req, &resp), what);
}

template <typename Req, typename Resp>
void MasterCall(absl::Status (Master::*method)(const Req&, Resp*),
                const uint8_t* data, size_t size, const char* what) {
  MasterCallWith<Req, Resp>(
      [method](const Req& req, Resp* resp) {
        return (TheCluster()->master.get()->*method)(req, resp);
      },
      data, size, what);
}

}  // namespace
}  // namespace weft

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weft;  // NOLINT
  if (size == 0) return 0;
  Cluster* c = TheCluster();
  WorkerInterface* w = c->workers[data[0] & 1].get();
  const uint8_t* d = data + 1;
  const size_t n = size - 1;
  switch ((data[0] >> 1) % 16) {
    case 0: return WorkerCall(w, &WorkerInterface::GetStatusAsync, d, n, "GetStatus"), 0;
    case 1: return WorkerCall(w, &WorkerInterface::CreateWorkerSessionAsync, d, n, "CreateWorkerSession"), 0;
    case 2: return WorkerCall(w, &WorkerInterface::RegisterGraphAsync, d, n, "RegisterGraph"), 0;
    case 3: return WorkerCall(w, &WorkerInterface::RunGraphAsync, d, n, "RunGraph"), 0;
    case 4: return WorkerCall(w, &WorkerInterface::CleanupGraphAsync, d, n, "CleanupGraph"), 0;
    case 5: return WorkerCall(w, &WorkerInterface::RecvTensorAsync, d, n, "RecvTensor"), 0;
    case 6: return WorkerCall(w, &WorkerInterface::DeregisterGraphAsync, d, n, "DeregisterGraph"), 0;
    case 7: return MasterCall(&Master::CreateSession, d, n, "CreateSession"), 0;
    case 8: return MasterCall(&Master::ExtendSession, d, n, "ExtendSession"), 0;
    case 9: return MasterCall(&Master::RunStep, d, n, "RunStep"), 0;
    case 10: return MasterCall(&Master::MakeCallable, d, n, "MakeCallable"), 0;
    case 11:
      return MasterCallWith<tensorflow::RunCallableRequest,
                            tensorflow::RunCallableResponse>(
                 [](const tensorflow::RunCallableRequest& req,
                    tensorflow::RunCallableResponse* resp) {
                   return TheCluster()->master->RunCallable(req, resp);
                 },
                 d, n, "RunCallable"),
             0;
    case 12: return MasterCall(&Master::ListDevices, d, n, "ListDevices"), 0;
    case 13: return MasterCall(&Master::ReleaseCallable, d, n, "ReleaseCallable"), 0;
    case 14: return WorkerCall(w, &WorkerInterface::CleanupAllAsync, d, n, "CleanupAll"), 0;
    default: {
      grpc::Slice slice(d, n);
      grpc::ByteBuffer buffer(&slice, 1);
      Tensor t;
      bool dead;
      weft::fuzz::ExpectClean(
          DecodeRecvTensorResponse(buffer, c->devices[0]->default_device()->allocator(),
                                   nullptr, &t, &dead),
          "DecodeRecvTensorResponse");
      return 0;
    }
  }
}
