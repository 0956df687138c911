// Test helpers for kernels: build a node, run its CPU kernel once on given
// inputs, compare tensors.
//
//   KernelRunner mm(NodeBuilder("mm", "MatMul").Attr("T", DT_FLOAT)
//                       .Attr("transpose_b", true).Build());
//   absl::StatusOr<std::vector<Tensor>> out =
//       mm.Run({MakeTensor<float>({2, 2}, {1, 2, 3, 4}), ...});
//   ExpectTensorNear(out->at(0), MakeTensor<float>({2, 2}, {...}), 1e-6);
//
// The node gets default attrs and is validated against GlobalOpRegistry(),
// the kernel comes from GlobalKernelRegistry(), as in a real session.
#ifndef WEFT_OPS_TESTING_KERNEL_RUNNER_H_
#define WEFT_OPS_TESTING_KERNEL_RUNNER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "proto/node_def.pb.h"
#include "runtime/core/device.h"
#include "runtime/core/tensor.h"

namespace weft {

class CallFrame;
class OpKernel;

// Builds a NodeDef: NodeBuilder("n", "Op").Input("x").Attr("T", DT_FLOAT).
class NodeBuilder {
 public:
  NodeBuilder(std::string name, std::string op);
  NodeBuilder& Input(std::string input);
  NodeBuilder& Attr(const std::string& name, DataType value);
  NodeBuilder& Attr(const std::string& name, int64_t value);
  NodeBuilder& Attr(const std::string& name, int value) {
    return Attr(name, static_cast<int64_t>(value));
  }
  NodeBuilder& Attr(const std::string& name, float value);
  NodeBuilder& Attr(const std::string& name, bool value);
  NodeBuilder& Attr(const std::string& name, const std::string& value);
  NodeBuilder& Attr(const std::string& name, const char* value) {
    return Attr(name, std::string(value));
  }
  NodeBuilder& Attr(const std::string& name, const Tensor& value);
  NodeBuilder& Attr(const std::string& name, const std::vector<int64_t>& value);
  NodeBuilder& Attr(const std::string& name, const DataTypeVector& value);
  NodeBuilder& ShapeAttr(const std::string& name,
                         const std::vector<int64_t>& dims);
  tensorflow::NodeDef Build() const { return node_; }

 private:
  tensorflow::NodeDef node_;
};

class KernelRunner {
 public:
  // Inputs of the node are filled in by Run(); the NodeDef's own inputs
  // are replaced with placeholders named in0, in1, ... (unless the node
  // already lists exactly as many data inputs as Run() gets: then their
  // names are kept, for kernels whose messages name an input).
  explicit KernelRunner(tensorflow::NodeDef node);
  // Runs on `device` (not owned; must outlive the runner), so several
  // runners can share one device's ResourceMgr (variables).
  KernelRunner(tensorflow::NodeDef node, Device* device);
  ~KernelRunner();

  // Runs the kernel once. Errors: unknown op, invalid node, no kernel, or
  // the kernel's own error. Dead (unset) outputs come back uninitialized;
  // an uninitialized input is passed as dead. The kernel is built on the
  // first run and kept, so stateful kernels (random, variables) continue
  // across runs as they do across a session's steps.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs);
  // Like Run, with the first input passed as a ref (a legacy variable)
  // guarded by `ref_mu` (default: a mutex of the runner's own).
  absl::StatusOr<std::vector<Tensor>> RunWithRefInput(
      Tensor* ref, const std::vector<Tensor>& other_inputs,
      absl::Mutex* ref_mu = nullptr);
  // The call frame _Arg/_Retval kernels see (not owned; default none).
  void set_call_frame(CallFrame* frame) { call_frame_ = frame; }
  Device* device() { return device_; }

 private:
  absl::StatusOr<std::vector<Tensor>> RunEntries(std::vector<struct TensorEntry>);

  tensorflow::NodeDef node_;
  std::unique_ptr<DeviceMgr> devices_;  // null when the device is shared
  Device* device_;
  absl::Mutex ref_mu_;
  CallFrame* call_frame_ = nullptr;
  std::unique_ptr<OpKernel> kernel_;  // built by the first run
  int kernel_inputs_ = -1;            // inputs kernel_ was built for
};

template <typename T>
Tensor MakeTensor(const std::vector<int64_t>& dims, const std::vector<T>& values) {
  Tensor t(DataTypeToEnum<T>::value, TensorShape(dims));
  for (size_t i = 0; i < values.size() && i < static_cast<size_t>(t.NumElements()); ++i) {
    t.data<T>()[i] = values[i];
  }
  return t;
}

// gtest assertions: same dtype and shape, and values equal / within
// `tolerance` (absolute + relative to the expected magnitude).
void ExpectTensorEqual(const Tensor& actual, const Tensor& expected);
void ExpectTensorNear(const Tensor& actual, const Tensor& expected,
                      double tolerance);

}  // namespace weft

#endif  // WEFT_OPS_TESTING_KERNEL_RUNNER_H_
