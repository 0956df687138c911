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
#include "proto/node_def.pb.h"
#include "runtime/device.h"
#include "runtime/tensor.h"

namespace weft {

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
  // are replaced with placeholders named in0, in1, ...
  explicit KernelRunner(tensorflow::NodeDef node);
  ~KernelRunner();

  // Runs the kernel once. Errors: unknown op, invalid node, no kernel, or
  // the kernel's own error. Dead (unset) outputs come back uninitialized.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs);
  // Like Run, with the first input passed as a ref (a legacy variable).
  absl::StatusOr<std::vector<Tensor>> RunWithRefInput(
      Tensor* ref, const std::vector<Tensor>& other_inputs);
  Device* device() { return devices_->default_device(); }

 private:
  absl::StatusOr<std::vector<Tensor>> RunEntries(std::vector<struct TensorEntry>);

  tensorflow::NodeDef node_;
  std::unique_ptr<DeviceMgr> devices_;
  absl::Mutex ref_mu_;
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
