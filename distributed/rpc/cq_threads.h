// CqThreads: a gRPC completion queue and the threads that drain it.
//
// Weft's calls, client and server side, use gRPC's completion-queue API
// rather than its callback API: every tag posted to a CqThreads' queue is a
// CqTag, whose Done runs on a thread of the queue, which is also the
// thread that polled the socket (with one thread, as Weft runs them, no
// completion changes threads; with more, they hand the polling to each
// other and wake one another). gRPC's callback API hands each completion from
// its poller to one of several "nexting" threads; on the 2-core test
// machines that was 20-23 thread switches per two-task step in each task,
// about a third of the task's CPU time (perf: finish_task_switch and
// try_to_wake_up), and the largest part of a step's fixed cost.
//
//   CqTag* call = ...;  // posts itself, e.g. reader->Finish(&r, &s, call)
//   ... call->Done(ok) runs on one of the threads ...
//
// Ownership: the owner of a CqThreads must see that every tag posted to it
// has come back before destroying it (the destructor shuts the queue down,
// drains it and joins the threads). ForClients() is the process's queue for
// clients that have no server of their own; it is never destroyed.
// Thread safety: thread-safe; Done must not block for long (it holds up
// the other calls on the queue).
#ifndef WEFT_DISTRIBUTED_RPC_CQ_THREADS_H_
#define WEFT_DISTRIBUTED_RPC_CQ_THREADS_H_

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/client_context.h"
#include "grpcpp/completion_queue.h"

namespace weft {

class CqTag {
 public:
  // `ok`: gRPC's word on the operation (false: the call or queue is ending).
  virtual void Done(bool ok) = 0;

  // Called by the queue's thread before Done: waits for a Posting scope
  // still open on another thread.
  void Arrived();

 protected:
  ~CqTag() = default;

  // Open while this tag is handed to gRPC (on any thread), from the first
  // write to the call's operations to the gRPC call's return. gRPC passes
  // the tag to the queue's thread through lock-free queues that
  // ThreadSanitizer cannot see into (Debian's gRPC is not built for it);
  // in --config=tsan builds this is a lock that Arrived also takes, which
  // shows TSan the hand-off, and in other builds it is nothing.
  class Posting {
   public:
    explicit Posting(CqTag* tag);
    ~Posting();
    Posting(const Posting&) = delete;
    Posting& operator=(const Posting&) = delete;

   private:
    CqTag* const tag_;
  };

 private:
#if defined(WEFT_TSAN)
  absl::Mutex posting_;
#endif
};

class CqThreads {
 public:
  // Starts draining `cq` (a server's queue from ServerBuilder::
  // AddCompletionQueue, or a plain one) on `threads` threads named `name`.
  CqThreads(std::unique_ptr<grpc::CompletionQueue> cq, const std::string& name,
            int threads);
  ~CqThreads();
  CqThreads(const CqThreads&) = delete;
  CqThreads& operator=(const CqThreads&) = delete;

  grpc::CompletionQueue* cq() { return cq_.get(); }

  // Client calls on this queue are registered while they run, so that the
  // owner can end them before it destroys the queue (a call to a task that
  // hangs may have no deadline). Unregister before the context goes.
  void Register(grpc::ClientContext* call);
  void Unregister(grpc::ClientContext* call);
  // Cancels every registered call; each then completes with CANCELLED on
  // the queue's threads. The destructor does this first.
  void CancelCalls();

  static CqThreads* ForClients();

 private:
  std::unique_ptr<grpc::CompletionQueue> cq_;
  std::vector<std::thread> threads_;
  absl::Mutex mu_;
  absl::flat_hash_set<grpc::ClientContext*> calls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RPC_CQ_THREADS_H_
