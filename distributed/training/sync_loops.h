// The threads of a synchronous (kBetweenSync) worker beside its steps: on
// the chief, the update loop that applies the aggregated gradients
// (TensorFlow's chief queue runner) until the global step reaches the
// end; on every worker, a watch that reads the workers' step counters
// about once a second into the context's history, so that a step that
// times out can name whose gradients it waited for (task_health.h).
// Internal to distributed/training.
//
// Start and Stop are called from the trainer's thread; Stop joins both
// threads (their steps have deadlines), and the destructor stops them too.
#ifndef WEFT_DISTRIBUTED_TRAINING_SYNC_LOOPS_H_
#define WEFT_DISTRIBUTED_TRAINING_SYNC_LOOPS_H_

#include <atomic>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "distributed/training/worker_context.h"
#include "distributed/training/worker_graph.h"
#include "runtime/session.h"

namespace weft {

class SyncLoops {
 public:
  // Records into w.history; nothing runs before Start.
  SyncLoops(WorkerContext& w, const WorkerGraph& g) : w_(w), g_(g) {}
  ~SyncLoops() { Stop().IgnoreError(); }
  SyncLoops(const SyncLoops&) = delete;
  SyncLoops& operator=(const SyncLoops&) = delete;

  // Starts the threads on `session` (which must outlive Stop), if the
  // worker trains synchronously; at the start and after a ps restart.
  void Start(Session* session);

  // Stops and joins them; the update loop's error, if it failed (named by
  // Diagnose).
  absl::Status Stop();

 private:
  WorkerContext& w_;
  const WorkerGraph& g_;
  std::atomic<bool> stop_watch_{false};
  std::thread watcher_, updater_;
  absl::Mutex mu_;
  absl::Status updater_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_TRAINING_SYNC_LOOPS_H_
