// FunctionRuntime: the FunctionRunner (ops/framework/function_runner.h) of a
// graph's function library, for kernels that call a function per element
// (tf.data's map, filter, ...). The local session makes one per prepared
// graph and the worker one per registered graph.
//
//   auto functions = std::make_shared<FunctionRuntime>(FunctionRuntime::Options{
//       graph_def.library(), &GlobalOpRegistry(), &GlobalKernelRegistry()});
//   exec_options.functions = functions.get();   // executors see it
//
// Instantiating builds the same pipeline a session runs: a graph of an
// `_Arg` per flattened input, the body inlined (graph/function_inliner.h,
// attr placeholders bound), a `_Retval` per result that waits for the body's
// control outputs, calls and control flow in the body lowered and the whole
// checked by the GraphDef loader; every node is then placed on the calling
// kernel's device and one executor (runtime/executor.h) is built for it.
// A call runs that executor inline on the calling thread: a function called
// per element is small, and a kernel that wants calls in parallel (a
// parallel map) runs them from threads of its own.
//
// RemoteCall's InstantiateOn finds the target among `devices` (named under
// `task` when that is set: a worker serving a propagated cluster) and runs
// the function there with the resources `resources` gives for that device;
// a target on another task goes to `remote`, which the worker provides
// (distributed/remote_function.h); without it such a target is NOT_FOUND.
//
// Ownership: the runtime copies the library. An InstantiatedFunction holds
// the runtime (shared_ptr), so nested calls (a flat_map whose function
// builds a dataset that maps) keep working after the session that made it
// has moved on; the device, its ResourceMgr, and the registries must outlive
// both. Thread safety: const after construction; Instantiate and Run are
// thread-safe.
#ifndef WEFT_RUNTIME_FUNCTION_RUNTIME_H_
#define WEFT_RUNTIME_FUNCTION_RUNTIME_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/function_inliner.h"
#include "ops/framework/function_runner.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "proto/function.pb.h"
#include "proto/graph.pb.h"
#include "runtime/core/device.h"
#include "runtime/core/device_name.h"

namespace weft {

class FunctionRuntime : public FunctionRunner,
                        public std::enable_shared_from_this<FunctionRuntime> {
 public:
  // Instantiates `fn` on `target`, a device of another task (a full spec).
  using RemoteInstantiator = std::function<
      absl::StatusOr<std::shared_ptr<const InstantiatedFunction>>(
          const tensorflow::NameAttrList& fn, const DeviceSpec& target)>;

  struct Options {
    tensorflow::FunctionDefLibrary library;
    const OpRegistry* ops = nullptr;          // required
    const KernelRegistry* kernels = nullptr;  // required
    // For InstantiateOn (RemoteCall); null: only Instantiate works.
    const DeviceMgr* devices = nullptr;
    // This task's name ("/job:J/replica:R/task:T") when its devices are
    // known by another name than their own; empty: their own.
    std::string task;
    // The calling graph's resources on a device; null: the device's own.
    std::function<ResourceMgr*(const Device*)> resources;
    RemoteInstantiator remote;  // null: no other task is reachable
  };
  // The library is indexed once, here; a library that names a function
  // twice makes every Instantiate fail with that error.
  explicit FunctionRuntime(Options options);

  // Must be called on a runtime owned by a shared_ptr.
  absl::StatusOr<std::shared_ptr<const InstantiatedFunction>> Instantiate(
      const tensorflow::NameAttrList& fn, Device* device,
      ResourceMgr* resources) override;
  absl::StatusOr<std::shared_ptr<const InstantiatedFunction>> InstantiateOn(
      const tensorflow::NameAttrList& fn, const std::string& target) override;

  const tensorflow::FunctionDefLibrary& library() const {
    return options_.library;
  }

 private:
  // The device of this task that `target` names, or null.
  Device* LocalDevice(const DeviceSpec& target) const;

  const Options options_;
  // An index into options_.library (which it must not outlive).
  const absl::StatusOr<FunctionLibrary> index_;
};

// OK when `args` match `types` in number and dtype; otherwise
// INVALID_ARGUMENT naming the function `name` and the argument.
absl::Status CheckFunctionArgs(const std::string& name,
                               const DataTypeVector& types,
                               const std::vector<Tensor>& args);

// The function `fn` of `library` as a graph: an `_Arg` per flattened input
// ("_arg0", ...), the body inlined, a `_Retval` per result ("_retval0",
// ...) that waits for the body's control outputs; no devices. The
// flattened signature goes to `arg_types` and `ret_types`. NOT_FOUND naming
// the function when `library` has no such function.
absl::StatusOr<tensorflow::GraphDef> FunctionCallGraph(
    const tensorflow::NameAttrList& fn, const FunctionLibrary& index,
    const tensorflow::FunctionDefLibrary& library, const OpRegistry& ops,
    DataTypeVector* arg_types, DataTypeVector* ret_types);

}  // namespace weft

#endif  // WEFT_RUNTIME_FUNCTION_RUNTIME_H_
