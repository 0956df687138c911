// WorkerInterface: what a master (and another worker) may ask of one task,
// the WorkerService's methods as asynchronous calls over its request and
// response protos (proto/worker.proto).
//
//   WorkerInterface* w = ...;                 // from a WorkerCache
//   tensorflow::GetStatusRequest req;
//   tensorflow::GetStatusResponse resp;
//   w->GetStatusAsync(&req, &resp, [](absl::Status s) { ... });
//
// Two implementations: Worker (distributed/worker.h) answers in-process, and
// the gRPC client (distributed/rpc/) sends the same protos to a remote task.
// Code above this interface never knows which, so the master's logic is
// tested without sockets.
//
// Contract for every method: `request` and `response` must stay alive until
// `done` runs; `done` runs exactly once, possibly on the calling thread
// before the method returns, possibly on another thread. An error status
// names the task and what failed; the response is then unspecified.
// Thread safety: implementations are thread-safe.
#ifndef WEFT_DISTRIBUTED_WORKER_INTERFACE_H_
#define WEFT_DISTRIBUTED_WORKER_INTERFACE_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/worker.pb.h"
#include "runtime/core/allocator.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_proto.h"

namespace weft {

class ThreadPool;

// RecvTensor's answer as a tensor, not a proto: how the remote rendezvous
// asks, so that no side copies a large tensor more than the transport must
// (in-process: not at all; over gRPC: once on each side).
struct RecvTensorResult {
  Allocator* allocator = nullptr;  // in: where a received buffer goes (null: CPU)
  // in: threads that may share copying a large received buffer into place
  // (the receiving device's intra-op pool; null: the answering thread alone).
  ThreadPool* copy_pool = nullptr;
  Tensor tensor;                   // out, unless is_dead
  bool is_dead = false;            // out
};

class WorkerInterface {
 public:
  using Done = std::function<void(absl::Status)>;
  virtual ~WorkerInterface() = default;

  // The task's devices.
  virtual void GetStatusAsync(const tensorflow::GetStatusRequest* request,
                              tensorflow::GetStatusResponse* response,
                              Done done) = 0;
  virtual void CreateWorkerSessionAsync(
      const tensorflow::CreateWorkerSessionRequest* request,
      tensorflow::CreateWorkerSessionResponse* response, Done done) = 0;
  virtual void DeleteWorkerSessionAsync(
      const tensorflow::DeleteWorkerSessionRequest* request,
      tensorflow::DeleteWorkerSessionResponse* response, Done done) = 0;
  // Builds executors for this task's partition of a graph.
  virtual void RegisterGraphAsync(
      const tensorflow::RegisterGraphRequest* request,
      tensorflow::RegisterGraphResponse* response, Done done) = 0;
  virtual void DeregisterGraphAsync(
      const tensorflow::DeregisterGraphRequest* request,
      tensorflow::DeregisterGraphResponse* response, Done done) = 0;
  // Runs one step of a registered graph.
  virtual void RunGraphAsync(const tensorflow::RunGraphRequest* request,
                             tensorflow::RunGraphResponse* response,
                             Done done) = 0;
  // Drops what a step left behind (its rendezvous); aborts it if running.
  virtual void CleanupGraphAsync(
      const tensorflow::CleanupGraphRequest* request,
      tensorflow::CleanupGraphResponse* response, Done done) = 0;
  // Clears resource containers (variables) on every device of the task.
  virtual void CleanupAllAsync(const tensorflow::CleanupAllRequest* request,
                               tensorflow::CleanupAllResponse* response,
                               Done done) = 0;
  // A tensor a _Send of this task produces in step `step_id`; waits for it.
  virtual void RecvTensorAsync(const tensorflow::RecvTensorRequest* request,
                               tensorflow::RecvTensorResponse* response,
                               Done done) = 0;
  // The same, answered as a tensor. This default goes through the proto;
  // implementations override it to skip the copies.
  virtual void RecvTensorValueAsync(const tensorflow::RecvTensorRequest* request,
                                    RecvTensorResult* result, Done done) {
    auto response = std::make_shared<tensorflow::RecvTensorResponse>();
    RecvTensorAsync(request, response.get(),
                    [response, result, done = std::move(done)](absl::Status s) {
                      if (s.ok()) {
                        result->is_dead = response->is_dead();
                        if (!result->is_dead) {
                          absl::StatusOr<Tensor> t = TensorFromProto(
                              response->tensor(), result->allocator != nullptr
                                                      ? result->allocator
                                                      : CpuAllocator());
                          if (t.ok()) {
                            result->tensor = *std::move(t);
                          } else {
                            s = t.status();
                          }
                        }
                      }
                      done(s);
                    });
  }
};

// Finds the WorkerInterface of a task by its name ("/job:worker/replica:0/
// task:1"). Thread-safe; the interfaces it returns live as long as it.
class WorkerCache {
 public:
  virtual ~WorkerCache() = default;
  // UNAVAILABLE naming the task when it is not part of the cluster or
  // cannot be reached.
  virtual absl::StatusOr<WorkerInterface*> GetWorker(
      const std::string& task) = 0;
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_WORKER_INTERFACE_H_
