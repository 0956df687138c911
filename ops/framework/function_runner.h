// FunctionRunner: how a kernel runs a library function of its graph, for ops
// that call a function per element rather than once per step (tf.data's
// map, filter, flat_map, interleave, and a one-shot iterator's factory),
// or on a device of their choosing (RemoteCall).
// Calls inside a graph (PartitionedCall, If, While) never come here: they
// are lowered into the graph before it runs (graph/lower_functional_ops.h).
//
//   const tensorflow::NameAttrList& f = ...;   // the node's `f` attr
//   WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const InstantiatedFunction> fn,
//                         c->functions()->Instantiate(f, c->device(),
//                                                     c->resource_manager()));
//   std::vector<Tensor> results;
//   WEFT_RETURN_IF_ERROR(fn->Run(args, &results));
//
// The interface lives here so kernels do not depend on the runtime; the
// session and the worker implement it (runtime/function_runtime.h).
//
// Ownership: an InstantiatedFunction keeps alive everything it runs with
// (its executor and the runtime that made it) except the device and its
// ResourceMgr, which must outlive it; a dataset may hold one for as long as
// an iterator needs it. Thread safety: Instantiate and Run may be called from
// many threads at once; each Run is an independent step.
#ifndef WEFT_OPS_FRAMEWORK_FUNCTION_RUNNER_H_
#define WEFT_OPS_FRAMEWORK_FUNCTION_RUNNER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/attr_value.pb.h"
#include "runtime/core/tensor.h"
#include "runtime/core/types.h"

namespace weft {

class CancellationManager;
class Device;
class ResourceMgr;

class InstantiatedFunction {
 public:
  virtual ~InstantiatedFunction() = default;
  // The flattened signature under the instantiation's attrs.
  virtual const DataTypeVector& arg_types() const = 0;
  virtual const DataTypeVector& ret_types() const = 0;
  // Runs the body once. INVALID_ARGUMENT naming the function when `args`
  // do not match arg_types(); otherwise the body's first error, naming its
  // node. `cancellation` (optional) aborts the call when cancelled.
  virtual absl::Status Run(std::vector<Tensor> args, std::vector<Tensor>* rets,
                           CancellationManager* cancellation = nullptr) const = 0;
  // The library name, for messages.
  virtual const std::string& name() const = 0;
};

class FunctionRunner {
 public:
  virtual ~FunctionRunner() = default;
  // The function `fn.name()` with `fn.attr()` bound, every node of its body
  // on `device`, its resources in `resources`. NOT_FOUND naming it when the
  // library has no such function; otherwise what building its graph and
  // kernels reports (naming the node).
  virtual absl::StatusOr<std::shared_ptr<const InstantiatedFunction>>
  Instantiate(const tensorflow::NameAttrList& fn, Device* device,
              ResourceMgr* resources) = 0;
  // The function with every node on the device `target` names (RemoteCall's
  // target, full or partial: "/job:worker/replica:0/task:1/device:CPU:0",
  // "/cpu:1"). A device of this task runs it in-process, as Instantiate
  // does, with the resources the calling graph uses there; a device of
  // another task runs it on that task, one step per Run, where the runtime
  // reaches other tasks (a worker's graphs). INVALID_ARGUMENT for a
  // malformed target; NOT_FOUND naming the target and this task's devices
  // when no device matches and no other task can be asked.
  virtual absl::StatusOr<std::shared_ptr<const InstantiatedFunction>>
  InstantiateOn(const tensorflow::NameAttrList& fn, const std::string& target) = 0;
};

}  // namespace weft

#endif  // WEFT_OPS_FRAMEWORK_FUNCTION_RUNNER_H_
