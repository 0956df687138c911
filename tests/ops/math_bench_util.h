// A kernel on its own, for Google Benchmark: builds the node's CPU kernel
// once, then Run() calls Compute() as an executor would (fresh context and
// output entries each time; outputs are allocated, or forwarded when an
// input buffer is free, which the inputs held here never are).
//
//   KernelBench mm(node, {a, b});
//   for (auto _ : state) mm.Run(state);
#ifndef WEFT_TESTS_OPS_MATH_BENCH_UTIL_H_
#define WEFT_TESTS_OPS_MATH_BENCH_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/node_def_util.h"
#include "ops/framework/op_kernel.h"
#include "ops/framework/op_registry.h"
#include "runtime/core/device.h"
#include "runtime/core/tensor.h"

namespace weft {

class KernelBench {
 public:
  // `node`'s data inputs are taken from `inputs`, in order; `options` sizes
  // the device's intra-op pool (one thread: the benchmark's CPU time is all
  // of the kernel's work, which a loaded machine distorts less than the
  // wall time of several threads).
  KernelBench(tensorflow::NodeDef node, const std::vector<Tensor>& inputs,
              const LocalDeviceOptions& options = {})
      : devices_(DeviceMgr::NewLocal(options).value()), inputs_(inputs.size()) {
    node.clear_input();
    for (size_t i = 0; i < inputs.size(); ++i) {
      node.add_input("in" + std::to_string(i));
      inputs_[i].value = inputs[i];
      inputs_[i].has_value = true;
    }
    absl::StatusOr<const OpRegistration*> reg =
        GlobalOpRegistry().LookUp(node.op());
    if (!reg.ok()) {
      status_ = reg.status();
      return;
    }
    AddDefaultsToNodeDef((*reg)->op_def, &node);
    absl::StatusOr<std::unique_ptr<OpKernel>> kernel =
        GlobalKernelRegistry().CreateKernel(node, (*reg)->op_def,
                                            devices_->default_device());
    if (!kernel.ok()) {
      status_ = kernel.status();
      return;
    }
    kernel_ = *std::move(kernel);
    outputs_.resize(kernel_->num_outputs());
  }

  // One Compute(); a failure stops the benchmark with the error.
  void Run(benchmark::State& state) {
    if (!status_.ok()) {
      state.SkipWithError(std::string(status_.message()).c_str());
      return;
    }
    for (TensorEntry& e : outputs_) e.Clear();
    OpKernelContext::Params params;
    params.device = devices_->default_device();
    params.kernel = kernel_.get();
    params.inputs = inputs_.data();
    params.outputs = outputs_.data();
    OpKernelContext ctx(params);
    kernel_->Compute(&ctx);
    if (!ctx.status().ok()) {
      status_ = ctx.status();
      state.SkipWithError(std::string(status_.message()).c_str());
    }
    benchmark::DoNotOptimize(outputs_[0].value.raw_data());
  }

 private:
  std::unique_ptr<DeviceMgr> devices_;
  std::vector<TensorEntry> inputs_;
  std::vector<TensorEntry> outputs_;
  std::unique_ptr<OpKernel> kernel_;
  absl::Status status_;
};

// A NodeDef of `op` with attr T = dtype.
inline tensorflow::NodeDef BenchNode(const std::string& op, DataType dtype) {
  tensorflow::NodeDef node;
  node.set_name("n");
  node.set_op(op);
  (*node.mutable_attr())["T"].set_type(dtype);
  return node;
}

}  // namespace weft

#endif  // WEFT_TESTS_OPS_MATH_BENCH_UTIL_H_
