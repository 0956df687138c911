// ExecutorObserver: the executor's hook for watching nodes run.
//
// One mechanism feeds step statistics (StepStatsCollector below), traces and
// live progress. Install one per step through Executor::StepArgs::observer:
//
//   StepStatsCollector stats;
//   Executor::StepArgs args;
//   args.observer = &stats;
//   WEFT_RETURN_IF_ERROR(executor->Run(args));
//   tensorflow::StepStats proto;
//   stats.Finalize(&proto);
//
// The executor calls OnNodeStart just before a node's kernel starts and
// OnNodeEnd just after it finishes (for an async kernel, when it calls
// done), on the thread that ran it. Nodes skipped because they are dead or
// the step aborted get no calls. With no observer installed the executor
// takes a separate code path with no calls, no clock reads and no branches
// per node.
//
// Thread safety: the calls come from any thread, concurrently for nodes that
// run in parallel; implementations must be thread-safe. The event and the
// strings it points to are valid only during the call.
#ifndef WEFT_RUNTIME_EXECUTOR_OBSERVER_H_
#define WEFT_RUNTIME_EXECUTOR_OBSERVER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "proto/step_stats.pb.h"

namespace weft {

struct NodeExecEvent {
  int64_t step_id = 0;
  int node_index = 0;  // dense index within the executor
  absl::string_view node_name;
  absl::string_view op;
  absl::string_view device;  // full device name
  int thread_id = 0;         // small per-process number of the thread
  int64_t start_nanos = 0;   // wall clock (absl::GetCurrentTimeNanos)
  int64_t end_nanos = 0;     // OnNodeEnd only
  const absl::Status* status = nullptr;  // OnNodeEnd only: the kernel's
};

class ExecutorObserver {
 public:
  virtual ~ExecutorObserver() = default;
  virtual void OnNodeStart(const NodeExecEvent& event) = 0;
  virtual void OnNodeEnd(const NodeExecEvent& event) = 0;
};

// A small number for the calling thread, stable for its lifetime (1, 2, ...).
int CurrentThreadNumber();

// Collects tensorflow::StepStats (one DeviceStepStats per device, one
// NodeExecStats per node run with its name, timeline label, times in
// microseconds and thread). Thread-safe; reusable after Finalize().
class StepStatsCollector : public ExecutorObserver {
 public:
  StepStatsCollector() = default;
  StepStatsCollector(const StepStatsCollector&) = delete;
  StepStatsCollector& operator=(const StepStatsCollector&) = delete;

  void OnNodeStart(const NodeExecEvent& event) override {}
  void OnNodeEnd(const NodeExecEvent& event) override;

  // Moves what was collected into `out` (appending to its dev_stats) and
  // starts afresh.
  void Finalize(tensorflow::StepStats* out);

 private:
  absl::Mutex mu_;
  tensorflow::StepStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace weft

#endif  // WEFT_RUNTIME_EXECUTOR_OBSERVER_H_
