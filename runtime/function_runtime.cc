#include "runtime/function_runtime.h"

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/function_inliner.h"
#include "graph/graph_def_loader.h"
#include "ops/framework/call_frame.h"
#include "proto/graph.pb.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/status.h"
#include "runtime/executor.h"

namespace weft {
namespace {

// Step ids of function calls: far above any session's, so a call's per-step
// container never meets a session step's.
std::atomic<int64_t> next_call_step{int64_t{1} << 62};

class Instance : public InstantiatedFunction {
 public:
  Instance(std::string name, DataTypeVector args, DataTypeVector rets,
           std::shared_ptr<const FunctionRuntime> runtime)
      : name_(std::move(name)),
        arg_types_(std::move(args)),
        ret_types_(std::move(rets)),
        runtime_(std::move(runtime)) {}

  const DataTypeVector& arg_types() const override { return arg_types_; }
  const DataTypeVector& ret_types() const override { return ret_types_; }
  const std::string& name() const override { return name_; }

  absl::Status Run(std::vector<Tensor> args, std::vector<Tensor>* rets,
                   CancellationManager* cancellation) const override {
    WEFT_RETURN_IF_ERROR(CheckFunctionArgs(name_, arg_types_, args));
    SimpleCallFrame frame(std::move(args), static_cast<int>(ret_types_.size()));
    // A call of its own (the executor cancels it when a node fails), which
    // the caller's cancellation cancels in turn.
    CancellationManager own;
    CancellationToken token = kInvalidToken;
    if (cancellation != nullptr) {
      token = cancellation->Register([&own] { own.StartCancel(); });
      if (token == kInvalidToken) {
        return absl::CancelledError(
            absl::StrCat("function ", name_, ": the calling step was cancelled"));
      }
    }
    Executor::StepArgs step;
    step.step_id = next_call_step.fetch_add(1, std::memory_order_relaxed);
    step.call_frame = &frame;
    step.cancellation = &own;
    absl::Status s = executor_->Run(step);
    if (token != kInvalidToken) cancellation->Deregister(token);
    WEFT_RETURN_IF_ERROR(s);
    return frame.TakeRetvals(rets);
  }

  std::unique_ptr<Executor> executor_;

 private:
  const std::string name_;
  const DataTypeVector arg_types_;
  const DataTypeVector ret_types_;
  // Kept for the executor's kernels, which may instantiate nested functions.
  const std::shared_ptr<const FunctionRuntime> runtime_;
};

tensorflow::NodeDef MakeNode(const std::string& name, const std::string& op,
                             DataType type, int index) {
  tensorflow::NodeDef node;
  node.set_name(name);
  node.set_op(op);
  (*node.mutable_attr())["T"].set_type(type);
  (*node.mutable_attr())["index"].set_i(index);
  return node;
}

}  // namespace

absl::Status CheckFunctionArgs(const std::string& name,
                               const DataTypeVector& types,
                               const std::vector<Tensor>& args) {
  if (args.size() != types.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "function ", name, " takes ", types.size(), " arguments, got ",
        args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].dtype() != types[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "function ", name, " argument ", i, " must be ",
          DataTypeString(types[i]), ", got ", DataTypeString(args[i].dtype())));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<tensorflow::GraphDef> FunctionCallGraph(
    const tensorflow::NameAttrList& fn, const FunctionLibrary& lib,
    const tensorflow::FunctionDefLibrary& library, const OpRegistry& ops,
    DataTypeVector* arg_types, DataTypeVector* ret_types) {
  const tensorflow::FunctionDef* def = lib.Find(fn.name());
  if (def == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "function ", fn.name(), " is not in the graph's function library"));
  }
  WEFT_ASSIGN_OR_RETURN(*arg_types, SignatureTypes(*def, fn.attr(), false));
  tensorflow::GraphDef graph;
  graph.mutable_versions()->set_producer(kGraphDefVersion);
  *graph.mutable_library() = library;
  std::vector<tensorflow::NodeDef> nodes;
  InlineRequest request;
  request.function = fn.name();
  request.attrs = fn.attr();
  request.prefix = "body";
  request.caller = fn.name();
  for (size_t i = 0; i < arg_types->size(); ++i) {
    const std::string name = absl::StrCat("_arg", i);
    nodes.push_back(MakeNode(name, "_Arg", (*arg_types)[i], static_cast<int>(i)));
    request.inputs.push_back(name);
  }
  WEFT_ASSIGN_OR_RETURN(InlinedBody body,
                        InlineFunctionBody(request, lib, ops, &nodes));
  *ret_types = body.output_types;
  for (size_t i = 0; i < body.outputs.size(); ++i) {
    tensorflow::NodeDef ret = MakeNode(absl::StrCat("_retval", i), "_Retval",
                                       body.output_types[i], static_cast<int>(i));
    ret.add_input(body.outputs[i]);
    for (const std::string& c : body.control_outputs) ret.add_input("^" + c);
    nodes.push_back(std::move(ret));
  }
  for (tensorflow::NodeDef& n : nodes) *graph.add_node() = std::move(n);
  return graph;
}

