// A library function run on another task: what RemoteCall does when its
// target is a device this task does not have (TensorFlow's cluster function
// library runtime).
//
//   RemoteFunctionOptions o;  o.library = ...;  o.workers = ...;
//   o.session_handle = worker_session;           // the caller's session
//   WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const InstantiatedFunction> f,
//       InstantiateRemoteFunction(o, fn, *ParseDeviceSpec(
//           "/job:worker/replica:0/task:1/device:CPU:0")));
//   WEFT_RETURN_IF_ERROR(f->Run(args, &rets));    // one step on task 1
//
// Instantiating goes through the master's pipeline: the function becomes a
// graph (runtime/function_runtime.h: FunctionCallGraph) whose arguments are
// fed and whose results are fetched, every node asks for the target
// device, and PlanRun (distributed/run_plan.h) places it over the target
// task's devices (asked with GetStatus) and turns the feeds and fetches into
// client-terminated _Recv and _Send nodes there. The partition is
// registered on the target task under the caller's worker session. Each
// Run is then one RunGraph with the arguments as its sends and the results
// as its receives, followed by a CleanupGraph; cancelling the caller's
// step aborts it there. Destroying the function deregisters the graph.
//
// Errors name the function and the task: an unreachable task, a target
// device the task lacks, a body that cannot run there.
// Thread safety: Run may be called from many threads at once, each call
// its own step.
#ifndef WEFT_DISTRIBUTED_REMOTE_FUNCTION_H_
#define WEFT_DISTRIBUTED_REMOTE_FUNCTION_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "distributed/worker_interface.h"
#include "ops/framework/function_runner.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "proto/function.pb.h"
#include "runtime/core/device_name.h"

namespace weft {

struct RemoteFunctionOptions {
  std::shared_ptr<const tensorflow::FunctionDefLibrary> library;  // required
  const OpRegistry* ops = nullptr;          // required
  const KernelRegistry* kernels = nullptr;  // required
  // Reaches the target task; must outlive the functions made, unless
  // `owned_workers` holds it.
  WorkerCache* workers = nullptr;
  std::shared_ptr<WorkerCache> owned_workers;
  // The worker session the graph is registered under ("": the task's
  // legacy session).
  std::string session_handle;
  // Bounds GetStatus and RegisterGraph.
  absl::Duration call_timeout = absl::Seconds(60);
};

// `target` must name a job, task and device (ParseDeviceSpec's fields all
// set); INVALID_ARGUMENT otherwise.
absl::StatusOr<std::shared_ptr<const InstantiatedFunction>>
InstantiateRemoteFunction(const RemoteFunctionOptions& options,
                          const tensorflow::NameAttrList& fn,
                          const DeviceSpec& target);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_REMOTE_FUNCTION_H_
