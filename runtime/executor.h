// Executor: runs one placed Graph on one Device, step after step.
//
//   ExecutorOptions opts;
//   opts.device = device_mgr->default_device();
//   opts.inter_op_pool = &pool;                       // optional
//   WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Executor> exec,
//                         Executor::Create(opts, *graph));
//   SimpleCallFrame frame(feeds, num_fetches);
//   Executor::StepArgs args;
//   args.call_frame = &frame;
//   WEFT_RETURN_IF_ERROR(exec->Run(args));            // blocks
//
// Creation does all the work that does not depend on a step: it instantiates
// every node's kernel from the KernelRegistry (errors name node, op, device
// and dtype) and flattens the graph into arrays (nodes, out-edges with their
// destination input slots, initial pending counts). A step then needs only
// per-step arrays of input slots and pending counters, reused across steps.
//
// How a step runs. Nodes become ready when all their inputs (data and
// control) have arrived. Cheap kernels run inline on the thread that made
// them ready; an expensive kernel (OpKernel::IsExpensive) goes to the
// inter-op pool when that thread has other ready work. Async kernels
// (OpKernel::IsAsync) may finish on any thread; the nodes they make ready
// run on that thread only if it is already running this step (the kernel
// finished at once), and otherwise go to the pool: a _Recv is completed
// inside the _Send of another partition, whose thread has that partition's
// own work to get on with. Without a pool everything runs on the calling
// thread (or the completing one).
//
// Deadness (TensorFlow's conditionals). An output a kernel leaves unset (the
// untaken side of a Switch) is dead. A node with a dead input, or a control
// input from a dead node, is dead: its kernel does not run and all its
// outputs are dead. Merge is the exception: it runs on its first live data
// input (once its control inputs are in) and is dead only if every data input
// is dead. Send/Recv style transfer nodes run even when dead, with
// OpKernelContext::is_input_dead() set, so deadness can cross devices.
//
// Refs. A ref output (a legacy variable) flows to ref inputs as a ref; a
// plain input fed from a ref edge gets a copy of the value, read under the
// variable's lock just before its kernel runs.
//
// Errors. The first kernel error aborts the step: its code is kept and
// "\n\t [[{{node NAME}}]]" is appended, as TensorFlow does. Nodes not yet
// started are skipped and the step's CancellationManager is cancelled (so
// blocked async kernels wake up). Cancelling that manager from outside stops
// scheduling too; the step then returns CANCELLED. Either way Run returns
// once running kernels have finished.
//
// Loops (TensorFlow's v1 while loops). Each loop body is a frame; a step
// runs one instance of it per iteration of the enclosing frame, keyed by
// (parent frame instance, parent iteration, frame_name), and each instance
// runs iterations 0, 1, ... with per-iteration input slots, counters and
// Merge states (numbered per frame, see executor_graph.h). Enter sends its
// input into iteration 0 of the child frame, or, with is_constant, into
// every iteration (a loop invariant); NextIteration sends to the next
// iteration of its frame; Exit sends to the parent frame's iteration.
// Deadness is per iteration: a dead NextIteration ends the loop, a dead
// Exit (every iteration but the last has one) is held back and, if no live
// value left through that Exit, delivered as dead when the frame instance
// is done. At most parallel_iterations (the Enter attr) iterations of an
// instance are live at once; a further NextIteration waits until the
// oldest finishes. Iterations finish in order and are recycled, and a frame
// instance is freed when its last iteration finishes, so a long loop holds
// no more than parallel_iterations iterations. Kernels see the instance and
// iteration in OpKernelContext::frame_id()/iter_id() (0, 0 outside loops).
// Graphs with loops do their loop bookkeeping under one per-step lock;
// graphs without loops never take it.
//
// Thread safety: Run and RunAsync may be called concurrently; each call is an
// independent step (kernels must allow concurrent Compute, as OpKernel
// requires). The Executor must outlive its steps.
// Ownership: the executor owns its kernels. It does not keep the Graph; the
// device, registry and pool must outlive it.
#ifndef WEFT_RUNTIME_EXECUTOR_H_
#define WEFT_RUNTIME_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "ops/framework/call_frame.h"
#include "ops/framework/kernel_registry.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/device.h"
#include "runtime/executor_observer.h"
#include "runtime/kernel_cache.h"
#include "runtime/core/thread_pool.h"

namespace weft {

class CollectiveRendezvous;
class FunctionRunner;
class Rendezvous;

struct ExecutorOptions {
  Device* device = nullptr;  // required
  // Required; usually &GlobalKernelRegistry() (from //ops:kernels, which the
  // executor itself does not link, so tests can use registries of their own).
  const KernelRegistry* kernels = nullptr;
  // Where expensive kernels go; null runs every kernel on the calling thread.
  ThreadPool* inter_op_pool = nullptr;
  // Optional: shares the kernels of stateful nodes with other executors of
  // the same session (see kernel_cache.h). Must outlive the executor.
  KernelCache* kernel_cache = nullptr;
  // Optional: the resources (variables, queues, ...) of a session isolated
  // from the others (ConfigProto.isolate_session_state); null: the
  // device's, which every session on the device shares. Must outlive the
  // executor.
  ResourceMgr* resource_mgr = nullptr;
  // Optional: runs the graph's library functions for kernels that call them
  // per element (ops/framework/function_runner.h). Must outlive the
  // executor.
  FunctionRunner* functions = nullptr;
};

// The tail TensorFlow appends to an error raised by node `name`.
std::string NodeErrorSuffix(absl::string_view name);

class Executor {
 public:
  struct StepArgs {
    int64_t step_id = 0;
    // Feeds for `_Arg` and results of `_Retval` nodes; may be null if the
    // graph has none.
    CallFrame* call_frame = nullptr;
    Rendezvous* rendezvous = nullptr;
    // Optional: where collective kernels meet the other tasks of their group
    // (runtime/core/collective.h); the worker provides it.
    CollectiveRendezvous* collectives = nullptr;
    // Optional. Cancelled by the executor when a node fails, so use one per
    // step. Must outlive the step.
    CancellationManager* cancellation = nullptr;
    // Optional; see executor_observer.h. Must outlive the step.
    ExecutorObserver* observer = nullptr;
  };
  using DoneCallback = std::function<void(absl::Status)>;

  // Instantiates the kernels of `graph` (placed or not: every node runs on
  // options.device). The graph is not kept.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(
      const ExecutorOptions& options, const Graph& graph);

  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs one step; returns when every node has run or been skipped.
  absl::Status Run(const StepArgs& args);
  // Starts one step and returns; `done` is called exactly once with the
  // step's status, possibly on this thread before RunAsync returns. Ready
  // nodes start on the calling thread.
  void RunAsync(const StepArgs& args, DoneCallback done);

  int num_nodes() const;
  Device* device() const;

 private:
  class Impl;
  explicit Executor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft

#endif  // WEFT_RUNTIME_EXECUTOR_H_