FunctionRuntime::FunctionRuntime(Options options)
    : options_(std::move(options)), index_(FunctionLibrary::Create(options_.library)) {}

absl::StatusOr<std::shared_ptr<const InstantiatedFunction>>
FunctionRuntime::Instantiate(const tensorflow::NameAttrList& fn, Device* device,
                             ResourceMgr* resources) {
  WEFT_RETURN_IF_ERROR(index_.status());
  DataTypeVector arg_types, ret_types;
  WEFT_ASSIGN_OR_RETURN(
      tensorflow::GraphDef graph_def,
      FunctionCallGraph(fn, *index_, options_.library, *options_.ops,
                        &arg_types, &ret_types));
  absl::StatusOr<std::unique_ptr<Graph>> graph =
      ConvertGraphDefToGraph(graph_def, *options_.ops);
  if (!graph.ok()) {
    return WithContext(graph.status(), absl::StrCat("function ", fn.name()));
  }
  for (Node* n : (*graph)->nodes()) n->set_assigned_device(device->name());
  ExecutorOptions exec;
  exec.device = device;
  exec.kernels = options_.kernels;
  exec.resource_mgr = resources;
  exec.functions = this;
  auto instance = std::make_shared<Instance>(fn.name(), std::move(arg_types),
                                             std::move(ret_types),
                                             shared_from_this());
  absl::StatusOr<std::unique_ptr<Executor>> executor =
      Executor::Create(exec, **graph);
  if (!executor.ok()) {
    return WithContext(executor.status(), absl::StrCat("function ", fn.name()));
  }
  instance->executor_ = *std::move(executor);
  return std::shared_ptr<const InstantiatedFunction>(std::move(instance));
}

Device* FunctionRuntime::LocalDevice(const DeviceSpec& target) const {
  absl::StatusOr<DeviceSpec> task =
      options_.task.empty() ? DeviceSpec() : ParseDeviceSpec(options_.task);
  for (Device* d : options_.devices->devices()) {
    absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(d->name());
    if (!spec.ok()) continue;
    if (!options_.task.empty() && task.ok()) {  // named under `task`
      spec->job = task->job;
      spec->replica = task->replica;
      spec->task = task->task;
    }
    if (target.Matches(*spec)) return d;
  }
  return nullptr;
}

absl::StatusOr<std::shared_ptr<const InstantiatedFunction>>
FunctionRuntime::InstantiateOn(const tensorflow::NameAttrList& fn,
                               const std::string& target) {
  absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(target);
  if (!spec.ok()) {
    return WithContext(spec.status(),
                       absl::StrCat("function ", fn.name(), ": target"));
  }
  if (options_.devices == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "function ", fn.name(), " cannot be placed on '", target,
        "': this runtime was made without devices"));
  }
  if (Device* d = LocalDevice(*spec)) {
    ResourceMgr* resources =
        options_.resources ? options_.resources(d) : nullptr;
    return Instantiate(fn, d,
                       resources != nullptr ? resources : d->resource_manager());
  }
  // Another task's device: only a full task name can be asked.
  if (options_.remote && spec->job && spec->task) {
    DeviceSpec full = *spec;
    if (!full.replica) full.replica = 0;
    if (!full.type) full.type = "CPU";
    if (!full.id) full.id = 0;
    return options_.remote(fn, full);
  }
  std::string names;
  for (const Device* d : options_.devices->devices()) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", d->name());
  }
  return absl::NotFoundError(absl::StrCat(
      "function ", fn.name(), ": no device matches the target '", target,
      "'; this task has ", names,
      options_.remote ? "" : ", and other tasks cannot be reached from here"));
}

}  // namespace weft
